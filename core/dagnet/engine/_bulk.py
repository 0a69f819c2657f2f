"""The bulk size: how many imperative operator calls a thread bundles into one engine
operation (MXNet's ``mx.engine.set_bulk_size`` and ``mx.engine.bulk``).

The engine keeps the setting, per thread; the layer that pushes operator calls
(``dagnet.runtime``) bundles them, and registers in :data:`bulk_listeners` to
push what it holds whenever a thread's size goes down, so a ``with bulk(n):``
block ends with its work on the engine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .._errors import EngineTypeError

__all__ = ["bulk", "set_bulk_size", "bulk_state", "bulk_listeners"]


class _BulkState(threading.local):
    size = 0  # 0 or 1: every call is pushed on its own


bulk_state = _BulkState()
"""The calling thread's setting: ``bulk_state.size``."""

bulk_listeners: list[Callable[[], None]] = []
"""Called (on the thread) whenever its bulk size goes down."""


def set_bulk_size(size: int) -> int:
    """Bundle up to ``size`` operator calls of this thread into one engine operation (0
    or 1: none); returns the previous size.  Reading a result, any wait, and lowering
    the size push what is bundled."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise EngineTypeError(f"set_bulk_size: size must be a whole number of operations, 0 "
                              f"or more, got {size!r}")
    previous = bulk_state.size
    bulk_state.size = size
    if size < previous:
        for listener in bulk_listeners:
            listener()
    return previous


class bulk:  # noqa: N801 - MXNet's name
    """``with bulk(size):`` bundles this thread's operator calls ``size`` at a time, and
    pushes what is left at the end of the block."""

    def __init__(self, size: int):
        self._size = size
        self._previous: int | None = None

    def __enter__(self) -> bulk:
        self._previous = set_bulk_size(self._size)
        return self

    def __exit__(self, *exc: Any) -> None:
        set_bulk_size(0)  # whatever was bundled goes to the engine now
        set_bulk_size(self._previous or 0)
