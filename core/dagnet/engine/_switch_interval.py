"""The interpreter's switch interval while the threaded engines' workers run.

A worker returning from a kernel (numpy and the compiled kernels release the
interpreter lock inside one) needs the lock back to go on.  While the pushing thread
runs Python, the worker gets it when that thread waits, or once the switch interval
has passed.  With Python's 5 ms, a training step's weight update and next layers ran
one after the other instead of beside the pushing thread's Python
(benchmarks/gluon_step.py).  Where the functions take microseconds, the workers gain
nothing from taking the lock sooner, and each hand-over costs
(benchmarks/engine_overhead.py: about 1 us more per operation at 0.2 ms).

So starting workers, and a throttled push that finds the workers' functions slow
(``TrackedEngine._throttle``), shorten the interval to config
``engine_switch_interval`` (:func:`shorten`); a throttled push that finds them quick
puts the interval it replaced back (:func:`restore`).
"""

from __future__ import annotations

import sys
import threading

from .. import config

__all__ = ["shorten", "restore"]

_lock = threading.Lock()
_saved: float | None = None  # the interval before shorten() set it
_set: float | None = None  # what shorten() set


def shorten() -> None:
    """Lower the interval to config ``engine_switch_interval`` when that is set (not 0)
    and shorter than the interval now."""
    global _saved, _set
    wanted = config.get("engine_switch_interval")
    if not 0 < wanted < sys.getswitchinterval():
        return
    with _lock:
        now = sys.getswitchinterval()
        if _set is None or now != _set:  # else _saved already holds the one to put back
            _saved = now
        _set = wanted
        sys.setswitchinterval(wanted)


def restore() -> None:
    """Put back the interval :func:`shorten` replaced, unless something else has set
    the interval since."""
    global _saved, _set
    if _set is None:
        return
    with _lock:
        if _set is not None and sys.getswitchinterval() == _set:
            sys.setswitchinterval(_saved)
        _saved = _set = None
