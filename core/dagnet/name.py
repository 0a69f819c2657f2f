"""Automatic names for symbols (MXNet's ``mx.name``).

A symbol made without ``name=`` is named from a hint -- the operator's name
in lower case -- and a counter per hint: ``fullyconnected0``,
``fullyconnected1``.  ``with NameManager():`` starts fresh counters for a
block; ``with Prefix('net_'):`` also puts a prefix in front of every name
made inside it.  The current manager is per thread.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["NameManager", "Prefix", "current"]


class _CurrentOnClass(type):
    """``NameManager.current``: this thread's manager, readable and settable on the class
    (MXNet's class property)."""

    @property
    def current(cls) -> NameManager:
        return current()

    @current.setter
    def current(cls, manager: NameManager) -> None:
        _state.manager = manager


class NameManager(metaclass=_CurrentOnClass):
    """Makes unique names from hints; use as ``with NameManager():`` to scope counters."""

    def __init__(self) -> None:
        self._counter: dict[str, int] = {}
        self._previous: NameManager | None = None

    def get(self, name: str | None, hint: str) -> str:
        """``name`` when given, else ``hint`` followed by the next number for that hint."""
        if name:
            return name
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return f"{hint}{count}"

    def __enter__(self) -> NameManager:
        self._previous = current()
        _state.manager = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _state.manager = self._previous
        self._previous = None


class Prefix(NameManager):
    """A :class:`NameManager` that puts ``prefix`` in front of every name, given or made."""

    def __init__(self, prefix: str):
        super().__init__()
        self._prefix = prefix

    def get(self, name: str | None, hint: str) -> str:
        return self._prefix + super().get(name, hint)


class _State(threading.local):
    manager: NameManager | None = None


_state = _State()


def current() -> NameManager:
    """The name manager in force on this thread (a process-wide default outside any ``with``)."""
    manager = _state.manager
    if manager is None:
        manager = _state.manager = _default
    return manager


_default = NameManager()
