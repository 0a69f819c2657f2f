"""How a compute function writes its outputs (MXNet's ``OpReqType``)."""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["OpReqType", "assign", "ALL_REQS"]


class OpReqType(enum.Enum):
    """``NULL``: write nothing; ``WRITE``: overwrite; ``INPLACE``: overwrite an output
    that shares memory with an input; ``ADD``: add to what the output holds."""

    NULL = "null"
    WRITE = "write"
    INPLACE = "inplace"
    ADD = "add"


ALL_REQS = frozenset(OpReqType)


def assign(out: Any, req: OpReqType, value: Any) -> None:
    """Apply ``value`` to ``out`` as ``req`` says (MXNet's ``ASSIGN_DISPATCH``).

    ``value`` may be an array of ``out``'s shape (or broadcastable to it) or a
    scalar; for ``INPLACE`` it may alias ``out``.
    """
    if req is OpReqType.NULL:
        return
    if req is OpReqType.ADD:
        out += value
    elif value is not out:
        out[...] = value
