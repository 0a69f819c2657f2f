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
