"""Entering the engine's stream around device work."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["stream_scope"]

_NO_STREAM = contextlib.nullcontext()


def stream_scope(run_ctx: Any) -> Any:
    """The context manager that makes ``run_ctx``'s stream current while device work runs.

    CPU functions have no stream (a shared no-op context is returned); a backend's
    stream is a context manager of its own (:class:`dagnet.backend.Stream`), entered
    as it is.
    """
    stream = run_ctx.stream if run_ctx is not None else None
    return _NO_STREAM if stream is None else stream
