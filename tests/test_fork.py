"""dagnet's fork handlers (``dagnet._fork``): one order for every stage, and every
handler run even when one raises; the memory pools forked while another thread
allocates and frees."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from dagnet import _fork


@pytest.fixture
def handlers(monkeypatch):
    """An empty handler list for the test, and the calls made."""
    monkeypatch.setattr(_fork, "_handlers", [])
    calls = []

    def add(stage, name, fail=False):
        def record(when):
            def handler():
                calls.append(f"{name} {when}")
                if fail:
                    raise RuntimeError(f"{name} {when} failed")
            return handler

        _fork.at_fork(stage, before=record("before"), after_in_parent=record("parent"),
                      after_in_child=record("child"))

    return add, calls


def test_stages_run_in_order_and_are_undone_in_reverse(handlers):
    add, calls = handlers
    add(_fork.MEMORY, "memory")  # registered first, as an earlier import would
    add(_fork.ENGINES, "engines")
    _fork._before()
    _fork._after_in_parent()
    _fork._after_in_child()
    assert calls == ["engines before", "memory before", "memory parent", "engines parent",
                     "memory child", "engines child"]


def test_every_handler_runs_when_one_raises(handlers):
    add, calls = handlers
    add(_fork.ENGINES, "engines", fail=True)
    add(_fork.MEMORY, "memory")
    with pytest.raises(RuntimeError, match="engines before failed"):
        _fork._before()
    assert calls == ["engines before", "memory before"]


FORK_WHILE_ALLOCATING = """
    import os, signal, sys, threading
    import dagnet

    ctx = dagnet.cpu()
    stop = threading.Event()
    # Used once before the thread starts: a fork in the middle of another thread's
    # first import leaves that module's import lock held in the child (Python's).
    dagnet.storage.free(dagnet.storage.alloc(64, ctx))

    def churn():
        while not stop.is_set():
            handles = [dagnet.storage.alloc(size, ctx) for size in (64, 4096, 1 << 16)]
            for handle in handles:
                dagnet.storage.free(handle)

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    for _ in range(30):
        pid = os.fork()
        if pid == 0:
            signal.alarm(10)  # a child stuck on a pool lock is killed, and counted
            handle = dagnet.storage.alloc(4096, ctx)
            dagnet.storage.free(handle)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, os.waitstatus_to_exitcode(status)
    stop.set()
    thread.join()
    print("ok")
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_memory_pools_fork_whole_while_another_thread_allocates():
    """Each child allocates at once: no pool lock is inherited held by a thread that
    did not survive the fork."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(FORK_WHILE_ALLOCATING)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"
