"""dagnet's SIGINT handler (``dagnet.engine.ctrl_c_handler``): when it is installed,
what it holds back, where the engine raises what it held, and the naive engine's
waits for a function another thread runs."""

from __future__ import annotations

import signal
import sys
import threading
import time

import pytest

import dagnet
from dagnet.engine import TrackedEngine, ctrl_c_handler, is_ctrl_c, run_inline
from dagnet.testing.ctrl_c import PROMPT, interrupted, main_thread_with_ctrl_c
from dagnet.testing.engine_suite import GUARD


@pytest.fixture
def naive():
    engine = dagnet.engine.create("naive")
    yield engine
    engine.shutdown(timeout=GUARD)


def _frames_of_a_pushed_function(engine) -> tuple:
    """(the pushed function's own frame, the engine frame that called it)."""
    frames = []
    engine.push_sync(lambda rc: frames.append(sys._getframe()))
    engine.wait_for_all(timeout=GUARD)
    return frames[0], frames[0].f_back


def test_the_handler_is_installed_only_over_pythons_default(monkeypatch):
    main_thread_with_ctrl_c()
    monkeypatch.setattr(signal, "getsignal", lambda signum: signal.default_int_handler)
    installed = []
    monkeypatch.setattr(signal, "signal", lambda signum, handler: installed.append(handler))
    assert dagnet.engine.install_ctrl_c_handler()
    assert installed == [ctrl_c_handler]

    def own_handler(signum, frame):
        pass

    installed.clear()
    monkeypatch.setattr(signal, "getsignal", lambda signum: own_handler)
    assert not dagnet.engine.install_ctrl_c_handler()  # the program's own stays
    assert installed == []


def test_an_interrupt_in_engine_code_is_held_and_raised_when_the_push_returns(naive):
    """Landing in the engine's bookkeeping (here: the frame that runs a pushed
    function), SIGINT is held back; the push raises it once its work is done."""
    main_thread_with_ctrl_c()
    ran = []
    _, engine_frame = _frames_of_a_pushed_function(naive)
    held = dagnet.engine.held_interrupts()

    def lands_in_the_engine(run_ctx):
        ctrl_c_handler(signal.SIGINT, engine_frame)  # as if SIGINT came then
        ran.append("done")

    with pytest.raises(KeyboardInterrupt) as info:
        naive.push_sync(lands_in_the_engine, mutate_vars=[naive.new_var()])
    assert ran == ["done"] and is_ctrl_c(info.value)
    assert dagnet.engine.held_interrupts() == held + 1
    naive.wait_for_all(timeout=GUARD)  # nothing failed


def test_an_interrupt_in_a_pushed_function_is_raised_there(naive):
    main_thread_with_ctrl_c()
    function_frame, _ = _frames_of_a_pushed_function(naive)
    with pytest.raises(KeyboardInterrupt) as info:
        ctrl_c_handler(signal.SIGINT, function_frame)
    assert is_ctrl_c(info.value)
    assert not is_ctrl_c(KeyboardInterrupt())


def test_a_held_interrupt_left_behind_is_sent_again(naive):
    """Engine code left without a push, wait or on_complete returning (an error, say):
    the held interrupt comes back by itself, raised in the program's own code."""
    main_thread_with_ctrl_c()
    if signal.getsignal(signal.SIGINT) is not ctrl_c_handler:
        pytest.skip("dagnet's SIGINT handler is not installed")
    _, engine_frame = _frames_of_a_pushed_function(naive)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        ctrl_c_handler(signal.SIGINT, engine_frame)
        time.sleep(GUARD)
    assert time.monotonic() - start < PROMPT


def test_ctrl_c_in_an_inline_push_waiting_for_its_dependencies():
    """Ctrl-C while a push inside run_inline() waits for what it depends on: the
    push raises, and its function, registered already, still runs (on a worker)
    once the dependency completes."""
    engine = dagnet.engine.create("threaded")
    try:
        var = engine.new_var("held")
        completions = []
        engine.push_async(lambda rc, on_complete: completions.append(on_complete),
                          mutate_vars=[var])
        ran = []

        def inline_push():
            with run_inline():
                engine.push_sync(lambda rc: ran.append(threading.current_thread().name),
                                 mutate_vars=[var], name="inline_op")

        assert isinstance(engine, TrackedEngine)
        interrupted(inline_push)
        assert ran == []
        completions[0]()
        engine.wait_for_var(var, timeout=GUARD)
        assert len(ran) == 1 and ran[0] != threading.current_thread().name
    finally:
        engine.shutdown(timeout=GUARD)


def test_naive_waits_for_a_function_another_thread_runs(naive):
    """wait_for_var and wait_for_all wait for a function running on another thread
    (it holds the naive engine's turn), as the threaded engines do."""
    var, other = naive.new_var("var"), naive.new_var("other")
    started, gate = threading.Event(), threading.Event()
    ran = []

    def slow_op(run_ctx):
        started.set()
        gate.wait(GUARD)
        ran.append("slow")

    pusher = threading.Thread(target=lambda: naive.push_sync(slow_op, mutate_vars=[var]))
    pusher.start()
    try:
        assert started.wait(GUARD)
        naive.wait_for_var(other, timeout=GUARD)  # not used by the running function
        with pytest.raises(dagnet.EngineTimeoutError, match="slow_op"):
            naive.wait_for_var(var, timeout=0.2)
        with pytest.raises(dagnet.EngineTimeoutError, match="slow_op"):
            naive.wait_for_all(timeout=0.2)
        threading.Timer(0.1, gate.set).start()
        naive.wait_for_var(var, timeout=GUARD)
        assert ran == ["slow"]
    finally:
        gate.set()
        pusher.join(GUARD)
