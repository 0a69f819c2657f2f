"""Attribute scopes (MXNet's ``mx.AttrScope``): attributes given to every symbol made
inside a ``with`` block, such as ``ctx_group`` for model-parallel placement or
``lr_mult``.

Keys are stored as given, except the few that MXNet treats as hidden
(:data:`HIDDEN_KEYS`: ``ctx_group``, ``lr_mult``, ``wd_mult``, ...), which a
symbol stores as ``__key__`` and also lists under the plain name.  Other
attributes meant for operator nodes should be written ``__key__`` too:
a plain key on an operator is taken for one of its parameters.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Any

from ._errors import DagnetError

__all__ = ["AttrScope", "AttributeValueError", "HIDDEN_KEYS", "check_values", "current",
           "stored_key"]

# The attributes MXNet stores as ``__key__`` even when given as ``key`` (nnvm's hidden keys).
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
               "profiler_scope")


class AttributeValueError(DagnetError, ValueError):
    """An attribute that a symbol cannot store: a value that is not a string (attributes
    are strings, as in symbol JSON), or a plain key where a ``__key__`` is needed."""


def stored_key(key: str) -> str:
    """The key an attribute is stored under: ``__lr_mult__`` for ``lr_mult`` and the other
    :data:`HIDDEN_KEYS`, the key itself otherwise."""
    return f"__{key}__" if key in HIDDEN_KEYS else key


def check_values(attrs: dict[str, Any], what: str) -> None:
    """Raise :class:`AttributeValueError` unless every value in ``attrs`` is a string."""
    for key, value in attrs.items():
        if not isinstance(value, str):
            raise AttributeValueError(f"{what}: attribute {key}={value!r} is not a string; "
                                      f"attribute values are strings (pass {str(value)!r})")


class _CurrentOnClass(type):
    """``AttrScope.current``: this thread's scope, readable and settable on the class
    (MXNet's class property)."""

    @property
    def current(cls) -> AttrScope:
        return current()

    @current.setter
    def current(cls, scope: AttrScope) -> None:
        _state.scope = scope


class AttrScope(metaclass=_CurrentOnClass):
    """``with AttrScope(ctx_group='dev1'):`` attaches ``ctx_group='dev1'`` (stored as
    ``__ctx_group__``) to every symbol created inside the block; a nested scope adds
    to the outer one, its own values winning."""

    #: How many control-flow subgraphs (``foreach``, ``while_loop``'s ``cond``/``func``,
    #: ``cond``'s ``pred``/``then``/``else``) have been traced under each name, as MXNet
    #: counts them: the n-th subgraph named ``x`` is called ``x<n>``.  Assign a new
    #: ``defaultdict(int)`` to start counting afresh.
    _subgraph_names: defaultdict[str, int] = defaultdict(int)

    def __init__(self, **attrs: str):
        check_values(attrs, "AttrScope")
        self._attr = dict(attrs)
        self._previous: AttrScope | None = None

    def get(self, attr: dict[str, str] | None) -> dict[str, str]:
        """The scope's attributes updated with ``attr`` (the given ones win)."""
        merged = dict(self._attr)
        if attr:
            merged.update(attr)
        return merged

    def __enter__(self) -> AttrScope:
        self._previous = current()
        self._attr = {**self._previous._attr, **self._attr}
        _state.scope = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.scope = self._previous
        self._previous = None


class _State(threading.local):
    scope: AttrScope | None = None


_state = _State()
_empty = AttrScope()


def current() -> AttrScope:
    """The attribute scope in force on this thread."""
    return _state.scope or _empty
