"""``mx.sym.contrib`` (MXNet's ``mxnet.symbol.contrib``): each operator registered as
``_contrib_<name>``, under ``<name>``, and MXNet's control flow (``foreach``,
``while_loop``, ``cond``)."""

from __future__ import annotations

from ._control_flow import cond, foreach, while_loop
from ._frontend import Namespace

__all__ = ["cond", "foreach", "while_loop"]

_operators = Namespace("contrib", "_contrib_")
__getattr__ = _operators.__getattr__


def __dir__() -> list[str]:
    return sorted(set(_operators.__dir__()) | set(__all__))
