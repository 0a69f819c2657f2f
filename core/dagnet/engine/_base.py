"""The engine interface and what every variant shares: variables, validation,
running one function, and exception propagation.

MXNet's names map to Python ones: ``NewVar`` -> :meth:`Engine.new_var`,
``PushSync``/``PushAsync`` -> :meth:`Engine.push_sync`/:meth:`Engine.push_async`,
``NewOperator``/``Push``/``DeleteOperator`` -> :meth:`Engine.new_operator`,
:meth:`Engine.push`, :meth:`Engine.delete_operator`, ``DeleteVariable`` ->
:meth:`Engine.delete_var`, ``WaitForVar``/``WaitForAll`` ->
:meth:`Engine.wait_for_var`/:meth:`Engine.wait_for_all`.
"""

from __future__ import annotations

import abc
import enum
import itertools
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from .. import config
from .._errors import (
    DeletedVariableError,
    EngineError,
    EngineForkError,
    EngineTimeoutError,
    EngineTypeError,
    OperatorFailedError,
)
from ..context import Context, cpu
from . import _ctrl_c, _listener
from ._ctrl_c import is_ctrl_c, raise_held_interrupt, runs_pushed_functions

__all__ = [
    "Block", "Engine", "Var", "RunContext", "FnProperty", "Operator", "Failure",
    "interruptible_wait",
]


class FnProperty(enum.Enum):
    """What kind of work a function is; the per-device engine picks a lane by it."""

    NORMAL = "normal"
    COPY_FROM_GPU = "copy_from_gpu"
    COPY_TO_GPU = "copy_to_gpu"
    CPU_PRIORITIZED = "cpu_prioritized"
    GPU_PRIORITIZED = "gpu_prioritized"
    ASYNC = "async"
    DELETE_VAR = "delete_var"


class RunContext:
    """What a running function is given: its device and the stream chosen for it."""

    __slots__ = ("ctx", "stream")

    def __init__(self, ctx: Context, stream: Any = None):
        self.ctx = ctx
        self.stream = stream

    def __repr__(self) -> str:
        return f"RunContext(ctx={self.ctx}, stream={self.stream!r})"


class Failure:
    """An exception raised by a pushed function, shared by every variable it reached.

    It is raised once: the first wait that meets it marks it consumed.
    ``seq`` is the failed function's push position, so that every engine
    reports simultaneous failures in the same (push) order.  ``raised_at_push``
    marks a Ctrl-C that interrupted the function on the thread that pushed it,
    and was raised there by the push itself.
    """

    __slots__ = ("operator", "error", "consumed", "seq", "raised_at_push")

    def __init__(self, operator: str, error: BaseException, seq: int = 0):
        self.operator = operator
        self.error = error
        self.consumed = False
        self.seq = seq
        self.raised_at_push = False

    def to_exception(self, where: str) -> BaseException:
        """What a wait raises for this failure.

        An ordinary exception comes wrapped in :class:`OperatorFailedError`
        naming the operator, the original chained; for the builtin types MXNet maps
        (``IndexError``, ``ValueError``, ...) the wrapper is that type too.  A ``KeyboardInterrupt``
        or ``SystemExit`` (anything not an ``Exception``) is raised as
        itself, so that Ctrl-C and ``sys.exit()`` inside an engine function
        still stop the program; a note (Python 3.11+) names the operator.  A
        Ctrl-C the push already raised is reported as an ordinary failure: the
        program has heard it once, and what the function writes is incomplete.
        """
        if self.raised_at_push:
            exc = OperatorFailedError(
                f"operator {self.operator!r} was interrupted (Ctrl-C) before it finished, "
                f"so what it writes is incomplete (raised at {where}; its push raised the "
                f"KeyboardInterrupt); compute it again", self.operator, self.error)
            exc.__cause__ = self.error
            return exc
        if not isinstance(self.error, Exception):
            if hasattr(self.error, "add_note"):
                self.error.add_note(f"raised by engine function {self.operator!r}, "
                                    f"re-raised at {where}")
            return self.error
        message = (
            f"operator {self.operator!r} failed: {type(self.error).__name__}: {self.error}"
            f" (raised at {where}; the original traceback is above)"
        )
        exc = OperatorFailedError.wrapping(message, self.operator, self.error)
        exc.__cause__ = self.error
        return exc


_var_ids = itertools.count()


class Var:
    """An engine variable (MXNet's ``VarHandle``): a tag that orders functions.

    Functions that mutate a variable run in push order with every other
    function using it; functions that only read it may run together.  The
    dependency state below belongs to the engine that schedules it.
    """

    __slots__ = (
        "_name", "_number", "_pending", "_granted", "_write_granted", "_failure", "_deleted",
        "_version",
    )

    def __init__(self, name: str | None = None):
        self._name = name
        self._number = next(_var_ids)  # the default name is formatted only when asked for
        self._pending: deque[tuple[Block, bool]] = deque()
        self._granted: list[Block] = []  # functions currently allowed to use the variable
        self._write_granted = False
        self._failure: Failure | None = None
        self._deleted = False
        self._version = 0

    @property
    def version(self) -> int:
        """How many functions that mutate the variable have started (MXNet's
        ``Var::version``).  Read from a function that uses the variable, it names the
        value that function sees: no mutation runs beside it, and every one pushed
        before it has started.  Kernels that derive something from an array and keep it
        between runs (a convolution's folded weights) compare it to see whether the array
        was written since."""
        return self._version

    @property
    def name(self) -> str:
        """The name given to :meth:`Engine.new_var`, or ``var<number>``."""
        return self._name if self._name is not None else f"var{self._number}"

    @property
    def failure(self) -> Failure | None:
        """The unconsumed failure this variable carries, if any."""
        failure = self._failure
        return failure if failure is not None and not failure.consumed else None

    def __repr__(self) -> str:
        state = "deleted" if self._deleted else f"{len(self._pending)} pending"
        return f"<Var {self.name} ({state})>"


class Block:
    """One pushed function with its normalized dependencies (MXNet's ``OprBlock``):
    what an engine variant is handed to run (``Engine._submit``,
    ``TrackedEngine._dispatch``)."""

    __slots__ = (
        "fn", "ctx", "reads", "writes", "prop", "priority", "_name", "is_async",
        "no_skip", "wait", "seq", "lingers", "inline", "nbytes",
    )

    def __init__(self, fn, ctx, reads, writes, prop, priority, name, is_async, no_skip=False,
                 nbytes=None):
        self.fn = fn
        self.ctx = ctx
        self.reads = reads
        self.writes = writes
        self.prop = prop
        self.priority = priority
        self._name = name
        self.is_async = is_async
        self.no_skip = no_skip
        self.wait = 0
        self.seq = 0
        # 1: completed by on_complete on another thread while the function
        # still runs; 2: its variables released, the return still awaited.
        self.lingers = 0
        # set when the pushing thread runs it itself (dagnet.engine.run_inline): an
        # event the tracker sets instead of dispatching it to a worker
        self.inline: threading.Event | None = None
        # the bytes the function reads and writes, where its pusher said (push_sync's
        # nbytes): a small one may run on the pushing thread (TrackedEngine.inline_bytes)
        self.nbytes = nbytes

    @property
    def name(self) -> str:
        """The name given at push, or the function's (computed only when reported)."""
        return _function_name(self.fn, self._name)

    def __repr__(self) -> str:
        return f"<Block {self.name!r}>"


class Operator:
    """A reusable operation from :meth:`Engine.new_operator`: pushed many times,
    it behaves like as many separate pushes of the same function."""

    __slots__ = ("fn", "reads", "writes", "prop", "name", "is_async", "deleted")

    def __init__(self, fn, reads, writes, prop, name, is_async):
        self.fn = fn
        self.reads = reads
        self.writes = writes
        self.prop = prop
        self.name = name
        self.is_async = is_async
        self.deleted = False

    def __repr__(self) -> str:
        return f"<Operator {self.name!r}{' (deleted)' if self.deleted else ''}>"


class _Running(threading.local):
    block: Block | None = None  # a class default: reading it never raises inside
    engine: Engine | None = None  # the engine running ``block``


_running = _Running()
_CPU = cpu()


def current_block() -> Block | None:
    """The function this thread is running for an engine, if any."""
    return _running.block


def running_engine() -> Engine | None:
    """The engine whose function this thread is running, if any: work pushed from inside
    an engine function belongs on that engine (it cannot wait for another to drain)."""
    return _running.engine if _running.block is not None else None


def _unique(variables: Iterable[Var] | None, what: str) -> tuple:
    """``variables`` in order without repeats; None means none."""
    if variables is None:
        return ()
    try:
        return tuple(dict.fromkeys(variables))
    except TypeError:
        raise EngineTypeError(
            f"{what} must be a list of engine variables from new_var(), got "
            f"{type(variables).__name__} {variables!r}; wrap a single variable in a list"
        ) from None


def _function_name(fn: Callable[..., Any], name: str | None) -> str:
    if name is not None:
        return name
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


SLICE = 0.1
"""Seconds a blocking wait sleeps at a time.  Python runs signal handlers
only between slices, so a wait in slices is one Ctrl-C interrupts promptly."""


def interruptible_wait(wait: Callable[[float], bool], timeout: float | None,
                       pending: Callable[[], str]) -> bool:
    """Call ``wait(seconds)`` in slices of at most :data:`SLICE` until it returns
    True (then return True) or ``timeout`` seconds pass (then return False).

    A ``KeyboardInterrupt`` during the wait propagates with ``pending()`` (say,
    "in wait_for_var(v): ...") in its message, saying what the wait was for;
    the engine is left as it was, so the caller may push and wait again.  With
    dagnet's SIGINT handler (``dagnet.engine._ctrl_c``) the interrupt is raised
    at the start of a slice, never while ``wait`` runs: a ``wait`` that took
    something (a lock) has returned it to the caller by then.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    try:
        while True:
            raise_held_interrupt()  # a Ctrl-C held back while engine code ran
            step = SLICE if deadline is None else min(deadline - time.monotonic(), SLICE)
            if wait(max(step, 0.0)):
                return True
            if step <= 0:
                return False
    except KeyboardInterrupt as interrupt:
        interrupt.args = (*interrupt.args, f"interrupted (Ctrl-C) {pending()}")
        raise


class Engine(abc.ABC):
    """The dependency engine interface and its shared semantics.

    A variant supplies how a pushed block gets run (:meth:`_submit`) and how
    waits block (:meth:`_wait_var`, :meth:`_wait_all`); everything users see
    about validation and errors is decided here, once, for every engine.

    Contracts: conflicting functions run in push order; push returns at once
    (``naive`` runs inline) and is thread-safe; a function's exception is
    attached to the variables it mutates, dependents are skipped and inherit
    it, and it is raised once, as :class:`OperatorFailedError` naming the
    operator (a ``KeyboardInterrupt`` or ``SystemExit`` as itself), at the
    next wait on an affected variable or at :meth:`wait_for_all`; a wait from
    inside an engine function completes or raises at once; waits take a
    timeout, and Ctrl-C interrupts them with a message naming what was
    pending; interpreter exit waits at most :attr:`exit_timeout`.
    """

    name = "engine"

    exit_timeout: float
    """Seconds interpreter exit waits for outstanding functions before it warns,
    naming them, and exits anyway (config ``engine_exit_timeout`` when the engine
    is made; set it on an engine to change it later)."""

    def __init__(self) -> None:
        self.exit_timeout = float(config.get("engine_exit_timeout"))
        self._failures: deque[Failure] = deque()
        self._failures_lock = threading.Lock()
        self._seq = itertools.count()

    # -- variables ---------------------------------------------------------
    def new_var(self, name: str | None = None) -> Var:
        """A new variable to tag data with (MXNet ``NewVar``)."""
        return Var(name)

    def delete_var(self, var: Var, ctx: Context | None = None,
                   fn: Callable[[RunContext], None] | None = None) -> None:
        """Delete ``var`` once every function pushed before on it has finished.

        ``fn(run_ctx)``, if given, runs at that moment (to free what the
        variable guarded).  Using ``var`` afterwards raises
        :class:`DeletedVariableError` at the push.
        """
        self.delete_vars((var,), ctx, fn)

    def delete_vars(self, variables: Iterable[Var], ctx: Context | None = None,
                    fn: Callable[[RunContext], None] | None = None) -> None:
        """Delete several variables with one function, run once every function
        pushed before on any of them has finished (cheaper than one call each)."""
        variables = _unique(variables, "delete_vars")
        self._check_vars((), variables)
        if fn is not None and not callable(fn):
            raise EngineTypeError(f"delete_var: fn must be callable or None, got {fn!r}")
        for var in variables:
            var._deleted = True

        def delete(run_ctx: RunContext) -> None:
            for var in variables:
                var._failure = None
            if fn is not None:
                fn(run_ctx)

        names = ", ".join(var.name for var in variables[:3])
        more = f" and {len(variables) - 3} more" if len(variables) > 3 else ""
        # nbytes 0: forgetting the variables (and freeing what they guarded) is small work
        block = Block(delete, ctx or _CPU, (), variables, FnProperty.DELETE_VAR, 0,
                      f"delete_var({names}{more})", False, no_skip=True, nbytes=0)
        self._submit(block)
        if _ctrl_c._held:
            raise_held_interrupt()

    # -- pushing -----------------------------------------------------------
    def push_sync(self, fn: Callable[[RunContext], Any], ctx: Context | None = None,
                  const_vars: Iterable[Var] = (), mutate_vars: Iterable[Var] = (),
                  prop: FnProperty = FnProperty.NORMAL, priority: int = 0,
                  name: str | None = None, *, nbytes: int | None = None) -> None:
        """Run ``fn(run_ctx)`` once its dependencies allow (MXNet ``PushSync``).

        ``const_vars`` are read, ``mutate_vars`` written.  A variable listed
        twice, or both read and mutated, counts once, as mutated (as in
        MXNet).  ``priority`` is a hint: higher runs earlier among ready work.
        ``nbytes``, where the caller knows it, is the memory the function reads
        and writes: an engine may run a small function on the pushing thread
        when nothing else is outstanding (see ``TrackedEngine.inline_bytes``),
        with the results and errors it would have on a worker.
        """
        self._push(fn, ctx, const_vars, mutate_vars, prop, priority, name, False, nbytes)

    def push_async(self, fn: Callable[[RunContext, Callable[..., None]], Any],
                   ctx: Context | None = None, const_vars: Iterable[Var] = (),
                   mutate_vars: Iterable[Var] = (), prop: FnProperty = FnProperty.ASYNC,
                   priority: int = 0, name: str | None = None) -> None:
        """Like :meth:`push_sync`, but ``fn(run_ctx, on_complete)`` finishes when it
        calls ``on_complete()``, from any thread; ``on_complete(error)`` reports a failure."""
        self._push(fn, ctx, const_vars, mutate_vars, prop, priority, name, True, None)

    def new_operator(self, fn: Callable[..., Any], const_vars: Iterable[Var] = (),
                     mutate_vars: Iterable[Var] = (), prop: FnProperty = FnProperty.NORMAL,
                     name: str | None = None, is_async: bool = False) -> Operator:
        """Prepare a function and its dependencies once, to :meth:`push` many times.

        ``fn`` takes ``(run_ctx)``, or ``(run_ctx, on_complete)`` when ``is_async``.
        """
        if not callable(fn):
            raise EngineTypeError(f"new_operator: fn must be callable, got {fn!r}")
        reads, writes = self._normalize(const_vars, mutate_vars)
        self._check_vars(reads, writes)
        return Operator(fn, reads, writes, prop, _function_name(fn, name), is_async)

    def push(self, opr: Operator, ctx: Context | None = None, priority: int = 0) -> None:
        """Push a prepared operator (MXNet ``Push``)."""
        if not isinstance(opr, Operator):
            raise EngineTypeError(f"push: expected an Operator from new_operator(), got {opr!r}")
        if opr.deleted:
            raise DeletedVariableError(
                f"operator {opr.name!r} was deleted with delete_operator(); "
                f"create a new one with new_operator()")
        self._check_vars(opr.reads, opr.writes)
        self._submit(Block(opr.fn, ctx or _CPU, opr.reads, opr.writes, opr.prop, priority,
                           opr.name, opr.is_async))
        if _ctrl_c._held:
            raise_held_interrupt()

    def delete_operator(self, opr: Operator) -> None:
        """Forget ``opr``; pushes already made still run, new pushes raise."""
        if not isinstance(opr, Operator):
            raise EngineTypeError(f"delete_operator: expected an Operator, got {opr!r}")
        opr.deleted = True

    def _push(self, fn, ctx, const_vars, mutate_vars, prop, priority, name, is_async,
              nbytes) -> None:
        # The hot path of every engine: keep it to plain checks and one allocation.
        if not callable(fn):
            raise EngineTypeError(
                f"push: fn must be callable (a function of run_ctx), "
                f"got {type(fn).__name__} {fn!r}")
        if ctx is None:
            ctx = _CPU
        elif not isinstance(ctx, Context):
            raise EngineTypeError(
                f"push: ctx must be a dagnet Context such as dagnet.cpu(), got {ctx!r}")
        if prop.__class__ is not FnProperty:
            raise EngineTypeError(f"push: prop must be a dagnet.engine.FnProperty, got {prop!r}")
        reads, writes = self._normalize(const_vars, mutate_vars)
        self._check_vars(reads, writes)
        self._submit(Block(fn, ctx, reads, writes, prop, priority, name, is_async,
                           nbytes=nbytes))
        if _ctrl_c._held:  # a Ctrl-C that landed in the engine's bookkeeping
            raise_held_interrupt()

    @staticmethod
    def _normalize(const_vars: Iterable[Var], mutate_vars: Iterable[Var]) -> tuple[tuple, tuple]:
        kind = mutate_vars.__class__
        if (kind is list or kind is tuple) and len(mutate_vars) < 2:
            writes = tuple(mutate_vars)
        else:
            writes = _unique(mutate_vars, "mutate_vars")
        if not const_vars:
            return (), writes
        kind = const_vars.__class__
        if kind is list or kind is tuple:
            # The common one- and two-input operator, without building a dict
            # or running a generator.
            count = len(const_vars)
            if count == 1:
                first = const_vars[0]
                return (() if first in writes else (first,)), writes
            if count == 2:
                first, second = const_vars
                if first is second or second in writes:
                    return (() if first in writes else (first,)), writes
                return ((second,) if first in writes else (first, second)), writes
        reads = tuple(v for v in _unique(const_vars, "const_vars") if v not in writes)
        return reads, writes

    @staticmethod
    def _check_vars(reads: tuple, writes: tuple) -> None:
        for var in reads + writes if reads else writes:
            if var.__class__ is not Var:
                raise EngineTypeError(
                    f"engine variables must come from Engine.new_var(), got "
                    f"{type(var).__name__} {var!r}")
            if var._deleted:
                raise DeletedVariableError(
                    f"variable {var.name!r} was deleted with delete_var(); "
                    f"create a new one with new_var()")

    # -- running -----------------------------------------------------------
    def _execute(self, block: Block, run_ctx: RunContext, done: Callable[[Block], None]
                 ) -> Failure | None:
        """Run ``block`` (or skip it, inheriting a failure), then call ``done(block)``.

        Returns the failure if a Ctrl-C interrupted the function on this thread
        (the naive engine's push raises it), else None.
        """
        failure = None
        if not block.no_skip:
            for var in block.reads:
                if var._failure is not None and not var._failure.consumed:
                    failure = var._failure
                    break
            else:
                for var in block.writes:
                    if var._failure is not None and not var._failure.consumed:
                        failure = var._failure
                        break
        if failure is not None:
            for var in block.writes:
                var._failure = failure
            done(block)
            return None
        for var in block.writes:
            var._version += 1
        if _listener._listeners:
            return self._execute_reported(block, run_ctx, done)
        running = _running
        previous, previous_engine = running.block, running.engine
        running.block, running.engine = block, self
        try:
            if block.is_async:
                return self._start_async(block, run_ctx, done)
            block.fn(run_ctx)
            if run_ctx is not None and run_ctx.stream is not None:
                run_ctx.stream.synchronize()  # the work is done when the function is
        except BaseException as error:  # SystemExit in a worker must not lose the block
            failure = self._fail(block, error)
        finally:
            running.block, running.engine = previous, previous_engine
        done(block)
        return failure if failure is not None and is_ctrl_c(failure.error) else None

    def _execute_reported(self, block: Block, run_ctx: RunContext,
                          done: Callable[[Block], None]) -> Failure | None:
        """:meth:`_execute` for a block that is not skipped, timed and reported to the
        engine listeners (``dagnet.engine.add_listener``)."""
        running = _running
        previous, previous_engine = running.block, running.engine
        running.block, running.engine = block, self
        failure = None
        start = _listener.clock()
        try:
            if block.is_async:
                return self._start_async(block, run_ctx, done)
            block.fn(run_ctx)
            if run_ctx is not None and run_ctx.stream is not None:
                run_ctx.stream.synchronize()
        except BaseException as error:
            failure = self._fail(block, error)
        finally:
            running.block, running.engine = previous, previous_engine
            end = _listener.clock()
            _listener.report(_listener.Execution(
                block.name, block.ctx, block.prop, start, end, threading.get_ident(),
                failure is not None, _listener.current_scope()))
        done(block)
        return failure if failure is not None and is_ctrl_c(failure.error) else None

    def _start_async(self, block: Block, run_ctx: RunContext,
                     done: Callable[[Block], None]) -> Failure | None:
        # on_complete() called by the function itself, on this thread, takes
        # effect when the function returns: if it raises after all, that is an
        # ordinary failure, seen by the functions after it on every engine.
        # Called from another thread while the function still runs, it
        # releases the variables at once, but the function counts as
        # outstanding (for wait_for_all and exit) until it returns: an error
        # it raises afterwards is then reported at the next wait_for_all on
        # every engine, as on the naive one, where push returns only then.
        lock = threading.Lock()
        runner = threading.get_ident()
        completed = deferred = False
        running = True

        def on_complete(error: BaseException | None = None) -> None:
            nonlocal completed, deferred
            with lock:
                if completed:
                    raise EngineError(f"on_complete of {block.name!r} was called twice")
                completed = True
                deferred = running and threading.get_ident() == runner
                elsewhere = running and not deferred
                if elsewhere:
                    block.lingers = 1
                    if error is not None:
                        self._fail(block, error)
                    # Under the lock: this release is reported before the
                    # function's return is (below), never after.
                    done(block)
            if not elsewhere:
                if error is not None:
                    self._fail(block, error)
                if not deferred:
                    done(block)
            if _ctrl_c._held:
                raise_held_interrupt()

        try:
            block.fn(run_ctx, on_complete)
        except BaseException as error:  # as in the sync path: never lose the block
            with lock:
                running = False
                already, completed = completed, True
            if already and not deferred:
                # Completed from another thread, then raised.  Its variables
                # already belong to the functions after it, so the failure is
                # not attached to them (that would skip whichever happened to be
                # next): it is raised at wait_for_all.
                failure = Failure(block.name, error, block.seq)
                with self._failures_lock:
                    self._failures.append(failure)
            else:
                failure = self._fail(block, error)
            done(block)
            return failure if is_ctrl_c(error) else None
        with lock:
            running = False
            finish = deferred or completed
        if finish:
            done(block)
        return None

    def _fail(self, block: Block, error: BaseException) -> Failure:
        failure = Failure(block.name, error, block.seq)
        for var in block.writes:
            var._failure = failure
        with self._failures_lock:
            self._failures.append(failure)
        return failure

    # -- waiting -----------------------------------------------------------
    def wait_for_var(self, var: Var, timeout: float | None = None) -> None:
        """Block until every function pushed so far that uses ``var`` has run.

        Raises the failure of a function that reached ``var`` (once), and
        :class:`EngineTimeoutError` naming who holds the variable on timeout.
        """
        if not isinstance(var, Var):
            raise EngineTypeError(
                f"wait_for_var: expected an engine variable from new_var(), got "
                f"{type(var).__name__} {var!r}")
        self._wait_var(var, timeout)
        if _ctrl_c._held:
            raise_held_interrupt()
        failure = var.failure
        if failure is not None:
            with self._failures_lock:  # two threads waiting: only one raises it
                if failure.consumed:
                    return
                failure.consumed = True
            raise failure.to_exception(f"wait_for_var({var.name})")

    def wait_for_all(self, timeout: float | None = None) -> None:
        """Block until every pushed function has run; raise the earliest pushed
        failure not yet raised, naming the others.

        A ``KeyboardInterrupt`` or ``SystemExit`` raised by a function goes
        before ordinary failures, and is raised as itself.
        """
        self._wait_all(timeout)
        if _ctrl_c._held:
            raise_held_interrupt()
        with self._failures_lock:
            pending = [f for f in self._failures if not f.consumed]
            self._failures.clear()
            for failure in pending:
                failure.consumed = True
        if pending:
            # The earliest pushed first: on threads, failures are recorded in the
            # order they happened to finish, which differs from run to run.
            pending.sort(key=lambda failure: (
                isinstance(failure.error, Exception) or failure.raised_at_push, failure.seq))
            exc = pending[0].to_exception("wait_for_all()")
            if len(pending) > 1:
                others = ", ".join(repr(f.operator) for f in pending[1:])
                more = f"{len(pending) - 1} more failed: {others}"
                if isinstance(exc, OperatorFailedError):
                    exc.args = (f"{exc.args[0]}; {more}",)
                elif hasattr(exc, "add_note"):
                    exc.add_note(more)
            raise exc

    # -- what a variant supplies ----------------------------------------------
    @abc.abstractmethod
    def _submit(self, block: Block) -> None:
        """Take a validated block and see that it runs when its dependencies allow."""

    @abc.abstractmethod
    def _wait_var(self, var: Var, timeout: float | None) -> None:
        """Block until ``var`` has no function pushed before this call outstanding."""

    @abc.abstractmethod
    def _wait_all(self, timeout: float | None) -> None:
        """Block until no function is outstanding."""

    @abc.abstractmethod
    def _describe_outstanding(self) -> str:
        """The functions not finished yet, oldest first, for messages."""

    def drain(self) -> None:
        """Wait for all outstanding work without raising failures (they stay for later waits)."""
        self._wait_all(None)

    def shutdown(self, timeout: float | None = None) -> None:
        """Finish outstanding work and stop worker threads; the engine restarts them on use.

        With a ``timeout``, stop waiting after that many seconds and warn
        (``RuntimeWarning``) naming the functions still outstanding; they are
        abandoned.  Interpreter exit shuts every engine down this way, with
        :attr:`exit_timeout`.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            self._wait_all(timeout)
        except EngineTimeoutError as exc:
            warnings.warn(
                f"engine {self.name!r} shut down with work outstanding: {exc}. A function "
                f"pushed with push_async must call on_complete() on every path, and a "
                f"function must return; to wait longer at exit raise the engine's "
                f"exit_timeout (now {self.exit_timeout}s), or call wait_for_all() before exit",
                RuntimeWarning, stacklevel=2)
        self._stop_workers(deadline)

    def _stop_workers(self, deadline: float | None) -> None:  # noqa: B027 - optional hook
        """End worker threads, waiting for them until ``deadline`` (``time.monotonic``,
        None: as long as they take); an engine without threads has nothing to end."""

    @staticmethod
    def _new_run_ctx(ctx: Context) -> RunContext:
        """A run context for ``ctx`` with a new stream from its backend."""
        from ..backend import backend_for

        return RunContext(ctx, backend_for(ctx).create_stream(ctx.device_id))

    # -- fork (see dagnet.engine._selection) ------------------------------------------
    def _finish_before_fork(self, deadline: float) -> None:
        """Before ``os.fork``: let outstanding work finish until ``deadline``
        (``time.monotonic``); warn, naming it, if some is left (the child never runs it)."""
        try:
            self._wait_all(max(0.0, deadline - time.monotonic()))
        except EngineError:  # timed out, or forking inside a function
            warnings.warn(
                f"os.fork() with work outstanding on engine {self.name!r}: "
                f"{self._describe_outstanding()}. The parent keeps it; the child never runs "
                f"it, and reports what it writes as failed (EngineForkError) at a wait "
                f"there. Finish the work before forking (mx.nd.waitall()), or let the fork "
                f"wait longer (config engine_fork_timeout, now "
                f"{config.get('engine_fork_timeout')}s)",
                RuntimeWarning, stacklevel=5)  # the frame that called os.fork()

    def _hold_for_fork(self) -> None:  # noqa: B027 - optional hook
        """Take the engine's locks, so that the child inherits its state whole; what
        the engine still runs after this goes on in the parent only."""

    def _release_after_fork(self) -> None:  # noqa: B027 - optional hook
        """In the parent, let go of what :meth:`_hold_for_fork` took."""

    def _after_fork_in_child(self) -> None:
        """In the child, where only the forking thread lives: reset what a fork cannot
        carry (threads, locks) so the engine works at once; failures stay the parent's
        to report."""
        self._failures_lock = threading.Lock()
        self._failures = deque()

    def _abandon(self, blocks: Iterable[Block]) -> None:
        """In the child: mark what ``blocks`` write as failed with :class:`EngineForkError`,
        since the child never runs them (the parent does)."""
        timeout = config.get("engine_fork_timeout")
        for block in blocks:
            if block.ctx is None or block.prop is FnProperty.DELETE_VAR or block.lingers:
                continue  # a waiter, a deletion, or a function already completed
            error = EngineForkError(
                f"{block.name!r} had not finished when the process forked, so this process "
                f"never ran it and what it writes is undefined here: compute it again in "
                f"this process, or finish the work before forking (mx.nd.waitall(); the "
                f"fork waits engine_fork_timeout={timeout}s for it)")
            failure = Failure(block.name, error, block.seq)
            for var in block.writes:
                var._failure = failure

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


runs_pushed_functions(Engine._execute, Engine._execute_reported, Engine._start_async)
