"""Operators: the :class:`Op` record, its parameters, write modes and inference
helpers, and the lookup of registered operators by name."""

from __future__ import annotations

import difflib

from .._errors import UnknownNameError
from ._op import (
    XP,
    Case,
    Domain,
    Gradient,
    NoGradient,
    Op,
    OpContext,
    ZeroGradient,
    elemwise_shape,
    elemwise_type,
    merge_dtype,
    merge_shape,
    shape_is_known,
)
from ._param import REQUIRED, DType, Field, NoParams, Params, Shape
from ._req import ALL_REQS, OpReqType, assign

__all__ = [
    "ALL_REQS", "Case", "DType", "Domain", "Field", "Gradient", "NoGradient", "NoParams", "Op",
    "OpContext", "OpReqType", "Params", "REQUIRED", "Shape", "XP", "ZeroGradient", "assign",
    "elemwise_shape", "elemwise_type", "get_op", "list_ops", "merge_dtype", "merge_shape",
    "shape_is_known",
]


def get_op(name: str) -> Op:
    """The registered operator ``name`` (or an alias); the error lists close names and providers."""
    from .. import plugins

    registry = plugins.ops()
    if name in registry:
        return registry[name]
    close = difflib.get_close_matches(name, list(registry), n=5) if isinstance(name, str) else []
    providers = sorted({str(r.provider) for r in registry.registrations()})
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise UnknownNameError(
        f"unknown operator {name!r}{hint} ({len(registry)} operators are registered, from "
        f"{'; '.join(providers) or 'no plugin'}; `dagnet ops` lists them; an operator from "
        f"another package appears once that package is installed)")


def list_ops() -> list[str]:
    """Every registered operator name, sorted."""
    from .. import plugins

    return list(plugins.ops())
