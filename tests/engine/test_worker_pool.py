"""The threaded engines' worker pool: which worker a block goes to, and stopping.

Work goes to the worker that became idle last (its caches are the warmest; with a
shared first-in-first-out queue an executor's passes alternated between workers), or,
with every worker busy, to a backlog the workers take from as they finish."""

from __future__ import annotations

import threading
import time

import dagnet
from dagnet.engine import Block, FnProperty, WorkerPool

TIMEOUT = 10


def _pool(workers: int) -> WorkerPool:
    return WorkerPool("test", workers, lambda block, run_ctx, error: block.fn(run_ctx),
                      lambda ctx: None)


def _block(fn) -> Block:
    return Block(fn, dagnet.cpu(), (), (), FnProperty.NORMAL, 0, "test", False)


def _idle_workers(pool: WorkerPool, count: int) -> None:
    """Wait until ``count`` workers of ``pool`` wait for work."""
    deadline = time.monotonic() + TIMEOUT
    while len(pool._idle) < count:
        assert time.monotonic() < deadline, "the workers did not become idle"
        time.sleep(0.001)


def test_work_goes_to_the_worker_idle_the_shortest_time():
    pool = _pool(2)
    ran = []
    try:
        for _ in range(6):
            done = threading.Event()
            pool.submit(_block(lambda _ctx, done=done: ran.append(threading.get_ident())
                               or done.set()))
            assert done.wait(TIMEOUT)
            _idle_workers(pool, 2)  # both idle: one of them ran last
        assert len(set(ran)) == 1
    finally:
        pool.stop(time.monotonic() + TIMEOUT)


def test_with_every_worker_busy_the_backlog_runs_in_order():
    pool = _pool(2)
    release, ran = threading.Event(), []
    started = threading.Barrier(3)

    def hold(_ctx):
        started.wait(TIMEOUT)
        release.wait(TIMEOUT)

    try:
        pool.submit(_block(hold))
        pool.submit(_block(hold))
        started.wait(TIMEOUT)  # both workers busy now
        for index in range(5):
            pool.submit(_block(lambda _ctx, index=index: ran.append(index)))
        assert list(pool._backlog) and ran == []
        release.set()
        _idle_workers(pool, 2)
        assert sorted(ran) == list(range(5)) and not pool._backlog
    finally:
        release.set()
        pool.stop(time.monotonic() + TIMEOUT)


def test_stop_ends_idle_and_busy_workers_after_the_backlog():
    pool = _pool(2)
    release, ran = threading.Event(), []
    started = threading.Event()

    def hold(_ctx):
        started.set()
        release.wait(TIMEOUT)

    pool.submit(_block(hold))
    assert started.wait(TIMEOUT)
    _idle_workers(pool, 1)
    threads = list(pool._threads)
    pool.submit(_block(lambda _ctx: ran.append("idle one")))  # to the idle worker
    pool.submit(_block(lambda _ctx: ran.append("queued")))
    stopper = threading.Thread(target=pool.stop, args=(time.monotonic() + TIMEOUT,))
    stopper.start()
    release.set()
    stopper.join(TIMEOUT)
    assert not stopper.is_alive()
    assert all(not thread.is_alive() for thread in threads)
    assert sorted(ran) == ["idle one", "queued"]
