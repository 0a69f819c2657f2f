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

Listeners (:func:`add_listener`) hear of every function any engine runs, with
its device and timing (what ``dagnet.profiler`` records); :func:`run_inline`
runs a thread's pushes on that thread (custom operators written in Python).

Ctrl-C never lands inside the engine's bookkeeping: dagnet's SIGINT handler
(:func:`ctrl_c_handler`, installed when an engine is made, unless the program
has a SIGINT handler of its own) holds it back until the engine code is left,
or a wait reaches its next slice; the functions pushed stay interruptible.
"""

from __future__ import annotations

from ._base import (
    Block,
    Engine,
    Failure,
    FnProperty,
    Operator,
    RunContext,
    Var,
    current_block,
    interruptible_wait,
    running_engine,
)
from ._bulk import bulk, bulk_listeners, bulk_state, set_bulk_size
from ._ctrl_c import ctrl_c_handler, held_interrupts, install_ctrl_c_handler, is_ctrl_c
from ._inline import inline_active, run_inline
from ._listener import (
    Execution,
    add_listener,
    clock,
    current_scope,
    execution_scope,
    listening,
    remove_listener,
    report,
)
from ._selection import create, current, get, names
from ._tracked import TrackedEngine
from ._workers import WorkerPool

__all__ = [
    "add_listener",
    "Block",
    "bulk",
    "bulk_listeners",
    "bulk_state",
    "clock",
    "ctrl_c_handler",
    "current_scope",
    "Execution",
    "execution_scope",
    "held_interrupts",
    "inline_active",
    "install_ctrl_c_handler",
    "is_ctrl_c",
    "listening",
    "remove_listener",
    "report",
    "run_inline",
    "set_bulk_size",
    "Engine",
    "Failure",
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
    "running_engine",
]
