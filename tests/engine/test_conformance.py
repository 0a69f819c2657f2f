"""The engine conformance suite, run against every registered engine, and the
regression tests that need an engine's insides."""

from __future__ import annotations

import threading
import time

import pytest

import dagnet
from dagnet.engine import TrackedEngine
from dagnet.testing.engine_suite import GUARD, EngineConformance


class TestEngineConformance(EngineConformance):
    """Every test of :class:`EngineConformance`, once per registered engine."""


def _until(condition, what: str) -> None:
    deadline = time.monotonic() + GUARD
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.001)


def test_nested_push_registered_before_its_pusher_is_released(dagnet_engine: dagnet.engine.Engine):
    """A push made inside a function is registered before that function's
    completion is processed, so wait_for_all cannot find the engine idle in
    between and return early.

    The race needs a third thread to hold the tracker lock while the function
    pushes and finishes; the test holds it itself to make it certain.
    """
    if not isinstance(dagnet_engine, TrackedEngine):
        pytest.skip("only engines built on the shared tracker have its lock")
    engine = dagnet_engine
    gate, inner_gate = threading.Event(), threading.Event()
    inner_ran: list[bool] = []
    seen_at_return: list[bool] = []

    def inner(run_ctx) -> None:
        inner_gate.wait(GUARD)
        inner_ran.append(True)

    def outer(run_ctx) -> None:
        gate.wait(GUARD)
        engine.push_sync(inner, name="inner")

    def waiter() -> None:
        engine.wait_for_all(timeout=GUARD)
        seen_at_return.append(bool(inner_ran))

    engine.push_sync(outer, mutate_vars=[engine.new_var()], name="outer")
    thread = threading.Thread(target=waiter)
    try:
        thread.start()
        _until(lambda: engine._idle_waiters, "wait_for_all is waiting")
        with engine._lock:
            gate.set()
            _until(lambda: not engine._finished.empty(), "outer has finished")
        engine._drive(blocking=True)  # as the next thread to take the lock would
        time.sleep(0.02)
    finally:
        gate.set()
        inner_gate.set()
        thread.join(GUARD)
    assert seen_at_return == [True], "wait_for_all returned while the nested push was outstanding"


def _threads_running(engine, nbytes, *, busy=False):
    """The threads two functions pushed with ``nbytes`` ran on (the second reads what the
    first writes), ``busy``: while a third function holds another variable."""
    seen, gate = [], threading.Event()
    var = engine.new_var()
    if busy:
        engine.push_sync(lambda run_ctx: gate.wait(GUARD), mutate_vars=[engine.new_var()])
    try:
        for _ in range(2):
            engine.push_sync(lambda run_ctx: seen.append(threading.get_ident()),
                             mutate_vars=[var], nbytes=nbytes)
    finally:
        gate.set()
    engine.wait_for_all(timeout=GUARD)
    return seen


@pytest.mark.parametrize("engine_name", ["threaded", "threaded_per_device"])
def test_a_small_function_runs_on_the_pushing_thread_when_nothing_is_outstanding(engine_name):
    """Where there is nothing to run beside, a function of at most engine_inline_bytes
    runs at its push, on the pushing thread, as on the naive engine; larger ones, those
    pushed while other work is outstanding, and all with engine_inline_bytes=0 go to the
    workers."""
    me = threading.get_ident()
    with dagnet.config.set(engine_inline_bytes=1024):
        engine = dagnet.engine.create(engine_name)
    try:
        assert engine.inline_bytes == 1024
        assert _threads_running(engine, 1024) == [me, me]
        assert me not in _threads_running(engine, 1025)
        assert me not in _threads_running(engine, None)
        assert me not in _threads_running(engine, 8, busy=True)
        engine.inline_bytes = 0
        assert me not in _threads_running(engine, 0)
    finally:
        engine.shutdown()
