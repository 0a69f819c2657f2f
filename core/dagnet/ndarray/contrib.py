"""``mx.nd.contrib`` (MXNet's ``mxnet.ndarray.contrib``): each operator registered
as ``_contrib_<name>``, under ``<name>``, and MXNet's Python functions of the module
(the AdamW updates, the control flow ``foreach``, ``while_loop``, ``cond``)."""

from __future__ import annotations

from ._contrib_updates import (
    adamw_update,
    mp_adamw_update,
    multi_adamw_update,
    multi_mp_adamw_update,
)
from ._control_flow import cond, foreach, while_loop
from ._frontend import Namespace

__all__ = ["adamw_update", "cond", "foreach", "mp_adamw_update", "multi_adamw_update",
           "multi_mp_adamw_update", "while_loop"]

_operators = Namespace("contrib", "_contrib_")
__getattr__ = _operators.__getattr__


def __dir__() -> list[str]:
    return sorted(set(_operators.__dir__()) | set(__all__))
