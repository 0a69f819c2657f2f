"""The engine's process lifecycle, each in a fresh interpreter: a clean exit
with work outstanding, fork (``os.fork`` and multiprocessing's ``fork``
context) giving the child a working engine while the parent keeps working, and the
interpreter's switch interval that starting a threaded engine's workers sets."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import dagnet

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

TIMEOUT = 60  # a hung interpreter fails the test instead of hanging the run


def _engine_names() -> list[str]:
    return sorted(dagnet.engine.names())


def _run(script: str, *args: str, **env_vars: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DAGNET_ENGINE", "MXNET_ENGINE_TYPE", "DAGNET_ENGINE_SWITCH_INTERVAL")}
    env.update(env_vars)
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script), *args], env=env,
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    return result


EXIT_WITH_WORK_OUTSTANDING = """
    import sys, threading, time
    import dagnet

    name, path = sys.argv[1], sys.argv[2]
    engine = dagnet.engine.get(name)
    out = open(path, "w")
    var = engine.new_var()

    def step(i):
        def fn(run_ctx):
            time.sleep(0.005)
            out.write(f"step {i}\\n")
            out.flush()
        return fn

    def finish_later(run_ctx, on_complete):
        def finish():
            time.sleep(0.05)
            out.write("async\\n")
            out.flush()
            on_complete()
        threading.Thread(target=finish, daemon=True).start()

    def never_waited_for(run_ctx):
        raise ValueError("nobody waits for this")

    for i in range(30):
        engine.push_sync(step(i), mutate_vars=[var])
    engine.push_async(finish_later, const_vars=[var], mutate_vars=[engine.new_var()])
    engine.push_sync(lambda rc: out.write("prioritized\\n"), const_vars=[var], priority=1)
    engine.push_sync(never_waited_for, mutate_vars=[engine.new_var()])
    print("pushed", flush=True)
    # No wait: the interpreter exits with the work outstanding.
"""


@pytest.mark.parametrize("name", _engine_names())
def test_exit_with_work_outstanding(tmp_path, name: str) -> None:
    """The process exits 0, and every function pushed before exit has run."""
    path = tmp_path / "log.txt"
    result = _run(EXIT_WITH_WORK_OUTSTANDING, name, str(path))
    assert result.stdout.strip() == "pushed"
    lines = path.read_text().splitlines()
    assert lines[:30] == [f"step {i}" for i in range(30)]
    assert sorted(lines[30:]) == ["async", "prioritized"]


FORK = """
    import os, signal, sys, time, traceback
    import dagnet

    name = sys.argv[1]
    engine = dagnet.engine.get(name)
    box = {"count": 0}
    var = engine.new_var()

    def bump(run_ctx):
        time.sleep(0.002)
        box["count"] += 1

    for _ in range(20):
        engine.push_sync(bump, mutate_vars=[var])
    pid = os.fork()  # with the work outstanding: the fork lets it finish first
    if pid == 0:
        signal.alarm(30)  # a hung child must not outlive the test
        code = 1
        try:
            assert box["count"] == 20, box
            for _ in range(20):
                engine.push_sync(bump, mutate_vars=[var])
            order = []
            other = engine.new_var()
            for i in range(50):
                engine.push_sync(lambda rc, i=i: order.append(i), const_vars=[var],
                                 mutate_vars=[other])
            engine.push_sync(lambda rc: 1 / 0, mutate_vars=[other], name="child_failure")
            try:
                engine.wait_for_all(timeout=10)
                raise AssertionError("the child's failure was not raised")
            except dagnet.OperatorFailedError as exc:
                assert "child_failure" in str(exc)
            assert box["count"] == 40 and order == list(range(50)), (box, order)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    for _ in range(20):
        engine.push_sync(bump, mutate_vars=[var])
    engine.wait_for_all(timeout=10)
    assert box["count"] == 40, box
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code == 0, f"the child exited with {code}"
    engine.push_sync(bump, mutate_vars=[var])
    engine.wait_for_var(var, timeout=10)
    assert box["count"] == 41, box
    print("ok")
"""


@pytest.mark.parametrize("name", _engine_names())
def test_os_fork(name: str) -> None:
    """The child finds the parent's earlier work done and an engine that runs
    and fails functions; the parent's engine keeps working."""
    assert _run(FORK, name).stdout.strip() == "ok"


MULTIPROCESSING_FORK = """
    import multiprocessing, sys
    import dagnet

    def work(name, results):
        engine = dagnet.engine.get(name)
        var = engine.new_var()
        out = []
        for i in range(50):
            engine.push_sync(lambda rc, i=i: out.append(i), mutate_vars=[var])
        engine.wait_for_all(timeout=10)
        results.put(out == list(range(50)))

    if __name__ == "__main__":
        name = sys.argv[1]
        engine = dagnet.engine.get(name)
        var = engine.new_var()
        engine.push_sync(lambda rc: None, mutate_vars=[var])  # workers started before the fork
        engine.wait_for_all(timeout=10)
        context = multiprocessing.get_context("fork")
        results = context.Queue()
        children = [context.Process(target=work, args=(name, results)) for _ in range(2)]
        for child in children:
            child.start()
        got = [results.get(timeout=30) for _ in children]
        for child in children:
            child.join(30)
        assert got == [True, True], got
        assert [child.exitcode for child in children] == [0, 0]
        work(name, results)
        assert results.get(timeout=10) is True
        print("ok")
"""


@pytest.mark.parametrize("name", _engine_names())
def test_multiprocessing_fork(name: str) -> None:
    """Processes from multiprocessing's fork context get a working engine."""
    assert _run(MULTIPROCESSING_FORK, name).stdout.strip() == "ok"


SWITCH_INTERVAL_AFTER_A_PUSH = """
    import sys
    import dagnet

    name, before = sys.argv[1], float(sys.argv[2])
    sys.setswitchinterval(before)
    engine = dagnet.engine.create(name)
    var = engine.new_var()
    engine.push_sync(lambda run_ctx: None, dagnet.cpu(), mutate_vars=[var])
    engine.wait_for_all()
    print(sys.getswitchinterval())
"""


@pytest.mark.parametrize("name", _engine_names())
@pytest.mark.parametrize("before, configured, after", [
    (0.005, None, 0.0002),  # Python's default, lowered to the engine's default
    (0.005, "0.001", 0.001),
    (0.005, "0", 0.005),  # 0: left alone
    (0.0001, None, 0.0001),  # already shorter: left alone
])
def test_threaded_engines_shorten_the_switch_interval(name, before, configured, after):
    """Workers that start lower the interval (config engine_switch_interval) so that one
    returning from a kernel need not wait 5 ms for a thread running Python; the naive
    engine starts none and leaves it."""
    env = {} if configured is None else {"DAGNET_ENGINE_SWITCH_INTERVAL": configured}
    got = float(_run(SWITCH_INTERVAL_AFTER_A_PUSH, name, str(before), **env).stdout)
    expected = before if name == "naive" else after
    assert got == pytest.approx(expected)
