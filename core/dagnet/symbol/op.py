"""``mx.sym.op`` (MXNet's ``mxnet.symbol.op``): every operator under its own name."""

from __future__ import annotations

from ._frontend import Namespace

_operators = Namespace("op")
__getattr__ = _operators.__getattr__
__dir__ = _operators.__dir__
