"""Testing Ctrl-C: one SIGINT into a blocking call, and a storm of them.

:func:`interrupted` runs a call that blocks on the main thread, sends SIGINT
(what Ctrl-C sends) after a moment, and returns the ``KeyboardInterrupt`` the
call raised, failing the test unless it came within :data:`PROMPT` seconds.

:func:`ctrl_c_storm` is what the engine conformance suite runs on every engine:
the main thread and ``helpers`` other threads push random synchronous and
asynchronous functions reading and writing a few variables, the main thread
waits on one now and then, and a sender thread interrupts the main thread
(SIGINT, as Ctrl-C does) every millisecond or so.  The main thread catches each
``KeyboardInterrupt`` and goes on.  Afterwards :class:`StormRun` tells what
happened, and :func:`check_storm` checks that the engine came out of it whole.

Each function writes its results and a record of what it read in one
``dict.update`` call, which an interrupt cannot split: a function either
completed, and left its record, or wrote nothing.
"""

from __future__ import annotations

import gc
import itertools
import queue
import random
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

import dagnet
from dagnet.engine import Engine, RunContext

__all__ = [
    "PROMPT", "StormOp", "StormRun", "check_storm", "ctrl_c_storm", "interrupted",
    "main_thread_with_ctrl_c",
]

PROMPT = 2.0
"""Seconds within which Ctrl-C (SIGINT) must raise KeyboardInterrupt in a blocking call."""

_GUARD = 10.0  # seconds a wait here may take before the test fails instead of hanging


def main_thread_with_ctrl_c() -> threading.Thread:
    """The main thread, which must be the running one and have a SIGINT handler raising
    KeyboardInterrupt (dagnet's or Python's): else the test is skipped."""
    main = threading.main_thread()
    if threading.current_thread() is not main:
        pytest.skip("signals are delivered to the main thread only")
    if signal.getsignal(signal.SIGINT) not in (signal.default_int_handler,
                                               dagnet.engine.ctrl_c_handler):
        pytest.skip("SIGINT does not raise KeyboardInterrupt here (its handler was replaced)")
    return main


def interrupted(call: Callable[[], object], delay: float = 0.2) -> KeyboardInterrupt:
    """Run ``call()``, which must block, on the main thread; send the process
    SIGINT (Ctrl-C) from a timer after ``delay`` seconds and return the
    KeyboardInterrupt it raised, within :data:`PROMPT` seconds of the signal.
    ``call`` must bound its own wait (a timeout), so that a wait Ctrl-C cannot
    interrupt fails the test instead of hanging it."""
    main = main_thread_with_ctrl_c()
    sent = threading.Event()

    def send() -> None:
        sent.set()
        signal.pthread_kill(main.ident, signal.SIGINT)

    timer = threading.Timer(delay, send)
    start = time.monotonic()
    timer.start()
    try:
        call()
        timer.cancel()
        timer.join(_GUARD)
        if sent.is_set():
            time.sleep(1.0)  # the signal came late: let it land here, not in pytest
    except KeyboardInterrupt as interrupt:
        late = time.monotonic() - start - delay
        timer.join(_GUARD)
        assert late < PROMPT, f"KeyboardInterrupt raised {late:.2f}s after SIGINT"
        return interrupt
    pytest.fail(f"{call} returned: it did not block, or Ctrl-C did not interrupt it")


@dataclass(frozen=True)
class StormOp:
    """One pushed function: the variables it reads and writes, sync or async."""

    reads: tuple[int, ...]
    writes: tuple[int, ...]
    is_async: bool

    @property
    def used(self) -> tuple[int, ...]:
        return tuple(sorted(set(self.reads) | set(self.writes)))


@dataclass
class StormRun:
    """What a storm did.

    ``ops[i]`` is the ``i``-th function pushed; ``state`` holds each variable's
    value (key: its index) and, for every function that completed, ``("done",
    i) -> (tick, seen)``: when it started and the values it read.
    """

    num_vars: int
    ops: dict[int, StormOp] = field(default_factory=dict)
    state: dict[Any, Any] = field(default_factory=dict)
    signals: int = 0  # SIGINTs sent
    interrupts: int = 0  # KeyboardInterrupts the main thread caught
    held: int = 0  # interrupts the engine held back (they landed in its own code)
    reported: int = 0  # failures the waits reported (functions a Ctrl-C interrupted)
    final_ops: tuple[int, ...] = ()

    @property
    def pushes(self) -> int:
        return len(self.ops)

    def initial(self, var: int) -> int:
        return 1000 + var


def _mix(seen: tuple[int, ...], index: int, var: int) -> int:
    acc = 31 * index + var + 7
    for value in seen:
        acc = (acc * 1_000_003 + value) % 2_147_483_647
    return acc


class _Storm:
    def __init__(self, engine: Engine, num_vars: int, seed: int):
        self.engine = engine
        self.run = StormRun(num_vars)
        self.run.state.update({k: self.run.initial(k) for k in range(num_vars)})
        self.variables = [engine.new_var(f"storm{k}") for k in range(num_vars)]
        self.ticks = itertools.count()
        self.indices = itertools.count()
        self.seed = seed
        self.completions: queue.SimpleQueue[Callable[..., None] | None] = queue.SimpleQueue()

    def function(self, index: int, op: StormOp) -> Callable[..., None]:
        state, used = self.run.state, op.used

        def compute() -> None:
            tick = next(self.ticks)
            seen = tuple(state[k] for k in used)
            update: dict[Any, Any] = {k: _mix(seen, index, k) for k in set(op.writes)}
            update["done", index] = (tick, seen)
            state.update(update)  # one call: all of it or nothing

        if not op.is_async:
            return lambda run_ctx: compute()

        def async_fn(run_ctx: RunContext, on_complete: Callable[..., None]) -> None:
            compute()
            self.completions.put(on_complete)  # completed on another thread

        return async_fn

    def push_random(self, rng: random.Random) -> None:
        num_vars = self.run.num_vars
        op = StormOp(tuple(rng.sample(range(num_vars), rng.randint(0, 2))),
                     tuple(rng.sample(range(num_vars), rng.randint(1, 2))),
                     rng.random() < 0.25)
        index = next(self.indices)
        self.run.ops[index] = op
        push = self.engine.push_async if op.is_async else self.engine.push_sync
        push(self.function(index, op), dagnet.cpu(),
             [self.variables[k] for k in op.reads], [self.variables[k] for k in op.writes],
             name=f"storm_op{index}")

    def complete_async(self) -> None:
        while True:
            on_complete = self.completions.get()
            if on_complete is None:
                return
            try:
                on_complete()
            except dagnet.EngineError:
                pass  # a Ctrl-C interrupted the function after it handed this over

    def helper(self, number: int, stop: threading.Event) -> None:
        rng = random.Random(self.seed * 100 + number)
        while not stop.is_set():
            self.push_random(rng)
            if rng.random() < 0.05:
                time.sleep(0.001)

    def main_step(self, rng: random.Random) -> None:
        for _ in range(rng.randint(1, 8)):
            self.push_random(rng)
        if rng.random() < 0.2:
            try:
                self.engine.wait_for_var(rng.choice(self.variables), timeout=_GUARD)
            except dagnet.OperatorFailedError:
                self.run.reported += 1


def ctrl_c_storm(engine: Engine, *, num_vars: int = 5, helpers: int = 2,
                 min_signals: int = 100, min_held: int = 5, max_seconds: float = 8.0,
                 seed: int = 0) -> StormRun:
    """Storm ``engine`` (see the module's docstring) until at least ``min_signals``
    SIGINTs were sent and ``min_held`` of them landed in the engine's own code, or
    ``max_seconds`` passed; then run one more function on every variable, wait for
    everything, and report.  Runs on the main thread (else the test is skipped)."""
    main = main_thread_with_ctrl_c()
    storm = _Storm(engine, num_vars, seed)
    run = storm.run
    rng = random.Random(seed)
    stop = threading.Event()
    sent_all = threading.Event()
    held_before = dagnet.engine.held_interrupts()

    go = threading.Event()

    def send() -> None:
        # no SIGINT before the main thread is past starting this thread (Thread.start
        # waits on a lock: an interrupt there would reach the harness, not the engine)
        go.wait()
        time.sleep(0.01)
        sender_rng = random.Random(seed + 1)
        deadline = time.monotonic() + max_seconds
        while time.monotonic() < deadline and not (
                run.signals >= min_signals
                and dagnet.engine.held_interrupts() - held_before >= min_held):
            time.sleep(sender_rng.uniform(0.0003, 0.003))
            signal.pthread_kill(main.ident, signal.SIGINT)
            run.signals += 1
        sent_all.set()

    completer = threading.Thread(target=storm.complete_async, daemon=True,
                                 name="storm-completer")
    helper_threads = [threading.Thread(target=storm.helper, args=(n, stop), daemon=True,
                                       name=f"storm-helper-{n}") for n in range(helpers)]
    sender = threading.Thread(target=send, daemon=True, name="storm-sender")
    # A Ctrl-C that lands in a finalizer is lost (Python reports it as unraisable, and
    # pytest fails the test for it): no collection of other code's garbage meanwhile.
    gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    try:
        completer.start()
        for thread in helper_threads:
            thread.start()
        sender.start()
        go.set()
        _storm_main_thread(storm, rng, sent_all)
    finally:
        if collecting:
            gc.enable()
    stop.set()
    for thread in helper_threads:
        thread.join(_GUARD)
    run.held = dagnet.engine.held_interrupts() - held_before

    # The engine afterwards: every failure reported once, then new work everywhere.
    _drain(engine, storm)
    first_final = next(storm.indices)
    final = StormOp(tuple(range(num_vars)), tuple(range(num_vars)), False)
    run.ops[first_final] = final
    engine.push_sync(storm.function(first_final, final), dagnet.cpu(), [],
                     storm.variables, name="storm_final")
    run.final_ops = (first_final,)
    engine.wait_for_all(timeout=_GUARD)
    storm.completions.put(None)
    completer.join(_GUARD)
    return run


def _storm_main_thread(storm: _Storm, rng: random.Random, sent_all: threading.Event) -> None:
    """Push and wait until every signal is sent, catching each KeyboardInterrupt."""
    run = storm.run

    def until_sent() -> None:
        while True:
            try:
                if sent_all.is_set():
                    time.sleep(0.2)  # the last signal lands here, not after the loop
                    return
                storm.main_step(rng)
            except KeyboardInterrupt:
                run.interrupts += 1

    while True:  # an interrupt between two iterations above lands here
        try:
            until_sent()
            return
        except KeyboardInterrupt:
            run.interrupts += 1


def _drain(engine: Engine, storm: _Storm) -> None:
    try:
        engine.wait_for_all(timeout=_GUARD)
    except dagnet.OperatorFailedError:
        storm.run.reported += 1
    for var in storm.variables:
        try:
            engine.wait_for_var(var, timeout=_GUARD)
        except dagnet.OperatorFailedError:
            storm.run.reported += 1


def check_storm(run: StormRun) -> None:
    """The engine came out of the storm whole: every function that completed read what
    running the completed ones one at a time, in the order they started, gives; the
    final function ran, last; interrupts were raised, no more than were sent."""
    values = {k: run.initial(k) for k in range(run.num_vars)}
    done = sorted((record[0], key[1], record[1]) for key, record in run.state.items()
                  if isinstance(key, tuple))
    for _, index, seen in done:
        op = run.ops[index]
        expected = tuple(values[k] for k in op.used)
        assert seen == expected, f"storm_op{index} {op} read {seen}, a serial replay {expected}"
        for k in set(op.writes):
            values[k] = _mix(seen, index, k)
    assert all(run.state[k] == values[k] for k in range(run.num_vars)), (
        "the variables' values are not those of the serial replay")
    assert done and done[-1][1] == run.final_ops[-1], "the final function did not run last"
    assert 0 < run.interrupts <= run.signals, (
        f"{run.interrupts} KeyboardInterrupts caught for {run.signals} SIGINTs sent")


def main(argv: list[str] | None = None) -> None:
    """``python -m dagnet.testing.ctrl_c ENGINE [SEED]``: storm a new engine of that
    name, check it, and print what happened as JSON (the conformance suite runs it
    in a fresh interpreter, so that no stray interrupt can reach pytest's own code)."""
    import json

    args = sys.argv[1:] if argv is None else argv
    name, seed = args[0], int(args[1]) if len(args) > 1 else 0
    engine = dagnet.engine.create(name)
    try:
        run = ctrl_c_storm(engine, seed=seed)
    finally:
        engine.shutdown(timeout=_GUARD)
    check_storm(run)
    print(json.dumps({"signals": run.signals, "interrupts": run.interrupts, "held": run.held,
                      "reported": run.reported, "pushes": run.pushes}))


if __name__ == "__main__":
    main()
