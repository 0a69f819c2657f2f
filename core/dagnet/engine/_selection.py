"""Which engine runs: by argument, by ``dagnet.config``, by environment, by default;
and the process-level lifecycle (exit, fork)."""

from __future__ import annotations

import atexit
import signal
import threading
import time
import weakref

from .. import config, plugins
from .._errors import EngineError, EngineTypeError
from .._fork import ENGINES, at_fork
from ._base import Engine, running_engine
from ._ctrl_c import forget_held_interrupt, install_ctrl_c_handler, protect_engine

__all__ = ["create", "get", "current", "names"]

_lock = threading.RLock()
_shared: dict[str, Engine] = {}
_active: Engine | None = None
_all: weakref.WeakSet[Engine] = weakref.WeakSet()


def names() -> list[str]:
    """The registered engine names."""
    return list(plugins.engines())


def _resolve(name: str | None) -> str:
    if name is None:
        name = config.get("engine")
    elif not isinstance(name, str):
        raise EngineTypeError(f"an engine name must be a string, got {name!r}")
    registry = plugins.engines()
    return registry.resolve(config.canonical_engine_name(name))


def create(name: str | None = None) -> Engine:
    """A new, independent engine instance of the named (or configured) kind."""
    canonical = _resolve(name)
    factory = plugins.engines()[canonical]
    engine = factory()
    if not isinstance(engine, Engine):
        provider = plugins.engines().registration(canonical).provider
        raise EngineError(
            f"engine {canonical!r} from {provider} returned {engine!r}, "
            f"not a dagnet.engine.Engine; fix the plugin's factory")
    protect_engine(type(engine))
    install_ctrl_c_handler()
    _all.add(engine)
    return engine


def get(name: str | None = None) -> Engine:
    """The process's shared engine of the named (or configured) kind."""
    canonical = _resolve(name)
    engine = _shared.get(canonical)
    if engine is None:
        with _lock:
            engine = _shared.get(canonical)
            if engine is None:
                engine = _shared[canonical] = create(canonical)
    return engine


def current() -> Engine:
    """The engine that work goes to now, as configured.

    When the configured engine changes (``with dagnet.config.set(engine=...)``)
    the previous one first finishes its outstanding work, so variables move
    between engines with nothing in flight.  Inside an engine function (a custom
    operator's Python code, say) it is the engine running that function, which
    cannot finish its work while the function waits.
    """
    global _active
    running = running_engine()
    if running is not None:
        return running
    engine = get()
    if engine is not _active:
        with _lock:
            if _active is not None and _active is not engine:
                _active.drain()
            _active = engine
    return engine


def _shutdown_all() -> None:
    # Bounded: a function that never completes must not hang the exit (each
    # engine warns, naming what it abandoned).
    for engine in list(_all):
        try:
            engine.shutdown(timeout=engine.exit_timeout)
        except Exception:  # noqa: S110 - nothing can be reported at interpreter exit
            pass


class _Fork:
    """What the fork handlers share: the engines held, and a Ctrl-C during the wait."""

    engines: list[Engine] = []
    interrupted = False


def _before_fork() -> None:
    # A child must not inherit half-finished work, nor a tracker in the middle of an
    # update: outstanding work gets engine_fork_timeout seconds to finish (MXNet stops
    # its engine around fork, waiting for everything), then each engine is held.
    _Fork.engines = engines = list(_all)
    _Fork.interrupted = False
    deadline = time.monotonic() + float(config.get("engine_fork_timeout"))
    for engine in engines:
        try:
            engine._finish_before_fork(deadline)
        except KeyboardInterrupt:  # wait no more; raised in the parent after the fork
            _Fork.interrupted = True
            deadline = 0.0
    for engine in engines:
        engine._hold_for_fork()


def _after_fork_in_parent() -> None:
    for engine in _Fork.engines:
        engine._release_after_fork()
    _Fork.engines = []
    if _Fork.interrupted:
        signal.raise_signal(signal.SIGINT)


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.RLock()
    forget_held_interrupt()
    for engine in _Fork.engines:
        engine._after_fork_in_child()
    _Fork.engines = []


atexit.register(_shutdown_all)
at_fork(ENGINES, before=_before_fork, after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child)
