"""``dagnet.sym.<op>``: a function for every registered operator, made on first use.

As for ``dagnet.nd``, no source is generated: each function is a
:class:`SymbolFunction` holding the operator's name, with its docstring and
signature; the operator is resolved at call time.
"""

from __future__ import annotations

import inspect
from typing import Any

from .. import plugins as _plugins
from ..operator import call_signature, get_op, resolve_name
from ._compose import apply_op

__all__ = ["Namespace", "SymbolFunction", "function"]


class SymbolFunction:
    """The function ``dagnet.sym.<name>``: applies the registered operator to symbols."""

    def __init__(self, name: str, target: str, doc: str):
        self.__name__ = name
        self.__qualname__ = name
        self.__module__ = "dagnet.symbol"
        self.__doc__ = doc
        self._target = target
        self._hint = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        get_op(self._target)  # an uninstalled plugin's operator fails here, by name
        return apply_op(self._hint if self._hint in _plugins.ops() else self._target,
                        args, kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        # the NDArray signature with ``attr=`` in place of ``out=``, as MXNet's mx.sym has
        params = [p for p in call_signature(get_op(self._target)).parameters.values()
                  if p.name != "out"]
        params.append(inspect.Parameter("attr", inspect.Parameter.KEYWORD_ONLY, default=None))
        return inspect.Signature(params)

    def __repr__(self) -> str:
        return f"<function dagnet.sym.{self.__name__}>"


_functions: dict[str, SymbolFunction] = {}
_functions_manager: Any = None


def function(name: str) -> SymbolFunction:
    """The ``dagnet.sym`` function of operator ``name`` (close names when none exists)."""
    global _functions_manager
    if _plugins._manager is not _functions_manager:
        _functions.clear()
    fn = _functions.get(name)
    if fn is None:
        target = resolve_name(name, "dagnet.sym")
        _functions_manager = _plugins._manager
        fn = _functions[name] = SymbolFunction(name, target, _docstring(get_op(target)))
    return fn


def _docstring(op: Any) -> str:
    """The operator's documentation with inputs typed as Symbols, and ``name``/``attr``
    and the result described."""
    text = op.docstring().replace(" : NDArray\n", " : Symbol\n")
    params, note, rest = text.partition("\n\nNot differentiable")
    return params + (
        "\nname : str, optional\n    Name of the resulting symbol (made from the operator's "
        "name when omitted).\nattr : dict of str to str, optional\n    Attributes of the "
        "resulting symbol (``__key__`` keys, or ctx_group, lr_mult, ...).\n\nReturns\n"
        "-------\nSymbol\n    The result symbol.") + note + rest


class Namespace:
    """MXNet's operator namespaces under ``mx.sym``: ``contrib``, ``linalg``, ``image``,
    ``op`` and ``_internal``.

    ``sym.contrib.foo`` is the operator ``_contrib_foo`` (named ``foo``); ``op`` and
    ``_internal`` hold every operator under its own name.
    """

    def __init__(self, name: str, prefix: str = ""):
        self.__name__ = f"dagnet.symbol.{name}"
        self._prefix = prefix
        # name -> (the sym function it was made from, the function under its short name):
        # the same object on every access, as MXNet's module functions are
        self._functions: dict[str, tuple[SymbolFunction, SymbolFunction]] = {}

    def __getattr__(self, name: str) -> SymbolFunction:
        if name.startswith("__"):
            raise AttributeError(name)
        fn = function(self._prefix + name)
        if not self._prefix:
            return fn
        made = self._functions.get(name)
        if made is None or made[0] is not fn:  # new, or the operators were registered anew
            named = SymbolFunction(name, fn._target, fn.__doc__ or "")
            named._hint = fn._hint
            made = self._functions[name] = (fn, named)
        return made[1]

    def __dir__(self) -> list[str]:
        prefix = self._prefix
        return sorted(n[len(prefix):] for n in _plugins.ops() if n.startswith(prefix))

    def __repr__(self) -> str:
        return f"<namespace {self.__name__}>"
