"""The dependency tracker shared by every engine that runs functions on threads.

Each variable keeps a queue of the functions waiting for it.  A read is
granted when no write is granted or queued ahead of it; a write when nothing
is granted or queued ahead.  A function runs when all its variables are
granted; completing it grants the next functions in line.  Variants only
say where a ready function runs (:meth:`TrackedEngine._dispatch`).

The state is owned by whichever thread holds the tracker lock, and no
thread ever sleeps on that lock.  Pushes and completions are put on two C
``SimpleQueue``s; the thread that put one then tries the lock without
blocking, and if it gets it, drains both queues (and re-checks them after
letting go).  A thread that finds the lock taken leaves its item for the
holder.  So a worker that finishes one link of a chain releases the next
itself, and a pushing thread never waits for a worker: in CPython a lock
that threads *block* on makes them trade the GIL on nearly every operation,
which costs more than the bookkeeping itself.  The push queue's order is
the push order, from however many threads.
"""

from __future__ import annotations

import abc
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from .. import config
from .._errors import EngineDeadlockError, EngineTimeoutError
from . import _switch_interval as switch_interval
from ._base import (
    Block,
    Engine,
    Failure,
    FnProperty,
    RunContext,
    Var,
    current_block,
    interruptible_wait,
)
from ._inline import _inline
from ._workers import wait_blocked

__all__ = ["TrackedEngine"]


class _Started:
    """What ``Block.inline`` holds for a block its pushing thread runs at once: the
    tracker's ``inline.set()`` (at the grant) then does nothing."""

    @staticmethod
    def set() -> None:
        pass


_STARTED = _Started()
# the kinds of function a push may run on its own thread: ordinary work, and deletions
_HERE = (FnProperty.NORMAL, FnProperty.DELETE_VAR)


def _emptied(queue_: queue.SimpleQueue[Block]) -> list[Block]:
    """What ``queue_`` holds, taken out of it."""
    items = []
    while not queue_.empty():
        items.append(queue_.get())
    return items


def _signal(event: threading.Event) -> Callable[[RunContext | None], None]:
    def signal(run_ctx: RunContext | None) -> None:
        event.set()

    return signal


class TrackedEngine(Engine):
    """An engine whose functions run when the dependency tracker says they are ready."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._pushed: queue.SimpleQueue[Block] = queue.SimpleQueue()
        self._finished: queue.SimpleQueue[Block] = queue.SimpleQueue()
        self._active: set[Block] = set()  # guarded by _lock, like all var state
        self._idle_waiters: list[threading.Event] = []
        self._throttled: list[threading.Event] = []  # pushes waiting for the backlog to shrink
        self._retired = 0  # functions finished so far
        self._stalled_at = -1  # _retired when a throttled push last saw nothing finish
        self.max_pending = int(config.get("engine_max_pending"))
        self.inline_bytes = int(config.get("engine_inline_bytes"))
        self._ahead = self.max_pending  # the bound now: see max_pending
        self._done = self._complete  # bound once: it is passed for every function run
        self._inline_run_ctxs = threading.local()  # per thread: run contexts by device

    max_pending: int
    """How far a pushing thread may run ahead of the workers (config
    ``engine_max_pending`` when the engine is made).

    Once this many functions are outstanding, a push (from outside engine
    functions) waits until no more than a quarter of them are, for at most
    :attr:`max_throttle` seconds.  Outstanding functions hold their outputs'
    memory, so a pusher far ahead keeps many buffers live, and cold in cache
    when they are large (``x = x + y`` on 4 MB arrays ran 1.5x slower for
    it).  Waiting for a quarter, not for one, trades the interpreter lock
    between pusher and workers once per many functions.  While functions
    take microseconds each (then the backlog is cheap, and the trades are
    what costs), the bound doubles at each wait, up to 8 times this; the
    first wait that finds them slower, or a wait_for_var or wait_for_all
    (the work after it may be different), sets it back.
    """

    inline_bytes: int
    """The largest function (``nbytes`` given at push: the memory it reads and writes)
    that a push runs on its own thread, when the engine has nothing outstanding and the
    function is ordinary CPU work (config ``engine_inline_bytes`` when the engine is made;
    0: never).  Handing such a function to a worker costs more than running it (an
    operator on a few kilobytes takes microseconds), and with nothing outstanding there is
    nothing for it to run beside; it runs through the same bookkeeping as on a worker, so
    its results, failures and order are the same.  This is how the default engine costs
    what the naive one does where it has nothing to overlap (imperative code on small
    arrays)."""

    max_throttle: float = 0.05
    """Seconds a throttled push waits at most: it then goes on regardless, so
    a thread that others wait for (one that calls ``on_complete`` after
    pushing, say) is slowed, never deadlocked.  If nothing finished in that
    time, pushes are not throttled again until something does."""

    _QUICK = 20e-6  # seconds per function below which running further ahead is cheap

    # -- the tracker -------------------------------------------------------------
    def _submit(self, block: Block) -> None:
        if _inline.depth and block.ctx is not None and block.prop is not FnProperty.DELETE_VAR:
            self._run_inline(block)
            return
        if block.nbytes is not None and block.nbytes <= self.inline_bytes and \
                self.inline_bytes and not self._active and self._ran_here(block):
            return
        self._take(self._register, self._pushed, block)
        if (len(self._active) >= self._ahead and self._retired != self._stalled_at
                and current_block() is None):
            self._throttle()

    def _throttle(self) -> None:
        event = threading.Event()
        resume = self._ahead // 4

        def enqueue() -> int | None:
            if len(self._active) <= resume:
                return None
            self._throttled.append(event)
            return self._retired

        retired = self._ask(enqueue)
        if retired is None:
            return
        start = time.monotonic()
        caught_up = interruptible_wait(
            event.wait, self.max_throttle,
            lambda: f"in a push, waiting for the workers to catch up: "
                    f"{self._describe_outstanding()}")
        finished = self._retired - retired
        if not caught_up and not finished:  # stalled: waiting on this thread, maybe
            self._stalled_at = retired
        elif caught_up and time.monotonic() - start < finished * self._QUICK:
            self._ahead = min(2 * self._ahead, 8 * self.max_pending)
            switch_interval.restore()
        else:
            self._ahead = self.max_pending
            switch_interval.shorten()

    def _complete(self, block: Block) -> None:
        """Report ``block`` finished (from a worker or an ``on_complete`` on any thread)."""
        self._take(self._release, self._finished, block)

    def _take(self, action: Callable[[Block], None], queue_: queue.SimpleQueue[Block],
              block: Block) -> None:
        """``action(block)`` now if the lock is free, after what is queued before
        it; else leave ``block`` on ``queue_`` for the lock holder."""
        lock, pushed, finished = self._lock, self._pushed, self._finished
        if lock.acquire(False):
            try:
                if not (pushed.empty() and finished.empty()):
                    self._drain()
                action(block)
            finally:
                lock.release()
            if pushed.empty() and finished.empty():
                return
        else:
            queue_.put(block)
        self._drive(blocking=False)

    def _drive(self, blocking: bool, question: Callable[[], Any] | None = None) -> Any:
        """Drain both queues if the lock is free (or, ``blocking``, once it is).

        ``question()``, if given, runs under the lock after the queues are
        drained, so it sees every push made before the call.
        """
        answer = None
        if not self._lock.acquire(blocking):
            return None
        while True:
            try:
                self._drain()
                if question is not None:
                    answer, question = question(), None
            finally:
                self._lock.release()
            # Items put while we held the lock found it taken and were left to us.
            if self._pushed.empty() and self._finished.empty():
                return answer
            if not self._lock.acquire(False):
                return answer

    def _drain(self) -> None:
        # Only the lock holder takes from the queues, so get() after a
        # non-empty check never blocks (and no queue.Empty is raised: slow).
        pushed, finished = self._pushed, self._finished
        while True:
            if not finished.empty():
                block = finished.get()
                # Pushes made before this completion was reported (the finished
                # function's own nested pushes, say) are registered before it is
                # released: otherwise wait_for_all could find nothing outstanding
                # in between and return before they ran.
                while not pushed.empty():
                    self._register(pushed.get())
                self._release(block)
            elif not pushed.empty():
                self._register(pushed.get())
            else:
                return

    def _register(self, block: Block) -> None:
        block.seq = next(self._seq)
        self._active.add(block)
        wait = 0
        for var in block.reads:
            if not var._pending and not var._write_granted:
                var._granted.append(block)
            else:
                var._pending.append((block, False))
                wait += 1
        for var in block.writes:
            if not var._pending and not var._granted:
                var._granted.append(block)
                var._write_granted = True
            else:
                var._pending.append((block, True))
                wait += 1
        block.wait = wait
        if wait == 0:
            self._start(block)

    def _release(self, block: Block) -> None:
        if block.lingers:
            # Completed by on_complete while its function still ran: release
            # the variables now, and retire it when the function returns.
            if block.lingers == 2:
                self._retire(block)
                return
            block.lingers = 2
        ready: list[Block] = []
        for var in block.reads:
            granted = var._granted
            granted.remove(block)
            if not granted and var._pending:
                self._grant(var, ready)
        for var in block.writes:
            var._granted.remove(block)
            var._write_granted = False
            if var._pending:
                self._grant(var, ready)
        if not block.lingers:
            self._retire(block)
        for next_block in ready:
            self._start(next_block)

    def _retire(self, block: Block) -> None:
        active = self._active
        active.discard(block)
        self._retired += 1
        if self._throttled and len(active) <= self._ahead // 4:
            for event in self._throttled:
                event.set()
            self._throttled.clear()
        if not active and self._idle_waiters:
            for event in self._idle_waiters:
                event.set()
            self._idle_waiters.clear()

    @staticmethod
    def _grant(var: Var, ready: list[Block]) -> None:
        pending = var._pending
        while pending:
            block, is_write = pending[0]
            if is_write:
                if var._granted:
                    return
                pending.popleft()
                var._granted.append(block)
                var._write_granted = True
                block.wait -= 1
                if block.wait == 0:
                    ready.append(block)
                return
            pending.popleft()
            var._granted.append(block)
            block.wait -= 1
            if block.wait == 0:
                ready.append(block)

    def _start(self, block: Block) -> None:
        if block.ctx is None:  # a waiter: signal from here, no worker needed
            block.fn(None)
            self._release(block)
        elif block.inline is not None:  # its pushing thread runs it (run_inline)
            block.inline.set()
        else:
            self._dispatch(block)

    def _run_inline(self, block: Block) -> None:
        """Register ``block``, wait until its dependencies allow, and run it on this thread.

        Interrupted (Ctrl-C) while it waits, the push hands the block to the workers
        (it is registered: it must run); interrupted while its function runs, the
        push raises the ``KeyboardInterrupt`` once the block is complete.
        """
        ready = block.inline = threading.Event()
        self._take(self._register, self._pushed, block)
        if not ready.is_set():
            self._drive(blocking=True)  # it may be queued behind a push another thread holds
            # On a worker, what it waits for may be queued behind it: a compensating
            # worker runs the queue meanwhile.
            if not ready.is_set() and not wait_blocked(ready):
                try:
                    interruptible_wait(ready.wait, None,
                                       lambda: f"in the inline push of {block.name!r}, "
                                               f"waiting for the functions it depends on: "
                                               f"{self._describe_outstanding()}")
                except KeyboardInterrupt:
                    self._ask(lambda: self._hand_to_workers(block))
                    raise
        self._run_here(block)

    def _ran_here(self, block: Block) -> bool:
        """Run ``block`` on this thread now if the engine has nothing outstanding (asked
        under the lock, after the pushes queued before it) and it is ordinary CPU work or
        a deletion, pushed from outside engine functions; False, having done nothing,
        otherwise."""
        if block.ctx.device_type != "cpu" or block.prop not in _HERE or \
                block.is_async or block.priority > 0 or current_block() is not None or \
                not self._lock.acquire(False):
            return False
        try:
            if not (self._pushed.empty() and self._finished.empty()):
                self._drain()
            if self._active:
                return False
            block.inline = _STARTED  # granted at once: nothing holds its variables
            self._register(block)
        finally:
            self._lock.release()
        self._run_here(block)
        return True

    def _run_here(self, block: Block) -> None:
        """Run the granted ``block`` on this thread, with this thread's run context for
        its device; a Ctrl-C that interrupted its function is raised here."""
        run_ctxs = self._inline_run_ctxs.__dict__
        run_ctx = run_ctxs.get(block.ctx)
        error = None
        if run_ctx is None:
            try:
                run_ctx = run_ctxs[block.ctx] = self._new_run_ctx(block.ctx)
            except Exception as exc:  # no backend for the device: the block fails
                error = exc
        interrupted = self._run_ready(block, run_ctx, error)
        if interrupted is not None:
            interrupted.raised_at_push = True
            raise interrupted.error

    def _hand_to_workers(self, block: Block) -> None:
        """A registered inline block its thread will not run: a worker runs it (under
        the lock, so ``block.inline`` is not read meanwhile)."""
        started = block.inline is not None and block.inline.is_set()
        block.inline = None
        if started:
            self._dispatch(block)

    def _ask(self, question: Callable[[], Any]) -> Any:
        """``question()`` evaluated under the lock, after every earlier push is registered."""
        return self._drive(blocking=True, question=question)

    # -- running ---------------------------------------------------------------
    def _run_ready(self, block: Block, run_ctx: RunContext | None,
                   error: BaseException | None) -> Failure | None:
        """Run a dispatched block on the calling thread; ``error`` if its context failed.
        Returns the failure of a Ctrl-C that interrupted its function (see ``_execute``)."""
        if error is not None:
            self._fail(block, error)
            self._complete(block)
            return None
        return self._execute(block, run_ctx, self._done)

    @abc.abstractmethod
    def _dispatch(self, block: Block) -> None:
        """Hand a ready block to a worker, which calls :meth:`_run_ready` with it.

        Called with the tracker lock held: it must not block.
        """

    # -- waiting ---------------------------------------------------------------
    def _wait_var(self, var: Var, timeout: float | None) -> None:
        inside = current_block()
        self._ahead = self.max_pending
        if inside is not None:
            reason = self._ask(lambda: self._deadlock_reason(var, inside))
            if reason:
                raise EngineDeadlockError(reason)
            return
        if self._ask(lambda: not var._pending and not var._granted):
            # nothing pushed so far uses the variable (asked under the lock, once every
            # earlier push is registered; a function leaves _granted only once it has
            # run): no signalling block, no thread hand-off
            return
        event = threading.Event()
        # The waiter queues as a writer, so it is granted only after every
        # function pushed before it, readers included, has finished.  If the
        # wait is interrupted it stays queued, harmlessly: granted, it only
        # sets the event.
        self._submit(Block(_signal(event), None, (), (var,), FnProperty.NORMAL, 0,
                           f"wait_for_var({var.name})", False, no_skip=True))
        if not interruptible_wait(
                event.wait, timeout,
                lambda: f"in wait_for_var({var.name}): {self._ask(lambda: self._holders(var))}"):
            raise EngineTimeoutError(
                f"wait_for_var({var.name}) timed out after {timeout}s: "
                f"{self._ask(lambda: self._holders(var))}")

    def _deadlock_reason(self, var: Var, inside: Block) -> str | None:
        # Waiting for a write that is queued, or held by another function, from
        # inside a function can only deadlock: say so now instead of hanging.
        foreign_write = var._write_granted and inside not in var._granted
        queued_write = any(is_write for _, is_write in var._pending)
        if not (foreign_write or queued_write):
            return None
        return (f"wait_for_var({var.name}) called inside engine function {inside.name!r} "
                f"would deadlock: {self._holders(var)}; push the code that needs the value "
                f"as a function that reads {var.name!r} instead of waiting")

    @staticmethod
    def _holders(var: Var) -> str:
        held = [b.name for b in var._granted]
        awaited = [b.name for b, _ in var._pending if b.ctx is not None]
        text = f"variable {var.name!r} is held by {', '.join(map(repr, held)) or 'nothing'}"
        return f"{text}; awaited by {', '.join(map(repr, awaited))}" if awaited else text

    def _wait_all(self, timeout: float | None) -> None:
        inside = current_block()
        self._ahead = self.max_pending
        if inside is not None:
            others = self._ask(lambda: [b.name for b in self._active if b is not inside])
            if others:
                raise EngineDeadlockError(
                    f"wait_for_all() called inside engine function {inside.name!r} would "
                    f"deadlock: {len(others)} other function(s) outstanding "
                    f"({', '.join(map(repr, others[:5]))}); wait outside engine functions")
            return
        event = threading.Event()
        self._ask(lambda: event.set() if not self._active else self._idle_waiters.append(event))
        if not interruptible_wait(event.wait, timeout,
                                  lambda: f"in wait_for_all(): {self._describe_outstanding()}"):
            raise EngineTimeoutError(
                f"wait_for_all() timed out after {timeout}s: {self._describe_outstanding()}")

    def _describe_outstanding(self) -> str:
        """The functions not finished yet, oldest first (for messages)."""
        names = self._ask(lambda: [b.name for b in sorted(self._active, key=lambda b: b.seq)
                                   if b.ctx is not None])
        return (f"{len(names)} function(s) outstanding, oldest first: "
                f"{', '.join(map(repr, names[:5]))}{', ...' if len(names) > 5 else ''}")

    # -- fork ------------------------------------------------------------------
    def _hold_for_fork(self) -> None:
        # Held across the fork, with every push so far registered: what other threads
        # push or complete meanwhile waits in the queues.
        self._lock.acquire()
        self._drain()

    def _release_after_fork(self) -> None:
        self._lock.release()
        self._drive(blocking=False)  # what the queues took meanwhile

    def _after_fork_in_child(self) -> None:
        super()._after_fork_in_child()
        # Still outstanding here: registered functions that did not finish before the
        # fork, and pushes queued while the lock was held.  The child never runs them;
        # their variables start afresh, with a failure on what they write.
        finished = set(_emptied(self._finished))
        queued = _emptied(self._pushed)
        self._abandon([block for block in self._active if block not in finished] + queued)
        for block in (*self._active, *queued):
            for var in block.reads + block.writes:
                var._pending.clear()
                var._granted.clear()
                var._write_granted = False
        self._lock = threading.Lock()
        self._pushed = queue.SimpleQueue()
        self._finished = queue.SimpleQueue()
        self._active = set()
        self._idle_waiters = []
        self._throttled = []
        self._retired = 0
        self._stalled_at = -1
