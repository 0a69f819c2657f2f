"""The dependency engine (MXNet's "Execution Engine").

Push functions with the variables they read and write; the engine runs them
as soon as their dependencies allow, in parallel where they do not conflict::

    import dagnet
    engine = dagnet.engine.current()
    a = engine.new_var()
    engine.push_sync(lambda rctx: ..., dagnet.cpu(), const_vars=[], mutate_vars=[a])
    engine.wait_for_var(a)

Engines are plugins (``naive``, ``threaded``, ``threaded_per_device``); pick one
by argument (:func:`get`/:func:`create`), ``dagnet.config.set(engine=...)``,
``DAGNET_ENGINE`` or MXNet's ``MXNET_ENGINE_TYPE``.
"""

from __future__ import annotations

from ._base import (
    Block,
    Engine,
    FnProperty,
    Operator,
    RunContext,
    Var,
    current_block,
    interruptible_wait,
)
from ._bulk import bulk, bulk_listeners, bulk_state, set_bulk_size
from ._selection import create, current, get, names
from ._tracked import TrackedEngine
from ._workers import WorkerPool

__all__ = [
    "Block",
    "bulk",
    "bulk_listeners",
    "bulk_state",
    "set_bulk_size",
    "Engine",
    "TrackedEngine",
    "WorkerPool",
    "FnProperty",
    "Operator",
    "RunContext",
    "Var",
    "create",
    "current",
    "current_block",
    "get",
    "interruptible_wait",
    "names",
]
