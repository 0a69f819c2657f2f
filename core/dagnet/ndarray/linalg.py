"""``mx.nd.linalg`` (MXNet's ``mxnet.ndarray.linalg``): each operator registered as
``_linalg_<name>``, under ``<name>``."""

from __future__ import annotations

from ._frontend import Namespace

_operators = Namespace("linalg", "_linalg_")
__getattr__ = _operators.__getattr__
__dir__ = _operators.__dir__
