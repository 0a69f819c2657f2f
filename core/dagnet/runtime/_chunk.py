"""What arrays stand on: the engine work goes to, and the chunk -- one storage
block and the engine variable that orders every use of it.

A chunk is shared by an array and all its views.  When the last of them is
gone, the chunk asks the engine to delete its variable; the deletion runs
after every function already pushed on the variable, and frees the block
then (MXNet's ``NDArray::Chunk`` destructor does the same).
"""

from __future__ import annotations

import atexit
import ctypes
import gc
import sys
import threading
from typing import Any

import numpy as np

from .. import config as _config
from .. import engine as _engine_module
from ..context import Context
from ..storage import Handle
from ._bulk import EngineFunction, bulk_function
from ._device import Device

__all__ = ["current_engine", "pushing_engine", "bulk_or_push", "flush_bulk", "Chunk",
           "adopt_host_buffer", "new_chunk", "flush_graveyard"]

_NORMAL = _engine_module.FnProperty.NORMAL


# -- the engine, without re-reading the configuration on every call --------------
#
# ``dagnet.engine.current()`` consults config (scopes, environment) on every call,
# which costs more than a small operator.  The answer can only change when a
# ``config.set`` scope is entered or left or a global value is set, so it is kept
# until the innermost scope or the global engine value changes.  (Changing
# DAGNET_ENGINE in os.environ after the first array operation is not noticed.)
_cache_generation = -1
_cache_engine: Any = None


def current_engine() -> Any:
    """The engine that array work goes to now (what ``dagnet.engine.current()`` says).

    Operator calls this thread bundled (:func:`bulk_or_push`) are pushed first, so
    whatever the caller pushes or waits for comes after them."""
    if _pending.steps:
        flush_bulk()
    return pushing_engine()


def pushing_engine() -> Any:
    """:func:`current_engine` without pushing the bundled calls first: for the
    operator call that may join the bundle."""
    global _cache_generation, _cache_engine
    if len(_graveyard) >= _GRAVEYARD_BATCH and not _collecting:
        flush_graveyard()
    generation = _config.generation()
    eng = _cache_engine
    if generation == _cache_generation and eng is not None:
        return eng
    eng = _engine_module.current()  # finishes the previous engine's work if it changed
    if _engine_module.running_engine() is None:  # not one engine function's own choice
        _cache_generation, _cache_engine = generation, eng
    return eng


# -- bulk execution of operator calls (MXNet's engine.bulk) --------------------------
class _Pending(threading.local):
    """This thread's bundled operator calls, the engine they go to, and the arrays they
    use: held until the bundle is pushed, so their memory cannot be freed (and handed
    out again) before the functions using it are on the engine."""

    steps: list | None = None
    held: list | None = None
    ctx: Any = None
    engine: Any = None


_pending = _Pending()
_bulk_state = _engine_module.bulk_state


def bulk_or_push(eng: Any, fn: Any, ctx: Any, reads: list, writes: list, name: str,
                 arrays: list) -> None:
    """Push an operator call, or add it to this thread's bundle when
    ``dagnet.engine.set_bulk_size`` asks for bundles; ``arrays`` are the arrays it uses."""
    size = _bulk_state.size
    if size <= 1:
        eng.push_sync(fn, ctx, reads, writes, _NORMAL, 0, name)
        return
    pending = _pending
    if pending.steps and (ctx != pending.ctx or eng is not pending.engine):
        flush_bulk()
    if not pending.steps:
        pending.steps, pending.held, pending.ctx, pending.engine = [], [], ctx, eng
    pending.steps.append(EngineFunction(fn, reads, writes, name))
    pending.held.extend(arrays)
    if len(pending.steps) >= size:
        flush_bulk()


def flush_bulk() -> None:
    """Push this thread's bundled operator calls as one engine function."""
    pending = _pending
    steps, held = pending.steps, pending.held
    if not steps:
        return
    pending.steps = pending.held = None
    merged = bulk_function(steps, "operator")
    pending.engine.push_sync(merged.fn, pending.ctx, merged.reads, merged.writes, _NORMAL, 0,
                             merged.name)
    del held  # the arrays may go now: their uses are on the engine


_engine_module.bulk_listeners.append(flush_bulk)


# -- chunks --------------------------------------------------------------------------
_exiting = False

# A dying chunk does not push its own deletion: it joins the graveyard, and the
# graveyard is deleted with one engine function per device once it holds
# _GRAVEYARD_BATCH chunks or _GRAVEYARD_BYTES bytes, and at waitall().  The
# byte bound keeps large blocks cycling through the pool while still hot in
# cache, as numpy's own allocator would.  One push per chunk would double
# the engine work of `x = x + y`.  Nothing is pushed while the cyclic garbage
# collector runs: a collection can start at any allocation, including inside
# the storage pool's or a resource's lock, and on the naive engine the deletion
# (and the free) would run inline and take that lock again.
_GRAVEYARD_BATCH = 64
_GRAVEYARD_BYTES = 1 << 20
_graveyard: list[tuple[Any, Device, Any]] = []
_graveyard_bytes = 0
_collecting = False


def _gc_phase(phase: str, info: dict) -> None:
    global _collecting
    _collecting = phase == "start"


gc.callbacks.append(_gc_phase)


def flush_graveyard() -> None:
    """Delete every chunk that died since the last flush (their blocks return to the pool
    once every function using them has run)."""
    global _graveyard, _graveyard_bytes
    dead, _graveyard, _graveyard_bytes = _graveyard, [], 0
    if not dead:
        return
    eng = _cache_engine if _cache_engine is not None else _engine_module.current()
    by_device: dict[Device, list[tuple[Any, Any]]] = {}
    for var, dev, handle in dead:
        by_device.setdefault(dev, []).append((var, handle))
    for dev, items in by_device.items():
        eng.delete_vars([var for var, _ in items], dev.ctx,
                        _freer(dev.pool, [handle for _, handle in items]))


def _mark_exiting() -> None:
    # Registered after the engine's own exit hook, so it runs first: from here on a
    # dying chunk just drops its block (the process is ending) instead of pushing
    # work to an engine that is shutting down.
    global _exiting
    _exiting = True


atexit.register(_mark_exiting)


def _freer(pool: Any, handles: list[Any]):
    def free(run_ctx: Any) -> None:
        for handle in handles:
            if handle.pool is pool:  # adopted memory stays with its owner
                pool.free(handle)

    return free


class Chunk:
    """One storage block and its engine variable, shared by an array and its views.

    ``nbytes`` is the size the arrays use (the block may be larger: its pool
    bucket).  ``dev`` is the :class:`Device` the block lives on.  ``recorded``
    counts the live recorded graphs that hold arrays on this block (writing
    into it while recording is refused then).
    """

    __slots__ = ("handle", "var", "dev", "nbytes", "recorded", "__weakref__")

    def __init__(self, handle: Any, var: Any, dev: Device, nbytes: int):
        self.handle = handle
        self.var = var
        self.dev = dev
        self.nbytes = nbytes
        self.recorded = 0

    @property
    def ctx(self) -> Context:
        return self.dev.ctx

    def __del__(self) -> None:
        handle = getattr(self, "handle", None)
        if handle is None or _exiting:
            return
        self.handle = None
        global _graveyard_bytes
        _graveyard.append((self.var, self.dev, handle))
        _graveyard_bytes += handle.size
        if (len(_graveyard) >= _GRAVEYARD_BATCH or _graveyard_bytes >= _GRAVEYARD_BYTES) \
                and not _collecting:
            try:
                flush_graveyard()
            except Exception:  # at interpreter teardown modules are half gone: drop it
                if not sys.is_finalizing():
                    raise

    def __repr__(self) -> str:
        return f"<Chunk {self.nbytes}B on {self.dev.ctx} var={self.var.name}>"


def adopt_host_buffer(buffer: Any, dev: Device, eng: Any | None = None) -> Chunk:
    """A chunk over host memory someone else owns (``buffer``: a C-contiguous numpy
    array) on a numpy device: no pool block is taken, and when the chunk dies the memory
    simply stays with its owner."""
    if not dev.numpy:
        raise ValueError(f"only a host (numpy) device can share a numpy buffer, not {dev.ctx}")
    if buffer.nbytes:
        # A raw view of the memory that does not inherit the owner's flags (the owner
        # may be made read-only for its own users) and keeps the owner alive.
        raw = (ctypes.c_uint8 * buffer.nbytes).from_address(buffer.ctypes.data)
        raw._owner = buffer
        flat = np.ctypeslib.as_array(raw)
    else:
        flat = np.empty(0, np.uint8)
    handle = Handle(-1, flat.nbytes, flat.nbytes, dev.ctx, flat, True, None)
    var = (eng or pushing_engine()).new_var()
    return Chunk(handle, var, dev, flat.nbytes)


def new_chunk(nbytes: int, dev: Device, eng: Any | None = None) -> Chunk:
    """A chunk of ``nbytes`` on ``dev`` with a fresh engine variable."""
    handle = dev.pool.alloc(nbytes)
    var = (eng or pushing_engine()).new_var()  # a new variable orders nothing yet
    return Chunk(handle, var, dev, nbytes)
