"""Device memory (MXNet's "Storage Allocator"): ``alloc``, ``free``, ``direct_free``,
``release_all`` and per-device ``stats`` on one process-wide pooled manager.

>>> import dagnet
>>> h = dagnet.storage.alloc(1024, dagnet.cpu())
>>> dagnet.storage.free(h)          # back to the pool, reused by the next alloc
>>> dagnet.storage.stats(dagnet.cpu()).pooled
1024
"""

from __future__ import annotations

from .._fork import MEMORY, at_fork
from ._pool import DevicePool, Handle, StorageManager, StorageStats, bucket_size

__all__ = [
    "DevicePool", "Handle", "StorageManager", "StorageStats", "bucket_size",
    "manager", "alloc", "free", "direct_free", "release_all", "stats",
]

_manager = StorageManager()
at_fork(MEMORY, before=_manager.hold_locks, after_in_parent=_manager.release_locks,
        after_in_child=_manager.release_locks)


def manager() -> StorageManager:
    """The process-wide storage manager."""
    return _manager


def alloc(nbytes: int, ctx) -> Handle:
    """Allocate ``nbytes`` on ``ctx`` from its pool."""
    return _manager.alloc(nbytes, ctx)


def free(handle: Handle) -> None:
    """Return ``handle`` to its pool."""
    _manager.free(handle)


def direct_free(handle: Handle) -> None:
    """Return ``handle`` to the device at once."""
    _manager.direct_free(handle)


def release_all(ctx=None) -> None:
    """Give pooled blocks of ``ctx`` (default: every device) back to the device."""
    _manager.release_all(ctx)


def stats(ctx) -> StorageStats:
    """In-use, pooled and peak bytes of ``ctx``."""
    return _manager.stats(ctx)
