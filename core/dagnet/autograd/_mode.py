"""Recording and training mode, per thread, and their ``with`` scopes.

Both flags live on the runtime's per-thread mode record (``dagnet.runtime``),
so an operator call reads them without any call into this package:
``training`` becomes ``OpContext.is_train`` of every kernel pushed,
``recording`` makes the call add itself to the graph.
"""

from __future__ import annotations

from typing import Any

from .. import runtime
from ..runtime import is_recording, is_training, set_training

__all__ = ["is_recording", "is_training", "set_recording", "set_training", "record", "pause",
           "train_mode", "predict_mode"]


def set_recording(is_recording: bool) -> bool:
    """Switch recording on or off for this thread; returns the previous value."""
    return runtime.set_recording(is_recording)


class _Scope:
    """Sets recording and/or training mode (None: leave it) inside a ``with`` block and
    restores the previous values on exit."""

    def __init__(self, recording: bool | None, training: bool | None):
        self._recording = recording
        self._training = training
        self._saved: tuple[Any, Any] = (None, None)

    def __enter__(self) -> _Scope:
        recording = None if self._recording is None else set_recording(self._recording)
        training = None if self._training is None else set_training(self._training)
        self._saved = (recording, training)
        return self

    def __exit__(self, *exc: Any) -> None:
        recording, training = self._saved
        if recording is not None:
            set_recording(recording)
        if training is not None:
            set_training(training)


def record(train_mode: bool = True) -> _Scope:
    """``with record():`` records operator calls so ``backward`` can differentiate them;
    operators run in training mode unless ``train_mode=False``."""
    return _Scope(True, train_mode)


def pause(train_mode: bool = False) -> _Scope:
    """``with pause():`` stops recording inside a ``record`` block (prediction mode
    unless ``train_mode=True``)."""
    return _Scope(False, train_mode)


def train_mode() -> _Scope:
    """``with train_mode():`` runs operators in training mode; recording is unchanged."""
    return _Scope(None, True)


def predict_mode() -> _Scope:
    """``with predict_mode():`` runs operators in prediction mode; recording is unchanged."""
    return _Scope(None, False)
