"""The engine listener hook and inline runs, checked on every registered engine."""

from __future__ import annotations

import threading

import pytest

import dagnet
from dagnet.engine import Execution, FnProperty


@pytest.fixture
def records():
    heard: list[Execution] = []
    lock = threading.Lock()

    def listener(record: Execution) -> None:
        with lock:
            heard.append(record)

    dagnet.engine.add_listener(listener)
    yield heard
    dagnet.engine.remove_listener(listener)


def test_every_run_function_is_reported(dagnet_engine, records):
    var = dagnet_engine.new_var()
    for i in range(3):
        dagnet_engine.push_sync(lambda rctx: None, dagnet.cpu(), [], [var], name=f"step{i}")
    dagnet_engine.wait_for_all()
    mine = [r for r in records if r.name.startswith("step")]
    assert [r.name for r in mine] == ["step0", "step1", "step2"]  # one variable: in order
    for record in mine:
        assert record.ctx == dagnet.cpu() and record.prop is FnProperty.NORMAL
        assert record.start <= record.end and not record.failed and record.scope is None
    assert all(a.end <= b.start for a, b in zip(mine, mine[1:]))


def test_failures_and_async_functions_are_reported(dagnet_engine, records):
    var = dagnet_engine.new_var()

    def boom(rctx):
        raise ValueError("boom")

    dagnet_engine.push_sync(boom, dagnet.cpu(), [], [var], name="boom")
    dagnet_engine.push_async(lambda rctx, done: done(), dagnet.cpu(), [], [], name="later")
    with pytest.raises(dagnet.base.MXNetError, match="boom"):
        dagnet_engine.wait_for_all()
    by_name = {r.name: r for r in records}
    assert by_name["boom"].failed
    assert not by_name["later"].failed and by_name["later"].prop is FnProperty.ASYNC


def test_execution_scope_marks_functions_run_inside(dagnet_engine, records):
    def outer(rctx):
        with dagnet.engine.execution_scope("myop"), dagnet.engine.run_inline():
            dagnet_engine.push_sync(lambda r: None, dagnet.cpu(), [], [dagnet_engine.new_var()],
                                    name="inner")

    dagnet_engine.push_sync(outer, dagnet.cpu(), [], [dagnet_engine.new_var()], name="outer")
    dagnet_engine.wait_for_all()
    scopes = {r.name: r.scope for r in records}
    assert scopes == {"outer": None, "inner": "myop"}


def test_run_inline_finishes_pushes_before_they_return(dagnet_engine):
    """A function that pushes work and needs it done before it returns, as a custom
    operator does, completes on every engine, also with a single worker."""
    seen = []

    def outer(rctx):
        result = []
        var = dagnet_engine.new_var()
        with dagnet.engine.run_inline():
            assert dagnet.engine.inline_active()
            for i in range(5):
                dagnet_engine.push_sync(lambda r, i=i: result.append(i), dagnet.cpu(), [], [var])
            dagnet_engine.wait_for_var(var)  # would be a deadlock error without run_inline
            seen.append(list(result))
        assert not dagnet.engine.inline_active()

    with dagnet.config.set(cpu_workers=1):
        out = dagnet_engine.new_var()
        for _ in range(3):  # several at once would each hold the only worker
            dagnet_engine.push_sync(outer, dagnet.cpu(), [], [dagnet_engine.new_var(), out])
        dagnet_engine.wait_for_all(timeout=30)
    assert seen == [[0, 1, 2, 3, 4]] * 3


def test_listener_errors_do_not_fail_the_work(dagnet_engine):
    def broken(record):
        raise RuntimeError("listener bug")

    dagnet.engine.add_listener(broken)
    try:
        var, ran = dagnet_engine.new_var(), []
        with pytest.warns(RuntimeWarning, match="listener bug"):
            dagnet_engine.push_sync(lambda r: ran.append(1), dagnet.cpu(), [], [var])
            dagnet_engine.wait_for_all()
        assert ran == [1]
    finally:
        dagnet.engine.remove_listener(broken)


def test_listener_registration_errors():
    assert not dagnet.engine.listening()
    with pytest.raises(dagnet.base.MXNetError, match="callable"):
        dagnet.engine.add_listener("not a function")
    with pytest.raises(dagnet.base.MXNetError, match="not listening"):
        dagnet.engine.remove_listener(print)
    with pytest.raises(dagnet.base.MXNetError, match="string"):
        with dagnet.engine.execution_scope(3):
            pass


def test_inline_push_waiting_behind_work_queued_for_its_own_worker(dagnet_engine):
    """The one worker runs a function whose inline push depends on a function queued for
    that same worker: a compensating worker runs the queue meanwhile."""
    shared, pushed, order = dagnet_engine.new_var(), threading.Event(), []

    def outer(rctx):
        assert pushed.wait(10)
        with dagnet.engine.run_inline():
            dagnet_engine.push_sync(lambda r: order.append("inline"), dagnet.cpu(), [],
                                    [shared])
        order.append("outer done")

    with dagnet.config.set(cpu_workers=1):
        if dagnet_engine.name == "naive":
            pushed.set()  # the push runs the function at once: nothing can be queued
        dagnet_engine.push_sync(outer, dagnet.cpu(), [], [dagnet_engine.new_var()])
        if not pushed.is_set():
            dagnet_engine.push_sync(lambda r: order.append("queued"), dagnet.cpu(), [],
                                    [shared])
            pushed.set()
        dagnet_engine.wait_for_all(timeout=30)
    assert order[-2:] == ["inline", "outer done"]
