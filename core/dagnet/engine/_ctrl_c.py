"""Ctrl-C and the engine's own bookkeeping.

Python raises ``KeyboardInterrupt`` in the main thread at whichever bytecode
that thread has reached when SIGINT arrives.  Inside the engine's bookkeeping
-- between taking the tracker lock and letting it go, between registering a
pushed function and handing it to a worker -- that would leave a lock held, or
a variable granted to a function that never runs, and every later wait on it
would hang.

So dagnet's SIGINT handler (:func:`install_ctrl_c_handler`, done when an engine
is made) holds an interrupt back while the main thread runs engine code, and
the engine raises it -- a ``KeyboardInterrupt``, as Python's own handler would
-- at the first point where it holds nothing (:func:`raise_held_interrupt`):
when a push, a wait or ``on_complete`` has done its work and returns, and at
the start of each slice of a blocking wait.  Should the engine code be left
some other way (an error), the handler sends itself the signal again after
:data:`REDELIVERY` seconds, and raises it then if the main thread is out of
engine code.  The functions pushed to the engine run the program's own code
(on the naive engine, on the pushing thread), so an interrupt landing in one
is raised there at once, as usual.

Engine code is every module of ``dagnet.engine`` and the modules of every
engine class (and its bases) an engine was made from (:func:`protect_engine`),
so an engine plugin's own bookkeeping is covered too.  With a SIGINT handler
of the program's own, dagnet leaves it in place and none of this applies.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from types import CodeType, FrameType

__all__ = [
    "ctrl_c_handler", "held_interrupts", "install_ctrl_c_handler", "is_ctrl_c",
    "protect_engine", "raise_held_interrupt",
]

_protected_files: set[str] = {os.path.dirname(__file__)}  # directories and files
_runners: set[CodeType] = set()  # code whose direct callees are the pushed functions
_held = False  # an interrupt is held back, not yet raised
_held_count = 0
_redelivery_due = False  # a timer will send the signal again
_redelivered = False  # the timer sent it; the handler has not run since

REDELIVERY = 0.05
"""Seconds after which an interrupt still held back is sent again."""


def _protected(code: CodeType) -> bool:
    filename = code.co_filename
    return filename in _protected_files or os.path.dirname(filename) in _protected_files


def _in_engine_code(frame: FrameType | None) -> bool:
    """Whether the innermost frame that decides is engine code: walking outwards,
    an engine frame decides yes; a frame called directly by the code that runs a
    pushed function (the function itself) decides no; so does the end of the stack."""
    while frame is not None:
        if _protected(frame.f_code):
            return True
        parent = frame.f_back
        if parent is not None and parent.f_code in _runners:
            return False
        frame = parent
    return False


def ctrl_c_handler(signum: int, frame: FrameType | None) -> None:
    """The SIGINT handler: Python's ``signal.default_int_handler``, except that an
    interrupt landing in engine code is held back, for the engine to raise where
    it holds nothing."""
    global _held, _held_count, _redelivered
    if _redelivered:
        _redelivered = False
        if not _held:  # raised meanwhile, where the engine holds nothing
            return
    if _in_engine_code(frame):
        if not _held:
            _held = True
            _held_count += 1
        _redeliver_later()
        return
    _held = False
    _raise_ctrl_c()


def _redeliver_later() -> None:
    global _redelivery_due
    if not _redelivery_due:
        _redelivery_due = True
        timer = threading.Timer(REDELIVERY, _redeliver)
        timer.daemon = True
        timer.start()


def _redeliver() -> None:
    global _redelivery_due, _redelivered
    _redelivery_due = False
    if _held:
        _redelivered = True
        main = threading.main_thread()
        if hasattr(signal, "pthread_kill") and main.ident is not None:
            signal.pthread_kill(main.ident, signal.SIGINT)  # wakes a main thread that sleeps
        else:
            signal.raise_signal(signal.SIGINT)


def _raise_ctrl_c() -> None:
    interrupt = KeyboardInterrupt()
    interrupt._dagnet_ctrl_c = True  # type: ignore[attr-defined]
    raise interrupt


def raise_held_interrupt() -> None:
    """Raise the interrupt held back, if any (on the main thread): called by the engine
    where it holds nothing.  The hot paths test ``_held`` before calling it."""
    global _held
    if _held and threading.current_thread() is threading.main_thread():
        _held = False
        _raise_ctrl_c()


def is_ctrl_c(error: BaseException) -> bool:
    """Whether ``error`` is the ``KeyboardInterrupt`` dagnet's handler raised for a SIGINT
    (not one a function raised itself)."""
    return getattr(error, "_dagnet_ctrl_c", False)


def held_interrupts() -> int:
    """How many interrupts the handler has held back so far, landing in engine code."""
    return _held_count


def install_ctrl_c_handler() -> bool:
    """Make :func:`ctrl_c_handler` SIGINT's handler, if SIGINT still has Python's
    default handler and this is the main thread; True if it is the handler now."""
    current = signal.getsignal(signal.SIGINT)
    if current is ctrl_c_handler:
        return True
    if current is not signal.default_int_handler:
        return False
    if threading.current_thread() is not threading.main_thread():
        return False
    signal.signal(signal.SIGINT, ctrl_c_handler)
    return True


def forget_held_interrupt() -> None:
    """In a forked child: an interrupt the parent held back is the parent's."""
    global _held, _redelivery_due, _redelivered
    _held = _redelivery_due = _redelivered = False


def protect_engine(engine_class: type) -> None:
    """Count the modules of ``engine_class`` and its bases as engine code."""
    for klass in engine_class.__mro__:
        module = sys.modules.get(klass.__module__)
        filename = getattr(module, "__file__", None)
        if filename and klass is not object and klass.__module__ != "abc":
            _protected_files.add(filename)


def runs_pushed_functions(*functions: object) -> None:
    """Declare the engine functions whose direct callees are the pushed functions."""
    for function in functions:
        _runners.add(function.__code__)  # type: ignore[attr-defined]
