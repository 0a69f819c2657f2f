"""Operators: the :class:`Op` record, its parameters, write modes and inference
helpers, the three ways of defining one (:class:`OpBuilder`, nnvm style;
:class:`OperatorProperty` + :class:`Operator` through :func:`op_from_property`;
:class:`SimpleOp` for unary and binary operators), and the lookup of
registered operators by name; MXNet's Python custom operators (:class:`CustomOp`,
:class:`CustomOpProp`, :func:`register`) run through the ``Custom`` operator."""

from __future__ import annotations

import difflib

from .._errors import UnknownNameError
from ._builder import OpBuilder, forward_shape, forward_type
from ._calling import UnknownOperatorError, call_signature, resolve_name
from ._custom import (
    CustomOp,
    CustomOpProp,
    CustomParams,
    custom_prop,
    custom_prop_class,
    register,
    registered_custom_ops,
)
from ._gradient import BackwardPlan, BackwardStep, GraphView, NodeFacts, plan_backward
from ._introspect import OperatorArguments, get_all_registered_operators, get_operator_arguments
from ._op import (
    XP,
    Case,
    ComposedGradient,
    Domain,
    Gradient,
    NodeState,
    NoGradient,
    Op,
    OpContext,
    Replay,
    ZeroGradient,
    elemwise_shape,
    elemwise_type,
    merge_dtype,
    merge_shape,
    shape_is_known,
)
from ._param import REQUIRED, DType, Field, NoParams, Params, Shape
from ._property import Operator, OperatorProperty, op_from_property
from ._req import ALL_REQS, OpReqType, assign
from ._simple import GradKind, SimpleOp, SimpleOpEnv

__all__ = [
    "ALL_REQS", "assign", "BackwardPlan", "BackwardStep", "call_signature", "Case",
    "ComposedGradient", "Domain",
    "DType", "elemwise_shape", "elemwise_type", "Field", "forward_shape", "forward_type", "get_op",
    "Gradient", "GradKind", "GraphView", "list_ops", "merge_dtype", "merge_shape", "NodeFacts",
    "NodeState", "NoGradient", "NoParams", "Op", "op_from_property", "OpBuilder", "OpContext",
    "Operator", "Replay",
    "OperatorProperty", "OpReqType", "Params", "plan_backward", "REQUIRED", "resolve_name",
    "Shape", "shape_is_known", "SimpleOp", "SimpleOpEnv", "UnknownOperatorError", "XP",
    "ZeroGradient",
    # MXNet's operator introspection
    "get_all_registered_operators", "get_operator_arguments", "OperatorArguments",
    # MXNet's Python custom operators
    "CustomOp", "CustomOpProp", "CustomParams", "custom_prop", "custom_prop_class", "register",
    "registered_custom_ops",
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
