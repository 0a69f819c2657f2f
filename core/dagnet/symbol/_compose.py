"""Making symbols: an operator applied to symbols (``mx.sym.FullyConnected(data=x,
num_hidden=10)``) and variables.

An operator's inputs come positionally or by their input names; its
parameters as keywords (or positionally after the inputs).  Inputs not given
become new variables named ``<node>_<input>`` (``fullyconnected0_weight``),
carrying the node's attributes as MXNet's do.  The node is named by
``name=`` or by the current :mod:`dagnet.name` manager from the operator name
the caller used, in lower case.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import attribute as _attribute
from .. import name as _name
from .._errors import DagnetError, OperatorError
from ..operator import DType, Op, get_op
from ._node import Entry, Node, is_hidden_attr

__all__ = ["SymbolArgumentError", "apply_op", "node_attributes", "param_strings",
           "single_entry"]


class SymbolArgumentError(DagnetError, TypeError):
    """A symbol function or method got an argument of the wrong kind: a number where a
    Symbol goes, an input given twice, a name that is not a string."""


def single_entry(symbol: Any, what: str) -> Entry:
    """The one output of ``symbol``; a grouped symbol is an error naming ``what``."""
    outputs = symbol._outputs
    if len(outputs) != 1:
        raise OperatorError(
            f"{what}: a symbol with {len(outputs)} outputs ({', '.join(symbol.list_outputs())}) "
            f"cannot be one input; pick one with symbol[i]")
    return outputs[0]


def param_strings(op: Op, given: dict[str, Any]) -> dict[str, str]:
    """The given parameters as the strings symbol JSON stores (MXNet writes ``str(value)``)."""
    fields = op.params.fields()
    strings = {}
    for key, value in given.items():
        if isinstance(value, str):
            strings[key] = value
        elif key in fields and fields[key].type is DType and value is not None:
            strings[key] = np.dtype(value).name
        else:
            strings[key] = str(value)
    return strings


def node_attributes(op: Op, attr: dict[str, Any]) -> dict[str, str]:
    """The attributes an operator node stores for ``attr`` (from ``attr=`` and the
    :class:`~dagnet.AttrScope`): hidden keys as ``__key__``, values as strings (MXNet
    stores ``str(value)``; an initializer is stored as its JSON, as ``Variable(init=)``
    stores it, so that it can be read back)."""
    stored = {}
    for key, value in attr.items():
        if not isinstance(value, str):
            dumps = getattr(value, "dumps", None)
            value = dumps() if callable(dumps) else str(value)
        key = _attribute.stored_key(key)
        if not is_hidden_attr(key):
            # MXNet hands a plain key to the operator as a parameter, which fails for
            # anything the operator does not declare; say how to make it an attribute.
            raise _attribute.AttributeValueError(
                f"operator {op.name!r}: attribute {key!r} is not a __dunder__ attribute; write "
                f"it as '__{key}__' (plain keys other than {', '.join(_attribute.HIDDEN_KEYS)} "
                f"are not attributes)")
        stored[key] = value
    return stored


def _attributes_in_kwargs(op: Op, kwargs: dict[str, Any]) -> dict[str, str]:
    """Take out of ``kwargs`` the symbol attributes passed as keywords, as MXNet takes them:
    its hidden keys (``lr_mult=0`` is stored as ``__lr_mult__``) and ``__dunder__`` keys,
    unless the operator declares a parameter of that name; values are stored as ``str``."""
    fields = op.params.fields()
    keys = [k for k in kwargs if k not in fields and isinstance(k, str)
            and (k in _attribute.HIDDEN_KEYS or is_hidden_attr(k))]
    return {_attribute.stored_key(k): str(kwargs.pop(k)) for k in keys}


def apply_op(called: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """``mx.sym.<called>(*args, **kwargs)``: a new symbol for the operator ``called`` names."""
    from ._symbol import Symbol

    op = get_op(called)
    name = kwargs.pop("name", None)
    attr = kwargs.pop("attr", None)
    if "out" not in op.params.fields():
        kwargs.pop("out", None)  # MXNet's symbol functions take out= and ignore it
    if attr is not None and not isinstance(attr, dict):
        raise SymbolArgumentError(f"operator {op.name!r}: attr= must be a dict of strings, got "
                                  f"{type(attr).__name__}")
    node_attr = node_attributes(op, _attribute.current().get(attr))
    node_attr.update(_attributes_in_kwargs(op, kwargs))
    positional: list[Any] = []
    index = 0
    while index < len(args) and (args[index] is None or isinstance(args[index], Symbol)):
        positional.append(args[index])
        index += 1
    params = {k: v for k, v in kwargs.items() if not isinstance(v, Symbol)}
    named = {k: v for k, v in kwargs.items() if isinstance(v, Symbol)}
    fields = list(op.params.fields())
    extra = args[index:]
    if extra:
        if op.key_var_num_args or len(extra) > len(fields):
            raise SymbolArgumentError(
                f"operator {op.name!r} takes symbols as inputs and parameters as keywords; got "
                f"{type(extra[0]).__name__} {extra[0]!r:.60}")
        for field, value in zip(fields, extra):
            if field in params:
                raise SymbolArgumentError(f"operator {op.name!r} got parameter {field!r} both "
                                          f"positionally and as a keyword")
            params[field] = value
    # an optional input passed as None (bias=None) is simply absent
    params = {k: v for k, v in params.items() if v is not None or k in fields}
    if op.key_var_num_args and op.key_var_num_args not in params:
        params[op.key_var_num_args] = len([p for p in positional if p is not None]) + len(named)
    attrs = op.parse_params(params)
    node_name = _name.current().get(name, called.lower())
    strings = param_strings(op, params)
    input_names = op.list_inputs(attrs)
    slots: list[Entry | None] = [None] * len(input_names)
    # MXNet's functions take every input an operator may have (Convolution's bias,
    # BilinearResize2D's like): a None for one the parameters leave out is no input
    while len(positional) > len(slots) and positional[-1] is None:
        positional.pop()
    if len(positional) > len(slots):
        raise OperatorError(f"operator {op.name!r} takes {len(slots)} input(s) "
                            f"({', '.join(input_names) or 'none'}), got {len(positional)}")
    for i, symbol in enumerate(positional):
        if symbol is not None:
            slots[i] = single_entry(symbol, f"operator {op.name!r}, input {input_names[i]!r}")
    for key, symbol in named.items():
        if key not in input_names:
            raise SymbolArgumentError(f"operator {op.name!r} has no input {key!r}; its inputs are "
                                      f"{', '.join(input_names) or 'none'}")
        position = input_names.index(key)
        if slots[position] is not None:
            raise SymbolArgumentError(
                f"operator {op.name!r} got input {key!r} both positionally and by name")
        slots[position] = single_entry(symbol, f"operator {op.name!r}, input {key!r}")
    for i, slot in enumerate(slots):
        if slot is None:
            if op.key_var_num_args:
                raise OperatorError(f"operator {op.name!r}: input {i} is missing")
            var = Node(None, f"{node_name}_{input_names[i]}", attr={**strings, **node_attr})
            slots[i] = (var, 0)
        init = op.input_init.get(input_names[i])
        if init is not None and slots[i][0].op is None:  # a variable without its own
            slots[i][0].attr.setdefault("__init__", init)
    node = Node(op, node_name, strings, attrs, slots, node_attr)
    return Symbol([(node, i) for i in range(node.num_visible_outputs())])
