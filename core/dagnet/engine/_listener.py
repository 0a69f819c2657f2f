"""Listening to the engine: a record of every function an engine runs (its name, device,
start and end), for profilers and tracers.

Off by default, and then it costs each run one test of an empty tuple.  Every
engine reports through :meth:`Engine._execute`, so a listener hears all of
them alike::

    def show(record):
        print(record.name, record.ctx, record.end - record.start)

    dagnet.engine.add_listener(show)

A listener is called on the thread that ran the function, right after it
returned; it must be quick and must not raise (an exception it raises is
dropped with a warning, so that one faulty listener cannot fail the work).
"""

from __future__ import annotations

import contextlib
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from .._errors import EngineTypeError

__all__ = ["Execution", "add_listener", "remove_listener", "listening", "report",
           "execution_scope", "current_scope", "clock"]

clock = time.perf_counter
"""The clock of :attr:`Execution.start` and :attr:`Execution.end` (seconds)."""


class Execution(NamedTuple):
    """One function an engine ran.

    ``name``: the name given at push (an operator's name for operator calls);
    ``ctx``: the device; ``prop``: its :class:`FnProperty`; ``start``/``end``:
    :data:`clock` readings around the call (for a function pushed with
    ``push_async``, around the call, not until ``on_complete``); ``thread``:
    the ident of the thread that ran it; ``failed``: whether it raised;
    ``scope``: the innermost :func:`execution_scope` open on that thread.
    """

    name: str
    ctx: Any
    prop: Any
    start: float
    end: float
    thread: int
    failed: bool
    scope: str | None


_listeners: tuple[Callable[[Execution], None], ...] = ()
_lock = threading.Lock()


def add_listener(listener: Callable[[Execution], None]) -> None:
    """Call ``listener(record)`` for every function any engine runs from now on."""
    global _listeners
    if not callable(listener):
        raise EngineTypeError(f"add_listener: a listener must be callable with one Execution "
                              f"record, got {listener!r}")
    with _lock:
        _listeners = (*_listeners, listener)


def remove_listener(listener: Callable[[Execution], None]) -> None:
    """Stop calling ``listener``; removing one that is not listening is an error."""
    global _listeners
    with _lock:
        if listener not in _listeners:
            raise EngineTypeError(f"remove_listener: {listener!r} is not listening; "
                                  f"add it with add_listener first")
        items = list(_listeners)
        items.remove(listener)
        _listeners = tuple(items)


def listening() -> bool:
    """Whether any listener is registered (to skip preparing a record nobody hears)."""
    return bool(_listeners)


def report(record: Execution) -> None:
    """Hand ``record`` to every listener.  Engines call it for each function they run;
    code that times a part of a function by itself (a custom operator's Python
    code, say) may report that part too."""
    for listener in _listeners:
        try:
            listener(record)
        except Exception as error:  # a listener must never fail the engine's work
            warnings.warn(f"engine listener {listener!r} raised {type(error).__name__}: "
                          f"{error}; the record was dropped for it", RuntimeWarning,
                          stacklevel=2)


class _Scope(threading.local):
    name: str | None = None


_scope = _Scope()


def current_scope() -> str | None:
    """The innermost :func:`execution_scope` open on this thread."""
    return _scope.name


@contextlib.contextmanager
def execution_scope(name: str) -> Iterator[None]:
    """Mark what this thread runs inside as part of ``name``: the records of functions
    run on this thread meanwhile carry ``scope=name`` (a custom operator's own
    operator calls, run inline, are reported as its parts)."""
    if not isinstance(name, str):
        raise EngineTypeError(f"execution_scope: name must be a string, got {name!r}")
    previous = _scope.name
    _scope.name = name
    try:
        yield
    finally:
        _scope.name = previous

