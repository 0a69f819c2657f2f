"""The naive engine: every function runs inline, at push, on the caller's thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from dagnet import EngineDeadlockError, EngineTimeoutError
from dagnet.context import Context
from dagnet.engine import Block, Engine, RunContext, Var, current_block, interruptible_wait

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
    threads (and interpreter exit) wait for it as on the threaded engines.

    Ctrl-C while ``push`` waits for ``on_complete`` interrupts the push; the
    function stays outstanding until it completes.
    """

    name = "naive"

    def __init__(self) -> None:
        super().__init__()
        self._run_ctxs: dict[Context | None, RunContext | None] = {None: None}
        self._serial = threading.Lock()
        self._owner: int | None = None  # the thread running a function, holding _serial
        # Asynchronous functions started and not yet finished, with the
        # condition that is notified whenever one finishes.
        self._async: set[Block] = set()
        self._async_done = threading.Condition(threading.Lock())

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
            self._owner = None
            self._serial.release()

    def _run(self, block: Block) -> None:
        run_ctx = self._run_ctxs.get(block.ctx)
        if run_ctx is None and block.ctx is not None:
            try:
                run_ctx = self._run_ctxs[block.ctx] = self._new_run_ctx(block.ctx)
            except Exception as error:
                self._fail(block, error)
                return
        if not block.is_async:
            self._execute(block, run_ctx, _ignore)
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
        self._execute(block, run_ctx, done)
        if not finished.is_set():
            # Let the others in while it completes elsewhere: the completing
            # thread may push too, and must not wait for this one.
            owner, self._owner = self._owner, None
            self._serial.release()
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
                self._owner = owner
        with self._async_done:
            self._retire(block)

    def _reacquire_serial(self) -> None:
        # The frames below expect to hold the lock again, so a Ctrl-C while
        # taking it is held back until it is taken, then raised.
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

    # -- waiting: only for asynchronous functions not completed yet -------------
    def _wait_var(self, var: Var, timeout: float | None) -> None:
        if self._async:  # read without the lock: a push made before this wait is in it
            self._wait_until(lambda: [b for b in self._async if var in b.writes or var in b.reads],
                             lambda b: var in b.writes, f"wait_for_var({var.name})", timeout)

    def _wait_all(self, timeout: float | None) -> None:
        if self._async:
            self._wait_until(lambda: list(self._async), lambda b: True, "wait_for_all()", timeout)

    def _wait_until(self, outstanding: Callable[[], list[Block]],
                    blocks: Callable[[Block], bool], what: str, timeout: float | None) -> None:
        """Wait until ``outstanding()`` (evaluated holding ``_async_done``) is
        empty but for the calling function itself.

        Inside a function, waiting for another that ``blocks(b)`` could only
        deadlock: raise at once instead.
        """
        inside = current_block()

        def others() -> list[Block]:
            return [b for b in outstanding() if b is not inside]

        with self._async_done:
            waiting_for = others()
        if not waiting_for:
            return
        if inside is not None:
            if any(blocks(b) for b in waiting_for):
                raise EngineDeadlockError(
                    f"{what} called inside engine function {inside.name!r} would deadlock: "
                    f"it waits for {_names(waiting_for)}, still awaiting on_complete(); "
                    f"wait outside engine functions")
            return

        def describe() -> str:
            with self._async_done:
                waiting_for = others()
                return (f"{len(waiting_for)} function(s) outstanding, awaiting on_complete(), "
                        f"oldest first: {_names(waiting_for)}")

        def wait(seconds: float) -> bool:
            with self._async_done:
                return self._async_done.wait_for(lambda: not others(), seconds)

        if not interruptible_wait(wait, timeout, lambda: f"in {what}: {describe()}"):
            raise EngineTimeoutError(f"{what} timed out after {timeout}s: {describe()}")

    def _after_fork_in_child(self) -> None:
        super()._after_fork_in_child()
        self._serial = threading.Lock()  # another thread may have held it at the fork
        self._owner = None
        self._async = set()
        self._async_done = threading.Condition(threading.Lock())


def _names(blocks: Iterable[Block]) -> str:
    """The blocks' names, oldest first, for messages."""
    names = [repr(b.name) for b in sorted(blocks, key=lambda b: b.seq)]
    return ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
