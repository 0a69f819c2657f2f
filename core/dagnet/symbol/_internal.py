"""``mx.sym._internal`` (MXNet's ``mxnet.symbol._internal``): every operator under its
own name, the internal ones included."""

from __future__ import annotations

from ._frontend import Namespace

_operators = Namespace("_internal")
__getattr__ = _operators.__getattr__
__dir__ = _operators.__dir__
