"""``mx.nd._internal`` (MXNet's ``mxnet.ndarray._internal``): every operator under its
own name, the internal ones (``_plus_scalar``, ``_copyto``) included."""

from __future__ import annotations

from ._frontend import Namespace

_operators = Namespace("_internal")
__getattr__ = _operators.__getattr__
__dir__ = _operators.__dir__
