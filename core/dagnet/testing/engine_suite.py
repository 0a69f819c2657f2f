"""The engine conformance suite: the contracts every dagnet engine honours.

Subclass :class:`EngineConformance` in a test module and pytest runs every
test once per registered engine (the ``dagnet`` pytest plugin parametrizes
``dagnet_engine_name`` and gives each test a fresh ``dagnet_engine``)::

    from dagnet.testing.engine_suite import EngineConformance

    class TestEngineConformance(EngineConformance):
        pass

The ``naive`` engine is the reference: random programs (hypothesis) are run
on the engine under test and on a fresh naive engine, and must agree.

Every wait in the suite has a timeout, so an engine that deadlocks fails a
test instead of hanging it.  Nothing here measures speed.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import dagnet
from dagnet import config
from dagnet.engine import Engine, FnProperty, RunContext, Var
from dagnet.testing.ctrl_c import interrupted

__all__ = [
    "GUARD", "EngineConformance", "Op", "ProgramError", "ProgramRun", "programs", "run_program",
]

GUARD = 10.0
"""Seconds any wait in the suite may take before the test fails instead of hanging."""



class ProgramError(Exception):
    """The exception a generated program's failing operation raises."""


# -- random programs ---------------------------------------------------------


@dataclass(frozen=True)
class Op:
    """One push of a generated program.

    ``reads``/``writes`` are variable indices exactly as pushed (they may
    repeat, and overlap); the engine treats a variable in both as written.
    ``small``: pushed as touching no memory (``nbytes=0``), which an engine may
    run on the pushing thread when it has nothing outstanding.
    """

    reads: tuple[int, ...]
    writes: tuple[int, ...]
    sleep: float
    fail: bool
    small: bool = False

    @property
    def mutated(self) -> frozenset[int]:
        """The variables the engine must treat as written."""
        return frozenset(self.writes)

    @property
    def used(self) -> frozenset[int]:
        """Every variable the operation reads or writes."""
        return frozenset(self.reads) | frozenset(self.writes)

    def conflicts(self, other: Op) -> bool:
        """True when the two must not run at once (one writes what the other uses)."""
        return bool(self.mutated & other.used or other.mutated & self.used)


@st.composite
def programs(draw: Callable[..., Any], max_vars: int = 6, max_ops: int = 14
             ) -> tuple[int, tuple[Op, ...]]:
    """A hypothesis strategy for ``(num_vars, ops)``: random reads and writes of
    up to ``max_vars`` variables, a tiny sleep now and then, a rare failure, half of
    them pushed as small."""
    num_vars = draw(st.integers(1, max_vars))
    index = st.integers(0, num_vars - 1)
    op = st.builds(
        Op,
        reads=st.lists(index, max_size=3).map(tuple),
        writes=st.lists(index, max_size=3).map(tuple),
        sleep=st.sampled_from((0.0, 0.0, 0.001)),
        fail=st.sampled_from((False,) * 11 + (True,)),
        small=st.booleans(),
    )
    return num_vars, tuple(draw(st.lists(op, min_size=1, max_size=max_ops)))


def _mix(seen: tuple[int, ...], index: int, var: int) -> int:
    """The value operation ``index`` writes to ``var`` from the values it read."""
    acc = 17 * index + var + 1
    for value in seen:
        acc = (acc * 1_000_003 + value) % 2_147_483_647
    return acc


@dataclass
class ProgramRun:
    """What running a program on an engine produced.

    ``log[i]`` is ``(start, end, seen)`` for every operation that ran (``seen``:
    the values of the variables it used, in index order); ``runs[i]`` counts
    how often operation ``i`` started; ``error`` is ``(operator, message)`` of
    what :meth:`Engine.wait_for_all` raised, or None.
    """

    values: list[int]
    log: dict[int, tuple[int, int, tuple[int, ...]]]
    runs: list[int]
    error: tuple[str, str] | None
    push_errors: list[BaseException]

    @property
    def ran(self) -> frozenset[int]:
        """The operations that ran (the others were skipped)."""
        return frozenset(self.log)


def run_program(engine: Engine, num_vars: int, ops: Sequence[Op],
                client_threads: int = 1) -> ProgramRun:
    """Push ``ops`` to ``engine`` (operation ``i`` from client thread ``i % client_threads``,
    each thread in index order), wait for everything and report what happened."""
    variables = [engine.new_var(f"v{k}") for k in range(num_vars)]
    values = [1000 + k for k in range(num_vars)]
    log: dict[int, tuple[int, int, tuple[int, ...]]] = {}
    runs = [0] * len(ops)
    lock = threading.Lock()
    ticks = itertools.count()

    def make(index: int, op: Op) -> Callable[[RunContext], None]:
        used = sorted(op.used)

        def fn(run_ctx: RunContext) -> None:
            with lock:
                start = next(ticks)
                runs[index] += 1
            seen = tuple(values[k] for k in used)
            if op.sleep:
                time.sleep(op.sleep)
            try:
                if op.fail:
                    raise ProgramError(f"op{index} failed")
                for k in sorted(op.mutated):
                    values[k] = _mix(seen, index, k)
            finally:
                with lock:
                    log[index] = (start, next(ticks), seen)

        return fn

    push_errors: list[BaseException] = []

    def push(indices: Sequence[int], barrier: threading.Barrier | None) -> None:
        try:
            if barrier is not None:
                barrier.wait(GUARD)
            for i in indices:
                op = ops[i]
                engine.push_sync(make(i, op), dagnet.cpu(),
                                 const_vars=[variables[k] for k in op.reads],
                                 mutate_vars=[variables[k] for k in op.writes],
                                 name=f"op{i}", nbytes=0 if op.small else None)
        except BaseException as exc:  # reported by the caller
            push_errors.append(exc)

    if client_threads == 1:
        push(range(len(ops)), None)
    else:
        barrier = threading.Barrier(client_threads)
        threads = [threading.Thread(target=push, args=(range(t, len(ops), client_threads),
                                                       barrier))
                   for t in range(client_threads)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(GUARD)
    error = None
    try:
        engine.wait_for_all(timeout=GUARD)
    except dagnet.OperatorFailedError as exc:
        error = (exc.operator, str(exc))
    engine.wait_for_all(timeout=GUARD)  # raised once: a second wait is clean
    for var in variables:
        engine.wait_for_var(var, timeout=GUARD)
    return ProgramRun(values, log, runs, error, push_errors)


def _check_serialized(ops: Sequence[Op], run: ProgramRun,
                      ordered: Callable[[int, int], bool]) -> None:
    """Conflicting operations never overlap; ``ordered(i, j)`` pairs ran in index order."""
    for i, j in itertools.combinations(sorted(run.log), 2):
        if not ops[i].conflicts(ops[j]):
            continue
        (start_i, end_i, _), (start_j, end_j, _) = run.log[i], run.log[j]
        assert end_i < start_j or end_j < start_i, (
            f"conflicting op{i} {ops[i]} and op{j} {ops[j]} ran at the same time")
        if ordered(i, j):
            assert end_i < start_j, f"op{j} ran before op{i}, which it conflicts with"


def _check_replay(num_vars: int, ops: Sequence[Op], run: ProgramRun) -> None:
    """The values are what running the operations one at a time, in the order
    they started, gives: each saw what the earlier ones wrote."""
    values = [1000 + k for k in range(num_vars)]
    for index in sorted(run.log, key=lambda i: run.log[i][0]):
        op = ops[index]
        seen = tuple(values[k] for k in sorted(op.used))
        assert run.log[index][2] == seen, f"op{index} read {run.log[index][2]}, expected {seen}"
        if not op.fail:
            for k in op.mutated:
                values[k] = _mix(seen, index, k)
    assert run.values == values


def _failed_names(error: tuple[str, str] | None) -> set[str]:
    """Every operator an :class:`OperatorFailedError` message names as failed."""
    if error is None:
        return set()
    operator, message = error
    names = {operator}
    if "more failed: " in message:
        names |= {part.strip(" '") for part in message.rsplit("more failed: ", 1)[1].split(",")}
    return names


# -- helpers -------------------------------------------------------------------


def _gate() -> threading.Event:
    return threading.Event()


@contextlib.contextmanager
def _engine(name: str, **settings_: Any) -> Iterator[Engine]:
    """A fresh engine of kind ``name``, built and used under ``config.set(**settings_)``."""
    with config.set(**settings_):
        engine = dagnet.engine.create(name)
        try:
            yield engine
        finally:
            engine.shutdown()


def _within(scenario: Callable[[], None], what: str) -> None:
    """Run ``scenario`` on a daemon thread: a deadlock in ``push`` itself (which
    takes no timeout) then fails the test instead of hanging it."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            scenario()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run, name=f"dagnet-suite: {what}", daemon=True)
    thread.start()
    thread.join(2 * GUARD)
    assert not thread.is_alive(), f"{what}: deadlocked (still running after {2 * GUARD}s)"
    if errors:
        raise errors[0]


def _noop(run_ctx: RunContext) -> None:
    pass


def _pending_op() -> tuple[Callable[[RunContext, Callable[..., None]], None],
                            threading.Event, Callable[[], None]]:
    """An async function ``pending_op`` that does not call on_complete until
    ``complete()`` is called, and the event it sets when it has started."""
    started = threading.Event()
    completions: list[Callable[..., None]] = []

    def pending_op(run_ctx: RunContext, on_complete: Callable[..., None]) -> None:
        completions.append(on_complete)
        started.set()

    def complete() -> None:
        assert started.wait(GUARD), "pending_op never started"
        completions.pop()()

    return pending_op, started, complete


def _is_type_error(exc: BaseException) -> bool:
    return isinstance(exc, dagnet.DagnetError) and isinstance(exc, TypeError)


_FORK_WITH_WORK_OUTSTANDING = """
    import multiprocessing, os, signal, sys, threading, time, traceback
    import dagnet

    name, how = sys.argv[1], sys.argv[2]
    engine = dagnet.engine.get(name)
    stuck, counter = engine.new_var("stuck"), engine.new_var("counter")
    completions, started = [], threading.Event()

    def never_completing(run_ctx, on_complete):
        completions.append(on_complete)
        started.set()

    # From a thread: the naive engine's push waits for on_complete.
    threading.Thread(target=lambda: engine.push_async(never_completing, mutate_vars=[stuck]),
                     daemon=True).start()
    assert started.wait(10)
    box = {"count": 0}

    def bump(run_ctx):
        time.sleep(0.002)
        box["count"] += 1

    for _ in range(20):
        engine.push_sync(bump, mutate_vars=[counter])

    def child(report):
        signal.alarm(30)  # a hung child must not outlive the test
        try:
            seen = []
            out = engine.new_var()
            engine.push_sync(lambda rc: seen.append(box["count"]), const_vars=[counter],
                             mutate_vars=[out])
            engine.wait_for_var(out, timeout=5)
            assert seen == [20], seen  # what finished before the fork is there
            try:
                engine.wait_for_var(stuck, timeout=5)
                raise AssertionError("the work the child never ran was not reported")
            except dagnet.OperatorFailedError as exc:
                assert isinstance(exc.original, dagnet.EngineForkError), exc
                assert "never_completing" in str(exc), exc
            engine.push_sync(bump, mutate_vars=[stuck, counter])
            engine.wait_for_all(timeout=5)
            assert box["count"] == 21, box
            report(time.monotonic())
        except BaseException:
            traceback.print_exc()
            report(None)

    fork_started = time.monotonic()
    if how == "os.fork":
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            child(lambda when: os.write(write_end, repr(when).encode()))
            os._exit(0)
        os.close(write_end)
        child_done = eval(os.read(read_end, 100).decode())
        os.waitpid(pid, 0)
    else:
        context = multiprocessing.get_context("fork")
        queue = context.SimpleQueue()
        process = context.Process(target=child, args=(queue.put,))
        process.start()
        child_done = queue.get()
        process.join(30)
    assert child_done is not None, "the child failed"
    completions[0]()  # the parent's work goes on, and finishes
    engine.wait_for_all(timeout=10)
    engine.wait_for_var(stuck, timeout=10)
    assert box["count"] == 20, box
    print(f"{child_done - fork_started:.3f}", "ok")
"""


# -- the suite -----------------------------------------------------------------


class EngineConformance:
    """The contracts of ARCHITECTURE.md's "Engine" section, as tests.

    Subclass it in a test module (named ``Test...``) to run it against every
    registered engine.  Two class attributes describe engines the suite
    cannot tell apart by behaviour:

    - ``inline_engines``: engines that run each function inside ``push``
      (tests of asynchrony and of concurrency skip them);
    - ``priority_lane_engines``: engines whose prioritized work has workers
      of its own (the priority test runs only for them).
    """

    inline_engines: tuple[str, ...] = ("naive",)
    priority_lane_engines: tuple[str, ...] = ("threaded_per_device",)

    def skip_inline(self, name: str, why: str) -> None:
        """Skip the running test for engines that run functions at push."""
        if name in self.inline_engines:
            pytest.skip(f"engine {name!r} runs each function inside push: {why}")

    # -- 1. ordering -----------------------------------------------------------

    def test_function_gets_run_context(self, dagnet_engine: Engine) -> None:
        """A function receives a RunContext for the device it was pushed to."""
        seen: list[Any] = []
        var = dagnet_engine.new_var()
        dagnet_engine.push_sync(seen.append, dagnet.cpu(), mutate_vars=[var])
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        assert len(seen) == 1 and isinstance(seen[0], RunContext)
        assert seen[0].ctx == dagnet.cpu()

    def test_mutations_run_in_push_order(self, dagnet_engine: Engine) -> None:
        """Functions mutating one variable run one at a time, in push order."""
        var = dagnet_engine.new_var()
        order: list[int] = []
        box = [0]

        def step(i: int) -> Callable[[RunContext], None]:
            def fn(run_ctx: RunContext) -> None:
                value = box[0]
                time.sleep(0.001 if i % 10 == 0 else 0)  # let a racing function in
                box[0] = value + 1
                order.append(i)
            return fn

        for i in range(100):
            dagnet_engine.push_sync(step(i), mutate_vars=[var])
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert order == list(range(100))
        assert box == [100]

    def test_reads_see_the_last_write_pushed_before(self, dagnet_engine: Engine) -> None:
        """A reader sees exactly the writes pushed before it, none pushed after."""
        var = dagnet_engine.new_var()
        box = [0]
        seen: dict[int, int] = {}

        def write(value: int) -> Callable[[RunContext], None]:
            def fn(run_ctx: RunContext) -> None:
                time.sleep(0.002)
                box[0] = value
            return fn

        def read(key: int) -> Callable[[RunContext], None]:
            def fn(run_ctx: RunContext) -> None:
                seen[key] = box[0]
            return fn

        expected = {}
        for round_ in range(1, 6):
            dagnet_engine.push_sync(write(round_), mutate_vars=[var])
            for k in range(3):
                dagnet_engine.push_sync(read(round_ * 10 + k), const_vars=[var])
                expected[round_ * 10 + k] = round_
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        assert seen == expected

    def test_a_reader_sees_the_version_of_the_writes_pushed_before(
            self, dagnet_engine: Engine) -> None:
        """``Var.version`` read inside a function counts the mutations pushed before it,
        none pushed after; functions that only read the variable leave it alone."""
        var, other = dagnet_engine.new_var(), dagnet_engine.new_var()
        seen: dict[int, int] = {}

        def read(key: int) -> Callable[[RunContext], None]:
            def fn(run_ctx: RunContext) -> None:
                time.sleep(0.001)
                seen[key] = var.version
            return fn

        start = var.version
        for round_ in range(1, 5):
            dagnet_engine.push_sync(lambda run_ctx: None, mutate_vars=[var, other])
            dagnet_engine.push_sync(read(round_), const_vars=[var], mutate_vars=[other])
            dagnet_engine.push_sync(read(round_ + 10), const_vars=[var])
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert seen == {k: start + k % 10 for k in seen} and len(seen) == 8
        assert var.version == start + 4

    def test_writer_waits_for_earlier_readers(self, dagnet_engine: Engine) -> None:
        """A write pushed after reads starts only once every one of them has ended."""
        var = dagnet_engine.new_var()
        events: list[str] = []
        lock = threading.Lock()

        def reader(tag: str) -> Callable[[RunContext], None]:
            def fn(run_ctx: RunContext) -> None:
                time.sleep(0.02)
                with lock:
                    events.append(f"{tag} end")
            return fn

        def writer(run_ctx: RunContext) -> None:
            with lock:
                events.append("write start")

        dagnet_engine.push_sync(reader("r1"), const_vars=[var])
        dagnet_engine.push_sync(reader("r2"), const_vars=[var])
        dagnet_engine.push_sync(writer, mutate_vars=[var])
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert events[-1] == "write start" and sorted(events[:2]) == ["r1 end", "r2 end"]

    def test_readers_may_run_concurrently(self, dagnet_engine_name: str) -> None:
        """Two functions that only read a variable can run at the same time."""
        self.skip_inline(dagnet_engine_name, "its readers run one after the other")
        barrier = threading.Barrier(2, timeout=GUARD)
        with _engine(dagnet_engine_name, cpu_workers=4) as engine:
            var = engine.new_var()
            engine.push_sync(_noop, mutate_vars=[var])
            for name in ("reader1", "reader2"):
                engine.push_sync(lambda run_ctx: barrier.wait(), const_vars=[var], name=name)
            # A BrokenBarrierError (the readers never met) surfaces here.
            engine.wait_for_all(timeout=2 * GUARD)

    def test_nested_push_is_waited_for(self, dagnet_engine: Engine) -> None:
        """A function pushed from inside a function counts for wait_for_all."""
        done: list[int] = []
        for round_ in range(50):
            var = dagnet_engine.new_var()

            def outer(run_ctx: RunContext, round_: int = round_) -> None:
                dagnet_engine.push_sync(lambda rc: done.append(round_), name="inner")

            dagnet_engine.push_sync(outer, mutate_vars=[var], name="outer")
            dagnet_engine.wait_for_all(timeout=GUARD)
            assert done == list(range(round_ + 1))


    def test_work_pushed_from_inside_a_function_stays_on_its_engine(
            self, dagnet_engine: Engine) -> None:
        """Inside a function, the current engine is the one running it, whatever config
        names (a custom operator's own calls cannot wait for another engine to drain)."""
        others = [n for n in dagnet.engine.names() if n != dagnet_engine.name]
        seen: list[Any] = []
        var = dagnet_engine.new_var()

        def outer(run_ctx: RunContext) -> None:
            seen.append((dagnet.engine.running_engine(), dagnet.engine.current()))

        with config.set(engine=others[0] if others else dagnet_engine.name):
            dagnet.engine.current()  # the configured engine is the active one
            dagnet_engine.push_sync(outer, mutate_vars=[var], name="outer")
            dagnet_engine.wait_for_var(var, timeout=GUARD)
        assert seen == [(dagnet_engine, dagnet_engine)]
        assert dagnet.engine.running_engine() is None
    # -- 2. pushing --------------------------------------------------------------

    def test_push_returns_at_once(self, dagnet_engine_name: str,
                                  dagnet_engine: Engine) -> None:
        """Push returns while the function it pushed is still blocked."""
        self.skip_inline(dagnet_engine_name, "push returns when the function has run")
        gate, finished = _gate(), _gate()

        def blocked(run_ctx: RunContext) -> None:
            gate.wait(GUARD)
            finished.set()

        try:
            dagnet_engine.push_sync(blocked, mutate_vars=[dagnet_engine.new_var()])
            assert not gate.is_set() and not finished.is_set()
        finally:
            gate.set()
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert finished.is_set()

    def test_small_functions_keep_order_and_asynchrony(self, dagnet_engine_name: str,
                                                       dagnet_engine: Engine) -> None:
        """Functions pushed as small (``nbytes``) behind a blocked one wait for it in
        push order, and the push of each returns at once."""
        self.skip_inline(dagnet_engine_name, "push returns when the function has run")
        gate, var, order = _gate(), dagnet_engine.new_var(), []
        try:
            dagnet_engine.push_sync(lambda run_ctx: gate.wait(GUARD), mutate_vars=[var])
            for i in range(5):
                dagnet_engine.push_sync(lambda run_ctx, i=i: order.append(i),
                                        mutate_vars=[var], nbytes=8)
            assert order == []
        finally:
            gate.set()
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        assert order == list(range(5))

    def test_a_small_failure_is_raised_as_anywhere(self, dagnet_engine: Engine) -> None:
        """A small function that fails, pushed with nothing outstanding, fails as
        any function does: at the wait, once, and the functions after it are skipped."""
        var, ran = dagnet_engine.new_var(), []

        def fail(run_ctx: RunContext) -> None:
            raise ProgramError("small and broken")

        dagnet_engine.push_sync(fail, mutate_vars=[var], name="broken", nbytes=8)
        dagnet_engine.push_sync(lambda run_ctx: ran.append(1), mutate_vars=[var], nbytes=8)
        with pytest.raises(dagnet.OperatorFailedError, match="small and broken") as caught:
            dagnet_engine.wait_for_var(var, timeout=GUARD)
        assert caught.value.operator == "broken" and ran == []
        dagnet_engine.wait_for_var(var, timeout=GUARD)  # raised once

    def test_push_from_many_threads(self, dagnet_engine: Engine) -> None:
        """8 threads pushing 200 increments each to 4 shared variables at once."""
        num_threads, per_thread, num_vars = 8, 200, 4
        variables = [dagnet_engine.new_var() for _ in range(num_vars)]
        counts = [0] * num_vars
        history: list[list[tuple[int, int]]] = [[] for _ in range(num_vars)]
        barrier = threading.Barrier(num_threads, timeout=GUARD)
        errors: list[BaseException] = []

        def increment(k: int, thread: int, i: int) -> Callable[[RunContext], None]:
            def fn(run_ctx: RunContext) -> None:
                value = counts[k]
                time.sleep(0)  # give the GIL away: a racing increment would be lost
                counts[k] = value + 1
                history[k].append((thread, i))
            return fn

        def client(thread: int) -> None:
            try:
                barrier.wait()
                for i in range(per_thread):
                    k = (thread + i) % num_vars
                    dagnet_engine.push_sync(increment(k, thread, i), mutate_vars=[variables[k]])
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=client, args=(t,)) for t in range(num_threads)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(GUARD)
        assert not errors
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert sum(counts) == num_threads * per_thread
        for k in range(num_vars):
            assert counts[k] == len(history[k])
            for thread in range(num_threads):
                mine = [i for t, i in history[k] if t == thread]
                assert mine == sorted(mine), f"thread {thread}'s pushes to var {k} ran out of order"
                assert mine == [i for i in range(per_thread) if (thread + i) % num_vars == k]

    def test_many_pushes_from_inside_a_function(self, dagnet_engine: Engine) -> None:
        """A function may push any number of functions that wait for it: the
        bound on how far pushes run ahead of the workers never blocks a push
        made inside a function."""
        var = dagnet_engine.new_var()
        ran: list[int] = []

        def fan_out(run_ctx: RunContext) -> None:
            for i in range(300):
                dagnet_engine.push_sync(lambda rc, i=i: ran.append(i), const_vars=[var],
                                        mutate_vars=[dagnet_engine.new_var()])

        def scenario() -> None:
            dagnet_engine.push_sync(fan_out, mutate_vars=[var])
            dagnet_engine.wait_for_all(timeout=GUARD)

        _within(scenario, "300 pushes from inside a function")
        assert sorted(ran) == list(range(300))

    def test_many_pushes_waiting_for_the_pushing_thread(self, dagnet_engine: Engine) -> None:
        """A thread may push any number of functions that wait for an async
        function it completes only afterwards: pushes that run ahead of the
        workers are slowed at most, never deadlocked."""
        var = dagnet_engine.new_var()
        ran: list[int] = []
        pending_op, started, complete = _pending_op()
        # From a thread: the naive engine's push itself waits for on_complete.
        pusher = threading.Thread(
            target=lambda: dagnet_engine.push_async(pending_op, mutate_vars=[var]), daemon=True)
        pusher.start()

        def scenario() -> None:
            try:
                assert started.wait(GUARD), "pending_op never started"
                for i in range(300):
                    dagnet_engine.push_sync(lambda rc, i=i: ran.append(i), const_vars=[var],
                                            mutate_vars=[dagnet_engine.new_var()])
            finally:
                complete()
            dagnet_engine.wait_for_all(timeout=GUARD)

        _within(scenario, "300 pushes waiting for the pushing thread")
        pusher.join(GUARD)
        assert sorted(ran) == list(range(300))

    # -- 3. failures -------------------------------------------------------------

    def test_failure_propagates_and_is_raised_once(self, dagnet_engine: Engine) -> None:
        """Dependents are skipped and inherit the failure; it is raised at the next
        wait on any affected variable, once; unaffected work goes on."""
        a, b, c, free = (dagnet_engine.new_var(n) for n in "abcx")
        ran: list[str] = []

        def bad_op(run_ctx: RunContext) -> None:
            raise ValueError("boom")

        dagnet_engine.push_sync(bad_op, mutate_vars=[a], name="bad_op")
        dagnet_engine.push_sync(lambda rc: ran.append("reads a"), const_vars=[a],
                                mutate_vars=[b], name="dependent")
        dagnet_engine.push_sync(lambda rc: ran.append("reads b"), const_vars=[b],
                                mutate_vars=[c], name="dependent2")
        dagnet_engine.push_sync(lambda rc: ran.append("free"), mutate_vars=[free], name="free")
        dagnet_engine.wait_for_var(free, timeout=GUARD)
        with pytest.raises(dagnet.OperatorFailedError) as info:
            dagnet_engine.wait_for_var(c, timeout=GUARD)
        assert "bad_op" in str(info.value) and info.value.operator == "bad_op"
        assert isinstance(info.value.__cause__, ValueError)
        assert info.value.__cause__.__traceback__ is not None
        assert ran == ["free"]
        # Raised once: no other wait raises it again.
        dagnet_engine.wait_for_var(c, timeout=GUARD)
        dagnet_engine.wait_for_var(a, timeout=GUARD)
        dagnet_engine.wait_for_var(b, timeout=GUARD)
        dagnet_engine.wait_for_all(timeout=GUARD)
        # Once raised, the variables are usable again.
        dagnet_engine.push_sync(lambda rc: ran.append("after"), const_vars=[a], mutate_vars=[b])
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert ran == ["free", "after"]

    def test_failure_is_raised_at_wait_for_all_once(self, dagnet_engine: Engine) -> None:
        """wait_for_all raises a failure no variable wait has raised, once."""
        var = dagnet_engine.new_var()

        def failing_op(run_ctx: RunContext) -> None:
            raise KeyError("missing")

        dagnet_engine.push_sync(failing_op, mutate_vars=[var])
        with pytest.raises(dagnet.OperatorFailedError, match="failing_op") as info:
            dagnet_engine.wait_for_all(timeout=GUARD)
        assert isinstance(info.value.__cause__, KeyError)
        assert info.value.__cause__.__traceback__ is not None
        dagnet_engine.wait_for_all(timeout=GUARD)
        dagnet_engine.wait_for_var(var, timeout=GUARD)

    def test_failure_is_attached_only_to_mutated_vars(self, dagnet_engine: Engine) -> None:
        """A function that only reads a variable leaves it clean when it fails."""
        read, written = dagnet_engine.new_var(), dagnet_engine.new_var()

        def reader_fails(run_ctx: RunContext) -> None:
            raise RuntimeError("read failed")

        dagnet_engine.push_sync(reader_fails, const_vars=[read], mutate_vars=[written])
        dagnet_engine.wait_for_var(read, timeout=GUARD)
        with pytest.raises(dagnet.OperatorFailedError, match="reader_fails"):
            dagnet_engine.wait_for_var(written, timeout=GUARD)

    def test_first_failure_pushed_is_raised_first(self, dagnet_engine_name: str) -> None:
        """With several failures outstanding, wait_for_all raises the earliest
        pushed (even when a later one failed first) and names the others."""
        gate = _gate()
        if dagnet_engine_name in self.inline_engines:
            gate.set()

        def first(run_ctx: RunContext) -> None:
            gate.wait(GUARD)
            raise ValueError("first")

        def second(run_ctx: RunContext) -> None:
            try:
                raise ValueError("second")
            finally:
                gate.set()

        with _engine(dagnet_engine_name, cpu_workers=4) as engine:
            engine.push_sync(first, mutate_vars=[engine.new_var()], name="first_op")
            engine.push_sync(second, mutate_vars=[engine.new_var()], name="second_op")
            with pytest.raises(dagnet.OperatorFailedError) as info:
                engine.wait_for_all(timeout=GUARD)
        assert info.value.operator == "first_op"
        assert "1 more failed: 'second_op'" in str(info.value)

    def test_push_async_completes_on_another_thread(self, dagnet_engine: Engine) -> None:
        """An async function is finished when on_complete is called, from any thread."""
        var = dagnet_engine.new_var()
        box = [0]
        seen: list[int] = []

        def start(run_ctx: RunContext, on_complete: Callable[..., None]) -> None:
            def finish() -> None:
                box[0] = 42
                on_complete()
            threading.Timer(0.05, finish).start()

        dagnet_engine.push_async(start, mutate_vars=[var])
        dagnet_engine.push_sync(lambda rc: seen.append(box[0]), const_vars=[var])
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        assert box == [42] and seen == [42]

    def test_push_async_reports_failure(self, dagnet_engine: Engine) -> None:
        """on_complete(error) from another thread fails the function like a raise."""
        var = dagnet_engine.new_var()
        ran: list[str] = []

        def async_op(run_ctx: RunContext, on_complete: Callable[..., None]) -> None:
            def finish() -> None:
                try:
                    raise OSError("device lost")
                except OSError as exc:
                    on_complete(exc)
            threading.Thread(target=finish).start()

        dagnet_engine.push_async(async_op, mutate_vars=[var], name="async_op")
        dagnet_engine.push_sync(lambda rc: ran.append("dependent"), mutate_vars=[var])
        with pytest.raises(dagnet.OperatorFailedError, match="async_op") as info:
            dagnet_engine.wait_for_var(var, timeout=GUARD)
        assert isinstance(info.value.__cause__, OSError)
        assert info.value.__cause__.__traceback__ is not None
        assert ran == []

    def test_push_async_that_raises(self, dagnet_engine: Engine) -> None:
        """An async function that raises before calling on_complete has failed."""
        var = dagnet_engine.new_var()

        def raises_early(run_ctx: RunContext, on_complete: Callable[..., None]) -> None:
            raise ValueError("early")

        dagnet_engine.push_async(raises_early, mutate_vars=[var])
        with pytest.raises(dagnet.OperatorFailedError, match="raises_early"):
            dagnet_engine.wait_for_var(var, timeout=GUARD)
        dagnet_engine.wait_for_all(timeout=GUARD)

    def test_push_async_raising_after_complete(self, dagnet_engine: Engine) -> None:
        """An async function that calls on_complete() itself and then raises has
        failed: the functions after it are skipped, as for any failure."""
        var = dagnet_engine.new_var()
        ran: list[str] = []

        def late_raiser(run_ctx: RunContext, on_complete: Callable[..., None]) -> None:
            on_complete()
            raise ValueError("after completing")

        dagnet_engine.push_async(late_raiser, mutate_vars=[var])
        dagnet_engine.push_sync(lambda rc: ran.append("next"), mutate_vars=[var])
        with pytest.raises(dagnet.OperatorFailedError, match="late_raiser"):
            dagnet_engine.wait_for_var(var, timeout=GUARD)
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert ran == []

    def test_push_async_raising_after_completion_elsewhere(self, dagnet_engine: Engine) -> None:
        """An async function completed by another thread that raises afterwards:
        its variables were released at on_complete, so the functions after it
        run, and the error is raised at the next wait_for_all, not lost (the
        function counts as outstanding until it returns)."""
        var = dagnet_engine.new_var()
        ran: list[str] = []

        def raises_late(run_ctx: RunContext, on_complete: Callable[..., None]) -> None:
            helper = threading.Thread(target=on_complete)
            helper.start()
            helper.join(GUARD)
            time.sleep(0.01)  # let a wait_for_all that would not wait for the raise return
            raise ValueError("after completion elsewhere")

        dagnet_engine.push_async(raises_late, mutate_vars=[var])
        dagnet_engine.push_sync(lambda rc: ran.append("next"), mutate_vars=[var])
        with pytest.raises(dagnet.OperatorFailedError, match="raises_late") as info:
            dagnet_engine.wait_for_all(timeout=GUARD)
        assert isinstance(info.value.__cause__, ValueError)
        assert ran == ["next"]
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        dagnet_engine.wait_for_all(timeout=GUARD)

    @pytest.mark.parametrize("kind", [KeyboardInterrupt, SystemExit])
    def test_interrupt_inside_a_function_is_raised_as_itself(
            self, dagnet_engine: Engine, kind: type[BaseException]) -> None:
        """A KeyboardInterrupt or SystemExit raised by a function reaches the
        waiting caller as itself, not wrapped in OperatorFailedError; it
        propagates like any failure, and goes before ordinary failures at
        wait_for_all."""
        var, after = dagnet_engine.new_var("var"), dagnet_engine.new_var("after")
        ran: list[str] = []
        error = kind("stop")

        def stopping_op(run_ctx: RunContext) -> None:
            raise error

        dagnet_engine.push_sync(stopping_op, mutate_vars=[var])
        dagnet_engine.push_sync(lambda rc: ran.append("dependent"), const_vars=[var],
                                mutate_vars=[after])
        with pytest.raises(kind) as info:
            dagnet_engine.wait_for_var(after, timeout=GUARD)
        assert info.value is error and ran == []
        if hasattr(error, "add_note"):
            assert any("stopping_op" in note for note in info.value.__notes__)
        dagnet_engine.wait_for_all(timeout=GUARD)  # raised once

        def ordinary_failure(run_ctx: RunContext) -> None:
            raise ValueError("ordinary")

        error = kind("stop again")
        dagnet_engine.push_sync(ordinary_failure, mutate_vars=[dagnet_engine.new_var()])
        dagnet_engine.push_sync(stopping_op, mutate_vars=[var])
        with pytest.raises(kind) as info:
            dagnet_engine.wait_for_all(timeout=GUARD)
        assert info.value is error
        if hasattr(error, "add_note"):
            assert any("ordinary_failure" in note for note in info.value.__notes__)
        dagnet_engine.wait_for_all(timeout=GUARD)
        dagnet_engine.push_sync(lambda rc: ran.append("after"), mutate_vars=[var])
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        assert ran == ["after"]

    def test_on_complete_twice_is_an_error(self, dagnet_engine: Engine) -> None:
        """A second on_complete() raises EngineError in its caller; here the
        function itself, so the error is raised at wait_for_all."""
        var = dagnet_engine.new_var()

        def twice(run_ctx: RunContext, on_complete: Callable[..., None]) -> None:
            on_complete()
            on_complete()

        dagnet_engine.push_async(twice, mutate_vars=[var])
        with pytest.raises(dagnet.OperatorFailedError, match="twice") as info:
            dagnet_engine.wait_for_all(timeout=GUARD)
        assert isinstance(info.value.__cause__, dagnet.EngineError)
        assert "called twice" in str(info.value.__cause__)

    def test_async_completion_may_push(self, dagnet_engine: Engine) -> None:
        """The thread that completes an async function may push before it does."""
        var, other = dagnet_engine.new_var(), dagnet_engine.new_var()
        ran: list[str] = []

        def start(run_ctx: RunContext, on_complete: Callable[..., None]) -> None:
            def finish() -> None:
                dagnet_engine.push_sync(lambda rc: ran.append("follow-up"), mutate_vars=[other])
                on_complete()
            threading.Thread(target=finish).start()

        def scenario() -> None:
            dagnet_engine.push_async(start, mutate_vars=[var])
            dagnet_engine.wait_for_var(var, timeout=GUARD)
            dagnet_engine.wait_for_all(timeout=GUARD)

        _within(scenario, "push_async whose completing thread pushes")
        assert ran == ["follow-up"]

    def test_on_complete_from_a_thread_the_function_joins(self, dagnet_engine: Engine) -> None:
        """on_complete may be called from another thread while the function
        still runs and waits for that thread."""
        var = dagnet_engine.new_var()
        joined = _gate()

        def start(run_ctx: RunContext, on_complete: Callable[..., None]) -> None:
            helper = threading.Thread(target=on_complete)
            helper.start()
            helper.join(GUARD)
            if not helper.is_alive():
                joined.set()

        def scenario() -> None:
            dagnet_engine.push_async(start, mutate_vars=[var])
            dagnet_engine.wait_for_var(var, timeout=GUARD)

        _within(scenario, "on_complete from a joined thread")
        # The function may still be returning: completion is on_complete's call.
        assert joined.wait(GUARD), "on_complete's thread never finished"

    # -- 4. waiting ----------------------------------------------------------------

    def test_wait_inside_function_never_deadlocks(self, dagnet_engine: Engine) -> None:
        """A wait from inside an engine function completes or raises
        EngineDeadlockError at once; it never needs its timeout."""
        own, other, free = (dagnet_engine.new_var(n) for n in ("own", "other", "free"))
        outcomes: dict[str, str] = {}

        def waiting(tag: str, wait: Callable[[], None]) -> Callable[[RunContext], None]:
            def fn(run_ctx: RunContext) -> None:
                try:
                    wait()
                    outcomes[tag] = "completed"
                except dagnet.EngineDeadlockError:
                    outcomes[tag] = "deadlock"
                except dagnet.EngineTimeoutError:
                    outcomes[tag] = "timed out"
            return fn

        dagnet_engine.push_sync(waiting("own", lambda: dagnet_engine.wait_for_var(own, timeout=3)),
                                mutate_vars=[own])
        dagnet_engine.push_sync(waiting("own queued",
                                        lambda: dagnet_engine.wait_for_var(own, timeout=3)),
                                mutate_vars=[own])
        dagnet_engine.push_sync(_noop, mutate_vars=[own])
        dagnet_engine.push_sync(waiting("free",
                                        lambda: dagnet_engine.wait_for_var(free, timeout=3)),
                                mutate_vars=[other])
        dagnet_engine.push_sync(waiting("all", lambda: dagnet_engine.wait_for_all(timeout=3)),
                                mutate_vars=[other])
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert set(outcomes) == {"own", "own queued", "free", "all"}
        assert "timed out" not in outcomes.values(), outcomes
        assert outcomes["free"] == "completed"

    def test_wait_inside_function_on_a_held_variable(self, dagnet_engine_name: str) -> None:
        """Waiting inside a function for a variable another blocked function
        writes raises EngineDeadlockError at once."""
        self.skip_inline(dagnet_engine_name, "no other function can be holding a variable")
        with _engine(dagnet_engine_name, cpu_workers=4) as engine:
            held, mine = engine.new_var("held"), engine.new_var("mine")
            gate = _gate()
            outcome: list[BaseException | None] = []

            def waiter(run_ctx: RunContext) -> None:
                try:
                    engine.wait_for_var(held, timeout=3)
                    outcome.append(None)
                except BaseException as exc:
                    outcome.append(exc)
                finally:
                    gate.set()

            try:
                engine.push_sync(lambda rc: gate.wait(GUARD), mutate_vars=[held], name="holder")
                engine.push_sync(waiter, mutate_vars=[mine], name="waiter")
                engine.wait_for_var(mine, timeout=GUARD)
            finally:
                gate.set()
            engine.wait_for_all(timeout=GUARD)
        assert len(outcome) == 1 and isinstance(outcome[0], dagnet.EngineDeadlockError), outcome
        assert "holder" in str(outcome[0])

    def test_wait_timeout_names_the_holder(self, dagnet_engine_name: str,
                                           dagnet_engine: Engine) -> None:
        """On timeout, EngineTimeoutError names the operator holding the variable."""
        self.skip_inline(dagnet_engine_name, "nothing is outstanding at a wait")
        var = dagnet_engine.new_var()
        gate = _gate()
        try:
            dagnet_engine.push_sync(lambda rc: gate.wait(GUARD), mutate_vars=[var], name="slow_op")
            with pytest.raises(dagnet.EngineTimeoutError, match="slow_op"):
                dagnet_engine.wait_for_var(var, timeout=0.2)
            with pytest.raises(dagnet.EngineTimeoutError, match="slow_op"):
                dagnet_engine.wait_for_all(timeout=0.2)
            with pytest.raises(TimeoutError):  # the builtin, for code that knows no dagnet
                dagnet_engine.wait_for_var(var, timeout=0.01)
        finally:
            gate.set()
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        dagnet_engine.wait_for_all(timeout=GUARD)

    def test_wait_for_var_waits_for_readers(self, dagnet_engine_name: str,
                                            dagnet_engine: Engine) -> None:
        """wait_for_var waits for every function pushed before that uses the
        variable, those that only read it included."""
        self.skip_inline(dagnet_engine_name, "nothing is outstanding at a wait")
        var = dagnet_engine.new_var()
        gate = _gate()
        try:
            dagnet_engine.push_sync(_noop, mutate_vars=[var])
            dagnet_engine.push_sync(lambda rc: gate.wait(GUARD), const_vars=[var],
                                    name="slow_reader")
            with pytest.raises(dagnet.EngineTimeoutError, match="slow_reader"):
                dagnet_engine.wait_for_var(var, timeout=0.2)
        finally:
            gate.set()
        dagnet_engine.wait_for_var(var, timeout=GUARD)

    # -- 5. deleting -----------------------------------------------------------------

    def test_delete_var_waits_for_its_users(self, dagnet_engine_name: str,
                                            dagnet_engine: Engine) -> None:
        """The deletion runs only after every function using the variable finished."""
        var = dagnet_engine.new_var()
        events: list[str] = []
        gate = _gate()
        if dagnet_engine_name in self.inline_engines:
            gate.set()

        def user(tag: str) -> Callable[[RunContext], None]:
            def fn(run_ctx: RunContext) -> None:
                gate.wait(GUARD)
                events.append(tag)
            return fn

        try:
            dagnet_engine.push_sync(user("writer"), mutate_vars=[var])
            dagnet_engine.push_sync(user("reader"), const_vars=[var])
            dagnet_engine.delete_var(var, fn=lambda rc: events.append("deleted"))
            time.sleep(0.02)
            assert "deleted" not in events or events[:2] == ["writer", "reader"]
        finally:
            gate.set()
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert events == ["writer", "reader", "deleted"]

    def test_push_after_delete_var_raises(self, dagnet_engine: Engine) -> None:
        """Using a deleted variable raises at push; nothing pushed before is lost."""
        var, other = dagnet_engine.new_var("doomed"), dagnet_engine.new_var()
        ran: list[int] = []
        for i in range(5):
            dagnet_engine.push_sync(lambda rc, i=i: ran.append(i), mutate_vars=[var])
        dagnet_engine.delete_var(var)
        with pytest.raises(dagnet.DeletedVariableError, match="doomed"):
            dagnet_engine.push_sync(_noop, mutate_vars=[var])
        with pytest.raises(dagnet.DeletedVariableError):
            dagnet_engine.push_sync(_noop, const_vars=[var], mutate_vars=[other])
        with pytest.raises(dagnet.DeletedVariableError):
            dagnet_engine.new_operator(_noop, const_vars=[var])
        with pytest.raises(dagnet.DeletedVariableError):
            dagnet_engine.delete_var(var)
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert ran == list(range(5))

    def test_operator_pushed_many_times(self, dagnet_engine: Engine) -> None:
        """A reusable operator pushed N times behaves like N pushes."""
        var = dagnet_engine.new_var()
        box = [0]
        order: list[int] = []

        def bump(run_ctx: RunContext) -> None:
            value = box[0]
            time.sleep(0)
            box[0] = value + 1
            order.append(value)

        opr = dagnet_engine.new_operator(bump, mutate_vars=[var], name="bump")
        for _ in range(20):
            dagnet_engine.push(opr)
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        assert box == [20] and order == list(range(20))

    def test_push_after_delete_operator_raises(self, dagnet_engine_name: str,
                                               dagnet_engine: Engine) -> None:
        """Pushes made before delete_operator still run; pushes after raise."""
        var = dagnet_engine.new_var()
        gate = _gate()
        if dagnet_engine_name in self.inline_engines:
            gate.set()
        count = [0]

        def counted(run_ctx: RunContext) -> None:
            gate.wait(GUARD)
            count[0] += 1

        opr = dagnet_engine.new_operator(counted, mutate_vars=[var])
        try:
            for _ in range(5):
                dagnet_engine.push(opr)
            dagnet_engine.delete_operator(opr)
            with pytest.raises(dagnet.DeletedVariableError, match="counted"):
                dagnet_engine.push(opr)
        finally:
            gate.set()
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert count == [5]

    def test_async_operator(self, dagnet_engine: Engine) -> None:
        """new_operator(is_async=True) gives fn an on_complete, like push_async."""
        var = dagnet_engine.new_var()
        done: list[int] = []

        def start(run_ctx: RunContext, on_complete: Callable[..., None]) -> None:
            threading.Timer(0.01, lambda: (done.append(1), on_complete())).start()

        opr = dagnet_engine.new_operator(start, mutate_vars=[var], is_async=True)
        for _ in range(3):
            dagnet_engine.push(opr)
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        assert done == [1, 1, 1]

    # -- 6. bad input ------------------------------------------------------------------

    BAD_CALLS: dict[str, Callable[[Engine, Var], Any]] = {
        "fn not callable": lambda e, v: e.push_sync(42, mutate_vars=[v]),
        "async fn not callable": lambda e, v: e.push_async(None, mutate_vars=[v]),
        "ctx not a Context": lambda e, v: e.push_sync(_noop, "cpu", mutate_vars=[v]),
        "prop not a FnProperty": lambda e, v: e.push_sync(_noop, mutate_vars=[v], prop="copy"),
        "foreign mutated var": lambda e, v: e.push_sync(_noop, mutate_vars=[v, object()]),
        "foreign read var": lambda e, v: e.push_sync(_noop, const_vars=["v"], mutate_vars=[v]),
        "a var, not a list": lambda e, v: e.push_sync(_noop, mutate_vars=v),
        "wait on a foreign object": lambda e, v: e.wait_for_var("v", timeout=GUARD),
        "push a non-operator": lambda e, v: e.push(_noop),
        "operator fn not callable": lambda e, v: e.new_operator("fn", mutate_vars=[v]),
        "operator foreign var": lambda e, v: e.new_operator(_noop, mutate_vars=[1]),
        "delete a foreign object": lambda e, v: e.delete_var(object()),
        "delete with a bad fn": lambda e, v: e.delete_var(v, fn=3),
        "delete a non-operator": lambda e, v: e.delete_operator(v),
    }

    @pytest.mark.parametrize("bad_call", sorted(BAD_CALLS))
    def test_bad_input_raises_type_error(self, dagnet_engine: Engine, bad_call: str) -> None:
        """A bad argument raises an error that is a DagnetError and a TypeError,
        naming what was wrong; work pushed before it is not lost."""
        var = dagnet_engine.new_var()
        ran: list[str] = []
        dagnet_engine.push_sync(lambda rc: ran.append("before"), mutate_vars=[var])
        with pytest.raises(TypeError) as info:
            self.BAD_CALLS[bad_call](dagnet_engine, var)
        assert _is_type_error(info.value), f"{type(info.value).__mro__} is not a DagnetError"
        dagnet_engine.push_sync(lambda rc: ran.append("after"), mutate_vars=[var])
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert ran == ["before", "after"]

    def test_duplicate_vars_are_deduplicated(self, dagnet_engine: Engine) -> None:
        """A variable listed twice counts once: the function runs once, and does
        not wait for itself."""
        var = dagnet_engine.new_var()
        count = [0]
        for const_vars, mutate_vars in (([], [var, var]), ([var, var], []),
                                        ([var, var], [var, var]), ([var], (v for v in [var]))):
            dagnet_engine.push_sync(lambda rc: count.__setitem__(0, count[0] + 1),
                                    const_vars=const_vars, mutate_vars=mutate_vars)
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert count == [4]

    def test_none_means_no_variables(self, dagnet_engine: Engine) -> None:
        """None for const_vars or mutate_vars means no variables."""
        ran: list[str] = []
        dagnet_engine.push_sync(lambda rc: ran.append("a"), const_vars=None, mutate_vars=None)
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert ran == ["a"]

    def test_read_and_mutated_counts_as_mutated(self, dagnet_engine_name: str,
                                                dagnet_engine: Engine) -> None:
        """A variable both read and mutated is treated as mutated: a later reader
        waits for it."""
        var = dagnet_engine.new_var()
        gate = _gate()
        if dagnet_engine_name in self.inline_engines:
            gate.set()
        events: list[str] = []

        def both(run_ctx: RunContext) -> None:
            gate.wait(GUARD)
            events.append("both")

        try:
            dagnet_engine.push_sync(both, const_vars=[var], mutate_vars=[var])
            dagnet_engine.push_sync(lambda rc: events.append("reader"), const_vars=[var])
            time.sleep(0.05)
            assert "reader" not in events or events == ["both", "reader"]
        finally:
            gate.set()
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert events == ["both", "reader"]

    # -- 7. priority ------------------------------------------------------------------

    def test_priority_work_overtakes_saturated_compute(self, dagnet_engine_name: str) -> None:
        """With every compute worker blocked, prioritized work still runs."""
        if dagnet_engine_name not in self.priority_lane_engines:
            pytest.skip(f"engine {dagnet_engine_name!r} has no priority lane")
        workers = 2
        with _engine(dagnet_engine_name, cpu_workers=workers, priority_workers=1) as engine:
            gate = _gate()
            started = threading.Semaphore(0)
            ran: list[str] = []

            def blocked(run_ctx: RunContext) -> None:
                started.release()
                gate.wait(GUARD)

            try:
                for _ in range(workers + 2):
                    engine.push_sync(blocked, mutate_vars=[engine.new_var()])
                for _ in range(workers):
                    assert started.acquire(timeout=GUARD)
                first, second = engine.new_var(), engine.new_var()
                engine.push_sync(lambda rc: ran.append("priority"), mutate_vars=[first],
                                 priority=1)
                engine.push_sync(lambda rc: ran.append("prioritized"), mutate_vars=[second],
                                 prop=FnProperty.CPU_PRIORITIZED)
                engine.wait_for_var(first, timeout=GUARD)
                engine.wait_for_var(second, timeout=GUARD)
                assert not gate.is_set()
                assert sorted(ran) == ["prioritized", "priority"]
            finally:
                gate.set()
            engine.wait_for_all(timeout=GUARD)

    # -- 8. Ctrl-C and exit -----------------------------------------------------------

    @pytest.mark.parametrize("wait", ["wait_for_var", "wait_for_all"])
    def test_ctrl_c_interrupts_a_wait(self, dagnet_engine: Engine, wait: str) -> None:
        """Ctrl-C during a wait for a function that never completes raises
        KeyboardInterrupt naming the wait and the function; the engine stays
        usable, and the function finishes normally when it completes."""
        var, other = dagnet_engine.new_var("held"), dagnet_engine.new_var("other")
        pending_op, started, complete = _pending_op()
        # From a thread: the naive engine's push itself waits for on_complete.
        pusher = threading.Thread(
            target=lambda: dagnet_engine.push_async(pending_op, mutate_vars=[var]), daemon=True)
        pusher.start()
        ran: list[str] = []
        try:
            assert started.wait(GUARD), "pending_op never started"
            args = (var,) if wait == "wait_for_var" else ()
            interrupt = interrupted(lambda: getattr(dagnet_engine, wait)(*args, timeout=GUARD))
            assert wait in str(interrupt) and "pending_op" in str(interrupt), interrupt
            dagnet_engine.push_sync(lambda rc: ran.append("other"), mutate_vars=[other])
            dagnet_engine.wait_for_var(other, timeout=GUARD)
            assert ran == ["other"]
        finally:
            complete()
            pusher.join(GUARD)
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        dagnet_engine.wait_for_all(timeout=GUARD)
        dagnet_engine.push_sync(lambda rc: ran.append("held"), mutate_vars=[var])
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert ran == ["other", "held"]

    def test_ctrl_c_interrupts_push_async_awaiting_on_complete(self, dagnet_engine: Engine
                                                               ) -> None:
        """Ctrl-C on a thread that pushed an async function that never completes
        (in push itself on the naive engine, in the next wait on the others)
        raises KeyboardInterrupt naming the function; the engine stays usable."""
        var = dagnet_engine.new_var("held")
        pending_op, started, complete = _pending_op()

        def push_then_wait() -> None:
            dagnet_engine.push_async(pending_op, mutate_vars=[var])
            dagnet_engine.wait_for_var(var, timeout=GUARD)

        try:
            interrupt = interrupted(push_then_wait)
            assert "pending_op" in str(interrupt), interrupt
        finally:
            complete()
        ran: list[str] = []
        dagnet_engine.push_sync(lambda rc: ran.append("after"), mutate_vars=[var])
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        dagnet_engine.wait_for_all(timeout=GUARD)
        assert ran == ["after"]

    def test_ctrl_c_while_a_function_runs(self, dagnet_engine_name: str,
                                          dagnet_engine: Engine) -> None:
        """Ctrl-C while a pushed function runs.  The naive engine runs it inside push
        on this thread: Ctrl-C interrupts the function, its push raises the
        KeyboardInterrupt, and the next wait on what it writes reports it as
        interrupted.  The others run it on a worker: the wait after the push
        raises it, and completes once the function does.  Either way the engine
        then runs new work on the variable."""
        var = dagnet_engine.new_var("written")
        gate = threading.Event()

        def busy_op(run_ctx: RunContext) -> None:
            gate.wait(GUARD)

        def push_then_wait() -> None:
            dagnet_engine.push_sync(busy_op, mutate_vars=[var])
            dagnet_engine.wait_for_var(var, timeout=GUARD)

        try:
            interrupt = interrupted(push_then_wait)
        finally:
            gate.set()
        if dagnet_engine_name in self.inline_engines:
            with pytest.raises(dagnet.OperatorFailedError, match="interrupted") as info:
                dagnet_engine.wait_for_var(var, timeout=GUARD)
            assert info.value.original is interrupt
        else:
            assert "busy_op" in str(interrupt), interrupt
            dagnet_engine.wait_for_var(var, timeout=GUARD)
        dagnet_engine.wait_for_all(timeout=GUARD)  # reported once
        ran: list[str] = []
        dagnet_engine.push_sync(lambda rc: ran.append("after"), mutate_vars=[var])
        dagnet_engine.wait_for_var(var, timeout=GUARD)
        assert ran == ["after"]

    def test_ctrl_c_storm_while_pushing(self, dagnet_engine_name: str) -> None:
        """SIGINT every millisecond or so while this thread and two others push random
        sync and async functions (and this one waits now and then), until enough of
        them landed inside the engine's own code (a push, mostly: held back there,
        and counted): every function that completed read what a serial replay
        gives, each interrupt reached this thread as KeyboardInterrupt, and the
        engine then runs new work on every variable."""
        # In a fresh interpreter (the engine must be registered by an entry point):
        # an interrupt that lands in a finalizer is reported as unraisable, which
        # must not reach pytest's own code.
        result = subprocess.run(
            [sys.executable, "-m", "dagnet.testing.ctrl_c", dagnet_engine_name],
            capture_output=True, text=True, timeout=6 * GUARD)
        assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
        run = json.loads(result.stdout.strip().splitlines()[-1])
        assert run["held"] >= 5, (
            f"only {run['held']} of {run['signals']} interrupts landed in the engine's code")

    @pytest.mark.parametrize("kind", ["async, never completed", "sync, never returning"])
    def test_exit_with_a_function_that_never_completes(self, dagnet_engine_name: str,
                                                       kind: str) -> None:
        """At interpreter exit, a function that never completes (an async one that
        never calls on_complete, or one that never returns) holds exit up for the
        engine's exit_timeout at most; a warning names it.  (Run in a fresh
        interpreter: the engine must be registered by an entry point.)"""
        script = textwrap.dedent("""
            import sys, threading
            import dagnet

            engine = dagnet.engine.get(sys.argv[1])
            engine.exit_timeout = 0.5
            started = threading.Event()

            def pending_op(run_ctx, on_complete):
                started.set()

            def stuck_op(run_ctx):
                started.set()
                threading.Event().wait()

            def push():
                if sys.argv[2].startswith("async"):
                    engine.push_async(pending_op, mutate_vars=[engine.new_var()])
                else:
                    engine.push_sync(stuck_op, mutate_vars=[engine.new_var()])

            # From a thread: the naive engine's push runs the function.
            threading.Thread(target=push, daemon=True).start()
            assert started.wait(10)
            print("exiting", flush=True)
        """)
        start = time.monotonic()
        result = subprocess.run([sys.executable, "-c", script, dagnet_engine_name, kind],
                                capture_output=True, text=True, timeout=3 * GUARD)
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "exiting"
        name = "'pending_op'" if kind.startswith("async") else "'stuck_op'"
        assert "RuntimeWarning" in result.stderr and name in result.stderr, result.stderr
        assert "exit_timeout" in result.stderr, result.stderr
        assert time.monotonic() - start < GUARD, "exit took longer than exit_timeout allows"

    @pytest.mark.parametrize("how", ["os.fork", "multiprocessing"])
    def test_fork_with_work_outstanding(self, dagnet_engine_name: str, how: str) -> None:
        """Forking (``os.fork``, or a ``multiprocessing`` process with the fork start
        method) with a function that never completes and others still running: the
        fork waits engine_fork_timeout at most and warns, naming it; the child
        computes with the engine within 5 s of the fork, sees the work that
        finished before it, and reports the function it never ran as failed
        (EngineForkError); the parent's work finishes as if nothing happened.
        (Run in a fresh interpreter: the engine must be registered by an entry
        point.)"""
        if not hasattr(os, "fork"):
            pytest.skip("needs os.fork")
        result = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(_FORK_WITH_WORK_OUTSTANDING),
             dagnet_engine_name, how], capture_output=True, text=True, timeout=6 * GUARD)
        assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
        lines = result.stdout.split()
        assert lines[-1] == "ok", f"{result.stdout}\n{result.stderr}"
        child_seconds = float(lines[-2])
        assert child_seconds < 5, f"the child computed {child_seconds:.2f}s after the fork"
        assert "RuntimeWarning" in result.stderr and "'never_completing'" in result.stderr, (
            result.stderr)

    # -- 9. random programs -----------------------------------------------------------

    def test_random_programs_match_naive(self, dagnet_engine_name: str) -> None:
        """A random program gives the naive engine's values, failures and skips,
        and conflicting operations ran in push order."""

        # Hypothesis runs a function, not the method: pytest calls each
        # parametrization on a new instance, which hypothesis rejects.
        @given(program=programs())
        def check(program: tuple[int, tuple[Op, ...]]) -> None:
            num_vars, ops = program
            with _engine(dagnet_engine_name) as engine:
                run = run_program(engine, num_vars, ops)
            with _engine("naive") as naive:
                reference = run_program(naive, num_vars, ops)
            assert not run.push_errors and not reference.push_errors
            _check_serialized(ops, run, lambda i, j: True)
            assert run.values == reference.values
            assert run.ran == reference.ran
            assert {i: seen for i, (_, _, seen) in run.log.items()} == {
                i: seen for i, (_, _, seen) in reference.log.items()}
            assert max(run.runs) <= 1
            assert run.error == reference.error
            assert _failed_names(run.error) == {f"op{i}" for i in run.ran if ops[i].fail}

        check()

    def test_random_programs_from_many_threads(self, dagnet_engine_name: str) -> None:
        """A random program pushed from 4 threads at once: conflicting operations
        never overlap, each thread's run in its push order, every operation ran
        or was skipped once, and the values are those of a serial replay."""

        @given(program=programs())
        def check(program: tuple[int, tuple[Op, ...]]) -> None:
            num_vars, ops = program
            with _engine(dagnet_engine_name) as engine:
                run = run_program(engine, num_vars, ops, client_threads=4)
            assert not run.push_errors
            _check_serialized(ops, run, lambda i, j: i % 4 == j % 4)
            assert max(run.runs) <= 1
            _check_replay(num_vars, ops, run)
            failed = {i for i in run.ran if ops[i].fail}
            assert _failed_names(run.error) == {f"op{i}" for i in failed}
            # What did not run was skipped: it used a variable a failure reached.
            tainted: set[int] = set()
            for i in failed:
                tainted |= ops[i].mutated
            skipped = set(range(len(ops))) - run.ran
            changed = True
            while changed:
                changed = False
                for i in skipped:
                    if ops[i].used & tainted and not ops[i].mutated <= tainted:
                        tainted |= ops[i].mutated
                        changed = True
            for i in skipped:
                assert ops[i].used & tainted, f"op{i} neither ran nor met a failure"

        check()
