"""The naive engine: every function runs inline, at push, on the caller's thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from dagnet import EngineDeadlockError, EngineTimeoutError
from dagnet.context import Context
from dagnet.engine import (
    Block,
    Engine,
    Failure,
    RunContext,
    Var,
    current_block,
    interruptible_wait,
)

__all__ = ["NaiveEngine"]


def _ignore(block: Block) -> None:
    """Completion needs no bookkeeping: nothing is ever outstanding."""


class NaiveEngine(Engine):
    """Runs each pushed function to completion before ``push`` returns.

    It needs no dependency tracking: every function is ready when pushed, and
    an asynchronous function is waited for, inside ``push``, until it calls
    ``on_complete``.  Failures behave exactly as on the threaded engines.

    Functions pushed from several threads still run one at a time (a
    function may itself push, or wait): without that two threads would run
    conflicting functions at once.  An asynchronous function lets the others
    in while it waits for ``on_complete``, since the thread completing it
    may push too; until it completes it is outstanding, and waits from other
    threads (and interpreter exit) wait for it as on the threaded engines,
    as they wait for a function another thread is running.

    Ctrl-C while ``push`` waits for ``on_complete`` interrupts the push; the
    function stays outstanding until it completes.  Ctrl-C while the pushed
    function runs interrupts the function: its push raises the
    ``KeyboardInterrupt`` at once, and the next wait on what it writes reports
    it as failed (it did not finish).
    """

    name = "naive"

    def __init__(self) -> None:
        super().__init__()
        self._run_ctxs: dict[Context | None, RunContext | None] = {None: None}
        self._serial = threading.Lock()
        self._owner: int | None = None  # the thread running functions, holding _serial
        self._running: list[Block] = []  # the functions it runs, outermost first
        # Asynchronous functions started and not yet finished, with the
        # condition that is notified whenever one finishes (or the owner lets
        # _serial go while a thread waits: _waiting).
        self._async: set[Block] = set()
        self._async_done = threading.Condition(threading.Lock())
        self._waiting = 0
        self._serial_held_for_fork = False

    def _submit(self, block: Block) -> None:
        me = threading.get_ident()
        if self._owner == me:  # pushed from inside a function: already serial
            block.seq = next(self._seq)
            self._run(block)
            return
        if not self._serial.acquire(False):
            # Interruptible, saying what it waits for; interrupted, nothing is taken.
            interruptible_wait(lambda seconds: self._serial.acquire(timeout=seconds), None,
                               lambda: f"in the push of {block.name!r}, waiting for the "
                                       f"function another thread runs to finish")
        try:
            self._owner = me
            block.seq = next(self._seq)
            self._run(block)
        finally:
            self._owner = None  # _let_go, inline: this is every push's path
            self._serial.release()
            if self._waiting:
                self._tell_waiters()

    def _let_go(self) -> None:
        """Release ``_serial`` (held by this thread), telling waiting threads."""
        self._owner = None
        self._serial.release()
        if self._waiting:
            self._tell_waiters()

    def _tell_waiters(self) -> None:
        with self._async_done:
            self._async_done.notify_all()

    def _run(self, block: Block) -> None:
        run_ctx = self._run_ctxs.get(block.ctx)
        if run_ctx is None and block.ctx is not None:
            try:
                run_ctx = self._run_ctxs[block.ctx] = self._new_run_ctx(block.ctx)
            except Exception as error:
                self._fail(block, error)
                return
        if not block.is_async:
            running = self._running
            running.append(block)
            try:
                interrupted = self._execute(block, run_ctx, _ignore)
            finally:
                running.pop()
            if interrupted is not None:
                _raise_at_push(interrupted)
            return
        finished = threading.Event()
        abandoned = False

        def done(_: Block) -> None:
            finished.set()
            with self._async_done:
                if abandoned:  # the push was interrupted: retire it here
                    self._retire(block)

        with self._async_done:
            self._async.add(block)
        interrupted = self._execute(block, run_ctx, done)
        if not finished.is_set():
            # Let the others in while it completes elsewhere: the completing
            # thread may push too, and must not wait for this one.
            owner, running = self._owner, self._running
            self._running = []
            self._let_go()
            try:
                interruptible_wait(
                    finished.wait, None,
                    lambda: f"in push_async of {block.name!r}, which has not called "
                            f"on_complete() yet; it stays outstanding until it does")
            except KeyboardInterrupt:
                with self._async_done:
                    abandoned = not finished.is_set()
                    if not abandoned:
                        self._retire(block)
                raise
            finally:
                self._reacquire_serial()
                self._owner, self._running = owner, running
        with self._async_done:
            self._retire(block)
        if interrupted is not None:
            _raise_at_push(interrupted)

    def _reacquire_serial(self) -> None:
        # The frames below expect to hold the lock again, so a Ctrl-C while
        # taking it is held back until it is taken, then raised.  (dagnet's
        # SIGINT handler holds it back anyway; another handler may not.)
        interrupted = None
        while True:
            try:
                self._serial.acquire()
                break
            except KeyboardInterrupt as exc:
                interrupted = exc
        if interrupted is not None:
            raise interrupted

    def _retire(self, block: Block) -> None:
        """``block`` finished (called holding ``_async_done``)."""
        self._async.discard(block)
        self._async_done.notify_all()

    # -- waiting: for asynchronous functions not completed yet, and for the
    # -- functions another thread is running ------------------------------------
    def _outstanding(self, var: Var | None) -> list[Block]:
        """The functions started and not finished that use ``var`` (None: any),
        but for those this thread runs itself (called holding ``_async_done``)."""
        blocks = list(self._async)
        if self._owner != threading.get_ident():
            blocks += self._running
        if var is None:
            return blocks
        return [b for b in blocks if var in b.writes or var in b.reads]

    def _wait_var(self, var: Var, timeout: float | None) -> None:
        # read without the lock: a push made before this wait is in them
        if self._async or self._running:
            self._wait_until(var, lambda b: var in b.writes, f"wait_for_var({var.name})",
                             timeout)

    def _wait_all(self, timeout: float | None) -> None:
        if self._async or self._running:
            self._wait_until(None, lambda b: True, "wait_for_all()", timeout)

    def _wait_until(self, var: Var | None, blocks: Callable[[Block], bool], what: str,
                    timeout: float | None) -> None:
        """Wait until no function is outstanding that uses ``var`` (None: any), but
        for the calling function itself.

        Inside a function, waiting for another that ``blocks(b)`` could only
        deadlock: raise at once instead.
        """
        inside = current_block()

        def others() -> list[Block]:
            return [b for b in self._outstanding(var) if b is not inside]

        with self._async_done:
            waiting_for = others()
        if not waiting_for:
            return
        if inside is not None:
            if any(blocks(b) for b in waiting_for):
                raise EngineDeadlockError(
                    f"{what} called inside engine function {inside.name!r} would deadlock: "
                    f"it waits for {_names(waiting_for)}, still running or awaiting "
                    f"on_complete(); wait outside engine functions")
            return

        def describe() -> str:
            return self._describe_outstanding(var, inside)

        def wait(seconds: float) -> bool:
            with self._async_done:
                self._waiting += 1
                try:
                    return self._async_done.wait_for(lambda: not others(), seconds)
                finally:
                    self._waiting -= 1

        if not interruptible_wait(wait, timeout, lambda: f"in {what}: {describe()}"):
            raise EngineTimeoutError(f"{what} timed out after {timeout}s: {describe()}")

    def _describe_outstanding(self, var: Var | None = None, inside: Block | None = None
                              ) -> str:
        with self._async_done:
            blocks = [b for b in self._outstanding(var) if b is not inside]
        return (f"{len(blocks)} function(s) outstanding, running on another thread or "
                f"awaiting on_complete(), oldest first: {_names(blocks)}")

    # -- fork ----------------------------------------------------------------------
    def _hold_for_fork(self) -> None:
        # _serial only if free (the function holding it may never end: the wait
        # before the fork is over), then the condition's lock, in the order pushes
        # take them.
        self._serial_held_for_fork = (self._owner != threading.get_ident()
                                      and self._serial.acquire(False))
        self._async_done.acquire()

    def _release_after_fork(self) -> None:
        self._async_done.release()
        if self._serial_held_for_fork:
            self._serial_held_for_fork = False
            self._serial.release()

    def _after_fork_in_child(self) -> None:
        super()._after_fork_in_child()
        me = threading.get_ident()
        if self._owner == me:
            # Forked inside a function this thread runs: it goes on in the child.
            self._abandon(self._async)
        else:
            self._abandon([*self._async, *self._running])
            self._serial = threading.Lock()
            self._owner = None
            self._running = []
        self._serial_held_for_fork = False
        self._async = set()
        self._async_done = threading.Condition(threading.Lock())
        self._waiting = 0


def _raise_at_push(interrupted: Failure) -> None:
    """Raise the Ctrl-C that interrupted a function this push ran."""
    interrupted.raised_at_push = True
    raise interrupted.error


def _names(blocks: Iterable[Block]) -> str:
    """The blocks' names, oldest first, for messages."""
    names = [repr(b.name) for b in sorted(blocks, key=lambda b: b.seq)]
    return ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
