"""What the front ends need to call an operator by name: MXNet's synonyms, and the
Python signature of an operator's function (``dagnet.nd.<op>``, ``dagnet.sym.<op>``)."""

from __future__ import annotations

import inspect
from typing import Any

from .._errors import ParamError, UnknownNameError
from ._param import REQUIRED

__all__ = ["UnknownOperatorError", "resolve_name", "call_signature"]


class UnknownOperatorError(UnknownNameError, AttributeError):
    """``dagnet.nd.<name>`` or ``dagnet.sym.<name>`` for a name no plugin registered (an
    ``AttributeError`` too,
    so ``hasattr`` and ``getattr(nd, name, default)`` work)."""


# MXNet names for operators that a registry may hold only under another name.
_FALLBACK_NAMES = {"concat": "Concat", "split": "SliceChannel", "Stack": "stack",
                   "flatten": "Flatten", "cast": "Cast"}


def resolve_name(name: str, namespace: str) -> str:
    """The registered name to call for ``name`` (itself, or an MXNet synonym); the error
    names the front-end ``namespace`` (``dagnet.nd``) the name was asked of."""
    from .. import plugins
    from . import get_op

    registry = plugins.ops()
    if name in registry:
        return name
    other = _FALLBACK_NAMES.get(name)
    if other is not None and other in registry:
        return other
    try:
        get_op(name)
    except UnknownNameError as error:
        raise UnknownOperatorError(f"{namespace} has no function {name!r}: {error}") from None
    return name  # pragma: no cover - get_op found it after all


def call_signature(op: Any) -> inspect.Signature:
    """The signature of ``op``'s front-end function: inputs, then parameters with their
    defaults, then ``out=`` and ``name=``."""
    kind = inspect.Parameter
    params = []
    if op.key_var_num_args:
        params.append(kind("data", kind.VAR_POSITIONAL))
    else:
        names = _input_names(op)
        params.extend(kind(n, kind.POSITIONAL_OR_KEYWORD, default=None) for n in names)
    after = kind.KEYWORD_ONLY if op.key_var_num_args else kind.POSITIONAL_OR_KEYWORD
    for field_name, field in op.params.fields().items():
        default = kind.empty if field.default is REQUIRED else field.default
        if default is kind.empty and after is kind.POSITIONAL_OR_KEYWORD:
            after = kind.KEYWORD_ONLY  # a required field cannot follow defaults positionally
        params.append(kind(field_name, after, default=default))
    params.append(kind("out", kind.KEYWORD_ONLY, default=None))
    params.append(kind("name", kind.KEYWORD_ONLY, default=None))
    return inspect.Signature(params)


def _input_names(op: Any) -> list[str]:
    """The operator's input names with default parameters (required ones left as None)."""
    try:
        return op.list_inputs(op.params.parse(op.name, {}))
    except ParamError:
        pass
    try:
        attrs = op.params(**{name: (None if field.required else field.default)
                             for name, field in op.params.fields().items()})
        return op.list_inputs(attrs)
    except Exception:  # inputs depend on the value of a required parameter
        return list(op.input_names) if isinstance(op.input_names, (list, tuple)) else []
