"""``dagnet.nd.<op>``: a function for every registered operator, made on first use.

No source is generated: each function is an :class:`OpFunction` object
holding the operator's name, with the operator's docstring and a signature
built from its inputs and parameters.  The call convention is MXNet's:

- inputs positionally (NDArrays) or by their input names (``data=``, ``weight=``);
- parameters as keywords, or positionally after the inputs in declaration order;
- ``out=`` writes into existing arrays, ``name=`` is accepted and ignored
  (it names symbols), ``ctx=`` places operators without inputs;
- a variadic operator (``Concat``) gets its count (``num_args``) from the
  number of inputs.

Functions resolve their operator at call time, so a registry rebuilt by
``dagnet.plugins.reset()`` is followed.
"""

from __future__ import annotations

import inspect
from typing import Any

from .. import attribute as _attribute
from .. import plugins as _plugins
from .._errors import OperatorError
from ..operator import UnknownOperatorError, call_signature, get_op, resolve_name
from . import _invoke
from ._ndarray import NDArray

__all__ = ["OpFunction", "function", "call", "Namespace", "UnknownOperatorError"]


def call(op_name: str, *args: Any, out: Any = None, name: str | None = None,
         ctx: Any = None, **kwargs: Any) -> Any:
    """Call operator ``op_name`` with MXNet's convention (see the module docstring)."""
    entry = _invoke._entry(op_name)
    if ctx is None and not entry.var_num_key:
        for arg in args:
            if arg.__class__ is not NDArray:
                break
        else:  # inputs as NDArrays, parameters as keywords: the common case
            if not kwargs:
                return (entry.calls.get(()) or entry.prepare({})).run(list(args), out)
            prepared = entry.prepared(kwargs)
            if prepared is not None:
                return prepared.run(list(args), out)
    op = entry.op
    inputs = []
    index = 0
    while index < len(args) and (args[index] is None or isinstance(args[index], NDArray)):
        if args[index] is not None:
            inputs.append(args[index])
        index += 1
    if index < len(args):
        extra = args[index:]
        if hasattr(extra[0], "list_outputs") and hasattr(extra[0], "tojson"):
            # a Symbol where an input goes: hybrid_forward code calling mx.nd instead of F
            raise TypeError(f"operator {op.name!r}: input {index} must be an NDArray, got the "
                            f"Symbol {extra[0]!r}; in hybrid_forward call F.{op.name}, not "
                            f"mx.nd.{op.name}, so that it works on symbols too")
        if entry.var_num_key:
            raise TypeError(f"operator {op.name!r} takes NDArray inputs positionally and "
                            f"parameters as keywords; got {type(extra[0]).__name__} "
                            f"{extra[0]!r:.60} after its inputs")
        fields = list(entry.fields)
        if len(extra) > len(fields):
            raise TypeError(f"operator {op.name!r} takes its inputs and at most {len(fields)} "
                            f"positional parameter(s) ({', '.join(fields) or 'none'}); "
                            f"got {len(extra)} after the inputs")
        for field, value in zip(fields, extra):
            if field in kwargs:
                raise TypeError(f"operator {op.name!r} got parameter {field!r} both "
                                f"positionally and as a keyword")
            kwargs[field] = value
    named = None
    for key in list(kwargs):
        if key not in entry.fields and _is_attribute(key):
            # a symbol attribute (``__layout__`` from an RNN cell's state_info, ``lr_mult``):
            # an imperative call has no node to keep it on and ignores it, as MXNet's does
            del kwargs[key]
            continue
        value = kwargs[key]
        if isinstance(value, NDArray):
            named = named or {}
            named[key] = kwargs.pop(key)
    if ctx is not None:
        kwargs["ctx"] = ctx
    if named is None:
        for key in [k for k, v in kwargs.items() if v is None and k not in entry.fields]:
            del kwargs[key]  # an optional input passed as None (bias=None)
        return _invoke.invoke(op_name, inputs, kwargs, out)
    return _invoke.invoke(op_name, _place(entry, inputs, named, kwargs), kwargs, out)


def _is_attribute(key: str) -> bool:
    """Whether a keyword is a symbol attribute rather than a parameter."""
    return (key.startswith("__") and key.endswith("__") and len(key) > 4) or \
        key in _attribute.HIDDEN_KEYS


def _place(entry: Any, positional: list, named: dict, kwargs: dict) -> list:
    """Inputs in the operator's order from positional ones and ones given by name."""
    op = entry.op
    params = {k: v for k, v in kwargs.items() if k != "ctx" or "ctx" in entry.fields}
    for key in [k for k, v in params.items() if v is None and k not in entry.fields]:
        del params[key], kwargs[key]  # optional inputs passed as None
    if entry.var_num_key and entry.var_num_key not in params:
        params[entry.var_num_key] = len(positional) + len(named)
    names = entry.prepare(params).in_names
    slots: list[Any] = [None] * len(names)
    for i, array in enumerate(positional):
        if i >= len(slots):
            raise OperatorError(f"operator {op.name!r} expects {len(names)} input(s) "
                                f"({', '.join(names)}), got more")
        slots[i] = array
    for key, array in named.items():
        if key not in names:
            raise TypeError(f"operator {op.name!r} has no input {key!r}; its inputs are "
                            f"{', '.join(names) or 'none'}")
        position = names.index(key)
        if slots[position] is not None:
            raise TypeError(f"operator {op.name!r} got input {key!r} both positionally and by "
                            f"name")
        slots[position] = array
    missing = [n for n, s in zip(names, slots) if s is None]
    if missing:
        raise OperatorError(f"operator {op.name!r} is missing input(s) {', '.join(missing)} "
                            f"(inputs: {', '.join(names)})")
    return slots


class OpFunction:
    """The function ``dagnet.nd.<name>``: calls the registered operator ``<name>``."""

    def __init__(self, name: str, target: str, doc: str):
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = "dagnet.ndarray"
        self.__doc__ = doc
        self._target = target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return call(self._target, *args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        return call_signature(get_op(self._target))

    def __repr__(self) -> str:
        return f"<function dagnet.nd.{self.__name__}>"


_functions: dict[str, OpFunction] = {}
_functions_manager: Any = None


def function(name: str) -> OpFunction:
    """The ``dagnet.nd`` function of operator ``name`` (an :class:`UnknownOperatorError`
    with close names when none is registered)."""
    global _functions_manager
    if _plugins._manager is not _functions_manager:
        _functions.clear()
    fn = _functions.get(name)
    if fn is None:
        target = resolve_name(name, "dagnet.nd")
        _functions_manager = _plugins._manager
        fn = _functions[name] = OpFunction(name, target, get_op(target).docstring())
    return fn


class Namespace:
    """MXNet's operator namespaces: ``nd._internal``, ``nd.op``, ``nd.contrib``, ``nd.linalg``.

    ``nd.contrib.foo`` is the operator ``_contrib_foo``; ``nd._internal`` and
    ``nd.op`` hold every operator under its own name.
    """

    def __init__(self, name: str, prefix: str = ""):
        self.__name__ = f"dagnet.ndarray.{name}"
        self._prefix = prefix
        # name -> (the nd function it was made from, the function under its short name):
        # the same object on every access, as MXNet's module functions are
        self._functions: dict[str, tuple[OpFunction, OpFunction]] = {}

    def __getattr__(self, name: str) -> OpFunction:
        if name.startswith("__"):
            raise AttributeError(name)
        if not self._prefix:  # nd.op.foo / nd._internal.foo are nd.foo itself
            from .. import ndarray

            return getattr(ndarray, name)
        fn = function(self._prefix + name)
        made = self._functions.get(name)
        if made is None or made[0] is not fn:  # new, or the operators were registered anew
            made = self._functions[name] = (fn, OpFunction(name, fn._target, fn.__doc__ or ""))
        return made[1]

    def __dir__(self) -> list[str]:
        prefix = self._prefix
        return sorted(n[len(prefix):] for n in _plugins.ops() if n.startswith(prefix))

    def __repr__(self) -> str:
        return f"<namespace {self.__name__}>"
