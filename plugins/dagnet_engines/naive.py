"""The naive engine: every function runs inline, at push, on the caller's thread."""

from __future__ import annotations

import threading

from dagnet.context import Context
from dagnet.engine import Engine, RunContext
from dagnet.engine._base import Block

__all__ = ["NaiveEngine"]


def _ignore(block: Block) -> None:
    """Completion needs no bookkeeping: nothing is ever outstanding."""


class NaiveEngine(Engine):
    """Runs each pushed function to completion before ``push`` returns.

    Because nothing is ever outstanding, it needs no dependency tracking:
    every function is ready when pushed, waits return at once (raising any
    failure), and an asynchronous function is waited for until it calls
    ``on_complete``.  Failures behave exactly as on the threaded engines.

    Functions pushed from several threads still run one at a time (a
    function may itself push, or wait): without that two threads would run
    conflicting functions at once.  An asynchronous function lets the others
    in while it waits for ``on_complete``, since the thread completing it
    may push too.
    """

    name = "naive"

    def __init__(self) -> None:
        super().__init__()
        self._run_ctxs: dict[Context | None, RunContext | None] = {None: None}
        self._serial = threading.Lock()
        self._owner: int | None = None  # the thread running a function, holding _serial

    def _submit(self, block: Block) -> None:
        me = threading.get_ident()
        if self._owner == me:  # pushed from inside a function: already serial
            block.seq = next(self._seq)
            self._run(block)
            return
        with self._serial:
            self._owner = me
            try:
                block.seq = next(self._seq)
                self._run(block)
            finally:
                self._owner = None

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
        self._execute(block, run_ctx, lambda _: finished.set())
        if not finished.is_set():
            # Let the others in while it completes elsewhere: the completing
            # thread may push too, and must not wait for this one.
            owner, self._owner = self._owner, None
            self._serial.release()
            try:
                finished.wait()
            finally:
                self._serial.acquire()
                self._owner = owner

    def _wait_var(self, var, timeout) -> None:
        """Nothing is outstanding once push has returned."""

    def _wait_all(self, timeout) -> None:
        """Nothing is outstanding once push has returned."""

    def _after_fork_in_child(self) -> None:
        super()._after_fork_in_child()
        self._serial = threading.Lock()  # another thread may have held it at the fork
        self._owner = None
