"""``mx.sym.contrib`` (MXNet's ``mxnet.symbol.contrib``): each operator registered as
``_contrib_<name>``, under ``<name>``."""

from __future__ import annotations

from ._frontend import Namespace

_operators = Namespace("contrib", "_contrib_")
__getattr__ = _operators.__getattr__
__dir__ = _operators.__dir__
