"""MXNet's operator introspection (``mxnet.operator``): :func:`get_all_registered_operators`
and :func:`get_operator_arguments`, describing arguments the way MXNet's registry does
(``'NDArray-or-Symbol'`` inputs, then parameters as ``"<type>, required"`` or
``"<type>, optional, default=<value>"``)."""

from __future__ import annotations

import collections

from ._calling import _input_names
from ._param import REQUIRED, DType, Field, Shape

__all__ = ["OperatorArguments", "get_all_registered_operators", "get_operator_arguments"]

OperatorArguments = collections.namedtuple("OperatorArguments", ["narg", "names", "types"])

_TYPE_TEXT = {int: "int", float: "float", bool: "boolean", str: "string", Shape: "Shape(tuple)",
              DType: "dtype"}


def get_all_registered_operators() -> list[str]:
    """The name of every registered operator (forward and backward ones)."""
    from .. import plugins

    return list(plugins.ops())


def _field_text(field: Field) -> str:
    if field.choices:
        text = "{" + ", ".join(repr(str(c)) for c in sorted(str(c) for c in field.choices)) + "}"
    else:
        text = _TYPE_TEXT.get(field.type, field.type.__name__)
    if field.optional and field.type is not str:
        text += " or None"
    if field.default is REQUIRED:
        return f"{text}, required"
    return f"{text}, optional, default={field.to_string(field.default)!r}"


def get_operator_arguments(op_name: str) -> OperatorArguments:
    """The inputs and parameters of operator ``op_name``: their number, names and MXNet-style
    type descriptions (an :class:`UnknownOperatorError` names close matches)."""
    from . import get_op

    op = get_op(op_name)
    if op.key_var_num_args:
        names, types = ["data"], ["NDArray-or-Symbol[]"]
    else:
        names = list(_input_names(op))
        types = ["NDArray-or-Symbol"] * len(names)
    for name, field in op.params.fields().items():
        names.append(name)
        types.append(_field_text(field))
    return OperatorArguments(len(names), names, types)
