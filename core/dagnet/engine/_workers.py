"""Worker threads that run ready blocks, each worker with its own run context
(and so its own stream) per device."""

from __future__ import annotations

import collections
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from ..context import Context
from . import _switch_interval as switch_interval
from ._base import Block, RunContext, current_block

__all__ = ["WorkerPool"]


class WorkerPool:
    """``num_workers`` daemon threads running blocks, first in first out.

    ``run(block, run_ctx, error)`` executes a block; ``make_run_ctx(ctx)``
    builds a worker's run context the first time that worker meets a device,
    so every worker has streams of its own (``error`` is what making it
    raised, if it failed).  Threads start on the first submit.  ``num_workers``
    is a count or a function giving it, asked each time the threads start: a
    pool stopped by ``Engine.shutdown`` restarts with the count configured then.

    A block goes to the worker that became idle last, through that worker's own C
    ``SimpleQueue`` (handing a block over costs a fraction of a microsecond, where a
    Python ``Condition`` costs several), or, with every worker busy, to a backlog the
    workers take from as they finish.  The worker idle the shortest time has the
    warmest caches, and the same worker keeps getting the work while one is enough:
    handed to the longest idle instead, as a shared queue does, an executor's pass
    alternated between two workers, each on its own core with its own OpenMP team,
    and ran a sixth slower on two threads (mobilenet-v2, batch 1).  A block that
    becomes ready because a worker of the pool finished one is kept by that worker,
    to run next (the first such block; the others go to the rest): a chain of
    functions then runs on one thread, without waking another and trading the
    interpreter lock with it.
    """

    def __init__(self, name: str, num_workers: int | Callable[[], int],
                 run: Callable[[Block, RunContext | None, BaseException | None], None],
                 make_run_ctx: Callable[[Context], RunContext]):
        self.name = name
        self._count = num_workers if callable(num_workers) else lambda: num_workers
        self.num_workers = self._count()
        self._run = run
        self._make_run_ctx = make_run_ctx
        self._threads: list[threading.Thread] = []
        self._start_lock = threading.Lock()
        self._own = _Own()
        self._blocked = 0  # workers waiting inside a function (wait_blocked)
        self._extras = 0  # compensating workers running for them
        self._reset_hand_off()

    def _reset_hand_off(self) -> None:
        self._lock = threading.Lock()  # guards the three below
        self._idle: list[_Mailbox] = []  # idle workers, the last to become idle last
        self._backlog: collections.deque[Block] = collections.deque()
        self._to_stop: set[int] = set()  # busy workers (idents) to end once out of work

    def submit(self, block: Block) -> None:
        """Have a worker run ``block``."""
        own = self._own
        if own.worker and own.next is None and current_block() is None:
            own.next = block  # a worker of this pool, done with its function: keep it
            return
        if not self._threads:
            self._start()
        with self._lock:
            if not self._idle:
                self._backlog.append(block)
                return
            mailbox = self._idle.pop()
        mailbox.put(block)

    def _next(self, mailbox: _Mailbox, timeout: float | None = None) -> Block | None:
        """A worker's next block: from the backlog, else handed to it once idle (None: it
        is to end; :data:`_NOTHING`: ``timeout`` passed with nothing handed over)."""
        with self._lock:
            if self._backlog:
                return self._backlog.popleft()
            if mailbox.ident in self._to_stop:
                self._to_stop.discard(mailbox.ident)
                return None
            self._idle.append(mailbox)
        try:
            return mailbox.get(timeout=timeout)
        except queue.Empty:
            with self._lock:
                if mailbox in self._idle:  # not picked meanwhile: nothing is coming
                    self._idle.remove(mailbox)
                    return _NOTHING
            return mailbox.get()  # picked just now: the block is on its way

    def _start(self) -> None:
        with self._start_lock:
            if self._threads:
                return
            switch_interval.shorten()
            self.num_workers = self._count()
            for index in range(self.num_workers):
                thread = threading.Thread(target=self._work, name=f"dagnet-{self.name}-{index}",
                                          daemon=True)
                thread.start()
                self._threads.append(thread)

    def _work(self) -> None:
        run_ctxs: dict[Context, Any] = {}
        mailbox = _Mailbox(threading.get_ident())
        run = self._run
        own = self._own
        own.worker = True
        _worker.pool = self
        last_ctx = last_run_ctx = None  # most blocks come with the same Context object
        while True:
            block = own.next
            if block is not None:
                own.next = None
            else:
                block = self._next(mailbox)
                if block is None:
                    return
            ctx = block.ctx
            if ctx is last_ctx:
                run(block, last_run_ctx, None)
                continue
            run_ctx = run_ctxs.get(ctx)
            error = None
            if run_ctx is None:
                try:
                    run_ctx = run_ctxs[ctx] = self._make_run_ctx(ctx)
                except Exception as exc:  # e.g. no backend for the device: the block fails
                    error = exc
            if error is None:
                last_ctx, last_run_ctx = ctx, run_ctx
            run(block, run_ctx, error)

    def _work_while_blocked(self) -> None:
        """A compensating worker (see :func:`wait_blocked`): works like the others, and
        ends once no more workers are blocked than compensating ones run."""
        run_ctxs: dict[Context, Any] = {}
        mailbox = _Mailbox(None)
        own = self._own
        own.worker = True
        _worker.pool = self
        while True:
            block = own.next
            if block is not None:
                own.next = None
            else:
                block = self._next(mailbox, _EXTRA_IDLE)
                if block is _NOTHING:
                    with self._start_lock:
                        if self._extras > self._blocked:
                            self._extras -= 1
                            return
                    continue
                if block is None:  # the pool stops
                    with self._start_lock:
                        self._extras -= 1
                    return
            run_ctx = run_ctxs.get(block.ctx)
            error = None
            if run_ctx is None:
                try:
                    run_ctx = run_ctxs[block.ctx] = self._make_run_ctx(block.ctx)
                except Exception as exc:
                    error = exc
            self._run(block, run_ctx, error)

    def blocked(self) -> _Blocked:
        """``with pool.blocked():`` around a worker's wait inside a function: while it
        waits, a compensating worker keeps the pool's queue moving."""
        return _Blocked(self)

    def stop(self, deadline: float | None = None) -> None:
        """Let the workers finish what is queued, then end them.

        Waits for them until ``deadline`` (``time.monotonic()``; None: as
        long as they take); a worker still busy then is left to end on its
        own (the threads are daemons, so it does not hold up exit).
        """
        with self._start_lock:
            threads, self._threads = self._threads, []
            with self._lock:
                idle, self._idle = self._idle, []
                self._to_stop |= {t.ident for t in threads} - {m.ident for m in idle}
        for mailbox in idle:
            mailbox.put(None)
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def reset_after_fork(self) -> None:
        """The threads did not survive the fork; start afresh on the next submit."""
        self._threads = []
        self._start_lock = threading.Lock()
        self._own = _Own()
        self._blocked = self._extras = 0
        self._reset_hand_off()


class _Mailbox(queue.SimpleQueue):
    """A worker's queue, while it is idle: the block handed to it, or None to end; the
    worker's thread ident (None for a compensating worker, which a stop ends only
    when idle)."""

    def __init__(self, ident: int | None):
        super().__init__()
        self.ident = ident


_NOTHING = Block.__new__(Block)  # _next: nothing was handed over in time


class _Worker(threading.local):
    """Per thread: the pool it works for, if any."""

    pool: WorkerPool | None = None


_worker = _Worker()
_EXTRA_IDLE = 0.05  # seconds a compensating worker waits for work before checking to end


class _Blocked:
    def __init__(self, pool: WorkerPool):
        self._pool = pool

    def __enter__(self) -> None:
        pool = self._pool
        with pool._start_lock:
            pool._blocked += 1
            if pool._extras >= pool._blocked:
                return
            pool._extras += 1
        thread = threading.Thread(target=pool._work_while_blocked, daemon=True,
                                  name=f"dagnet-{pool.name}-extra")
        thread.start()

    def __exit__(self, *exc: Any) -> None:
        with self._pool._start_lock:
            self._pool._blocked -= 1


def wait_blocked(event: threading.Event) -> bool:
    """On a pool's worker that must wait inside a function (a custom operator's inline
    push waiting for its dependencies): wait for ``event`` while a compensating worker
    runs the pool's queue, so that what it waits for is not stuck behind it.

    Returns False at once on a thread that is no pool's worker (it should wait as usual).
    """
    pool = _worker.pool
    if pool is None:
        return False
    with pool.blocked():
        event.wait()
    return True


class _Own(threading.local):
    """Per thread: whether it is a worker of the pool, and the block it keeps."""

    worker = False
    next: Block | None = None
