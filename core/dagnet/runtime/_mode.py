"""The per-thread training and recording mode, and the recorder hooks.

Operators read ``mode.training`` as ``OpContext.is_train``; while
``mode.recording`` is set, the imperative path hands every call to the
recorder (``hooks.record_call``) before pushing it.  The recorder is
installed by ``dagnet.autograd`` when it is imported -- the runtime owns
the hook, so the array front end never imports autograd.
"""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["mode", "hooks", "install_recorder", "is_training", "set_training", "is_recording",
           "set_recording"]


class _Mode(threading.local):
    training = False  # every thread starts in prediction mode
    recording = False


mode = _Mode()


class _Hooks:
    """What the front ends call into the recorder for (set by :func:`install_recorder`).

    ``record_call(call, inputs, outputs, out)``: before a call's push while recording.
    ``views``: the module with differentiable ``getitem``/``reshape``/``copy``/``astype``.
    ``backward(heads, head_grads, retain_graph, train_mode)``: ``NDArray.backward``.
    ``host_read(array)``: before an array's values are copied to the host while recording
    (a graph being traced cannot hold a value Python read).
    ``traced_write(target, value)``: before a write into ``target`` outside the operators
    (``x[idx] = v``, ``copyto``) while recording; True when a trace took care of it (the
    recorder's own checks are then skipped).
    """

    __slots__ = ("record_call", "views", "backward", "host_read", "traced_write")

    def __init__(self) -> None:
        self.record_call = _not_installed
        self.views: Any = None
        self.backward = _not_installed
        self.host_read: Any = _ignore
        self.traced_write: Any = _ignore


def _ignore(*args: Any) -> None:
    return None


def _not_installed(*args: Any, **kwargs: Any) -> None:
    raise RuntimeError("no computational graph was recorded: import dagnet.autograd and "
                       "compute inside autograd.record() before differentiating")


hooks = _Hooks()


def install_recorder(record_call: Any, views: Any, backward: Any,
                     host_read: Any = _ignore, traced_write: Any = _ignore) -> None:
    """Install the recorder (``dagnet.autograd`` does this when imported)."""
    hooks.record_call, hooks.views, hooks.backward = record_call, views, backward
    hooks.host_read, hooks.traced_write = host_read, traced_write


def is_training() -> bool:
    """Whether operators run in training mode (``OpContext.is_train``) on this thread."""
    return mode.training


def set_training(training: bool) -> bool:
    """Set training mode for this thread; returns the previous value."""
    previous = mode.training
    mode.training = bool(training)
    return previous


def is_recording() -> bool:
    """Whether operator calls on this thread are recorded for differentiation."""
    return mode.recording


def set_recording(recording: bool) -> bool:
    """Switch recording on or off for this thread; returns the previous value.

    Recording needs the recorder: switching it on without ``dagnet.autograd``
    loaded raises.
    """
    if recording and hooks.views is None:
        _not_installed()
    previous = mode.recording
    mode.recording = bool(recording)
    return previous
