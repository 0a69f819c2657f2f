"""A pooled storage manager per device (MXNet's ``StorageManager``/``PooledStorageManager``)."""

from __future__ import annotations

import itertools
import operator
import threading
from dataclasses import dataclass
from typing import Any

from .. import config
from .._errors import StorageError
from ..context import Context

__all__ = ["Handle", "StorageStats", "DevicePool", "StorageManager", "bucket_size"]

_ALIGN = 512  # bytes: blocks within this granularity share a bucket under "exact"
_SIZES_KEPT = 4096  # bucket sizes remembered per pool (requested sizes repeat)
_handle_ids = itertools.count(1)


def bucket_size(nbytes: int, policy: str) -> int:
    """The block size that serves ``nbytes`` under ``policy``."""
    nbytes = max(nbytes, 1)
    if policy == "round":
        return 1 << (nbytes - 1).bit_length()
    if policy == "exact":
        return -(-nbytes // _ALIGN) * _ALIGN
    return nbytes  # unpooled


@dataclass(eq=False, slots=True)
class Handle:
    """A block of device memory: ``data`` is the backend's raw 1-D uint8 buffer.

    ``nbytes`` is what was asked for, ``size`` what the block holds.
    """

    id: int
    nbytes: int
    size: int
    ctx: Context
    data: Any
    live: bool = True
    pool: Any = None  # the DevicePool that handed it out

    def __repr__(self) -> str:
        return f"<Handle #{self.id} {self.nbytes}B on {self.ctx}{'' if self.live else ' (freed)'}>"


@dataclass(frozen=True)
class StorageStats:
    """One device's memory, in bytes and counts."""

    in_use: int
    pooled: int
    peak: int
    allocations: int
    reuses: int

    @property
    def reserved(self) -> int:
        """Bytes held from the device: in use plus pooled."""
        return self.in_use + self.pooled


class DevicePool:
    """Recycles freed blocks of one device by size bucket.

    At most ``limit`` bytes (0: no limit) wait in the pool; a block freed beyond
    that goes back to the device.
    """

    def __init__(self, ctx: Context, backend: Any, policy: str, limit: int = 0):
        self.ctx = ctx
        self.policy = policy
        self.limit = limit
        self._backend = backend
        self._free: dict[int, list[Any]] = {}
        self._sizes: dict[int, int] = {}  # nbytes -> bucket size, as asked so far
        self._lock = threading.Lock()
        self._in_use = self._pooled = self._peak = self._allocations = self._reuses = 0

    def alloc(self, nbytes: int) -> Handle:
        size = self._sizes.get(nbytes)
        if size is None:
            if len(self._sizes) >= _SIZES_KEPT:
                self._sizes.clear()
            size = self._sizes[nbytes] = bucket_size(nbytes, self.policy)
        with self._lock:  # a pooled block: taken and accounted for under one lock
            blocks = self._free.get(size)
            if blocks:
                self._pooled -= size
                self._reuses += 1
                return self._hand_out(nbytes, size, blocks.pop())
        data = self._fresh(size)
        with self._lock:
            return self._hand_out(nbytes, size, data)

    def _hand_out(self, nbytes: int, size: int, data: Any) -> Handle:
        """A live handle on ``data`` (called holding the lock)."""
        handle = Handle(next(_handle_ids), nbytes, size, self.ctx, data, True, self)
        self._in_use += size
        if self._in_use > self._peak:
            self._peak = self._in_use
        return handle

    def _fresh(self, size: int) -> Any:
        try:
            data = self._backend.alloc(size, self.ctx.device_id)
        except MemoryError:
            # Out of memory: give the pool back to the device and try once more.
            self.release_all()
            try:
                data = self._backend.alloc(size, self.ctx.device_id)
            except MemoryError:
                stats = self.stats()
                raise MemoryError(
                    f"out of memory on {self.ctx} allocating {size} bytes "
                    f"({stats.in_use} bytes in use after releasing the pool)") from None
        with self._lock:
            self._allocations += 1
        return data

    def _take(self, handle: Handle, action: str) -> None:
        with self._lock:
            if handle.__class__ is not Handle or handle.pool is not self or not handle.live:
                self._refuse(handle, action)
            handle.live = False
            self._in_use -= handle.size

    @staticmethod
    def _refuse(handle: Any, action: str) -> None:
        if not isinstance(handle, Handle):
            raise StorageError(f"{action}: expected a storage Handle from alloc(), got {handle!r}")
        state = "already freed" if not handle.live else "not allocated by this manager"
        raise StorageError(f"{action}({handle!r}): the handle is {state}")

    def free(self, handle: Handle) -> None:
        if self.policy == "unpooled":
            self._take(handle, "free")
            self._backend.free(handle.data)
            handle.data = None
            return
        with self._lock:  # checked, retired and pooled under one lock
            if handle.__class__ is not Handle or handle.pool is not self or not handle.live:
                self._refuse(handle, "free")
            handle.live = False
            self._in_use -= handle.size
            pooled = not self.limit or self._pooled + handle.size <= self.limit
            if pooled:
                self._free.setdefault(handle.size, []).append(handle.data)
                self._pooled += handle.size
        if not pooled:
            self._backend.free(handle.data)
        handle.data = None

    def direct_free(self, handle: Handle) -> None:
        self._take(handle, "direct_free")
        self._backend.free(handle.data)
        handle.data = None

    def release_all(self) -> None:
        with self._lock:
            blocks = [b for bucket in self._free.values() for b in bucket]
            self._free.clear()
            self._pooled = 0
        for block in blocks:
            self._backend.free(block)

    def stats(self) -> StorageStats:
        with self._lock:
            return StorageStats(self._in_use, self._pooled, self._peak, self._allocations,
                                self._reuses)


class StorageManager:
    """Hands out device memory through one :class:`DevicePool` per device.

    The pool policy comes from config ``storage_pool`` (``exact``, ``round``
    or ``unpooled``), and the most bytes a pool keeps from ``storage_pool_limit``,
    when a device's pool is first used.
    """

    def __init__(self) -> None:
        self._pools: dict[Context, DevicePool] = {}
        self._lock = threading.Lock()
        self._held: list[DevicePool] = []  # pools whose locks are held across a fork

    def pool(self, ctx: Context) -> DevicePool:
        """The pool of ``ctx``, created on first use."""
        if not isinstance(ctx, Context):
            raise StorageError(f"expected a dagnet Context such as dagnet.cpu(), got {ctx!r}")
        pool = self._pools.get(ctx)
        if pool is None:
            from ..backend import backend_for

            backend = backend_for(ctx)
            with self._lock:
                pool = self._pools.get(ctx)
                if pool is None:
                    pool = self._pools[ctx] = DevicePool(ctx, backend, config.get("storage_pool"),
                                                         config.get("storage_pool_limit"))
        return pool

    def alloc(self, nbytes: int, ctx: Context) -> Handle:
        """A block of at least ``nbytes`` bytes on ``ctx``."""
        try:
            # operator.index accepts numpy integers (sizes often come from np.prod)
            size = None if isinstance(nbytes, bool) else operator.index(nbytes)
        except TypeError:
            size = None
        if size is None or size < 0:
            raise StorageError(
                f"alloc: nbytes must be an integer >= 0, got {type(nbytes).__name__} {nbytes!r}")
        return self.pool(ctx).alloc(size)

    def free(self, handle: Handle) -> None:
        """Return a block to its device's pool for reuse."""
        self._pool_of(handle, "free").free(handle)

    def direct_free(self, handle: Handle) -> None:
        """Return a block straight to the device, bypassing the pool."""
        self._pool_of(handle, "direct_free").direct_free(handle)

    def release_all(self, ctx: Context | None = None) -> None:
        """Give every pooled (free) block of ``ctx``, or of all devices, back to the device."""
        with self._lock:
            if ctx is None:
                pools = list(self._pools.values())
            else:
                pools = [self._pools[ctx]] if ctx in self._pools else []
        for pool in pools:
            pool.release_all()

    def stats(self, ctx: Context) -> StorageStats:
        """Memory statistics of ``ctx`` (all zero before its first allocation)."""
        pool = self._pools.get(ctx)
        return pool.stats() if pool is not None else StorageStats(0, 0, 0, 0, 0)

    def devices(self) -> list[Context]:
        """Devices that have a pool."""
        with self._lock:
            return list(self._pools)

    def hold_locks(self) -> None:
        """Take the manager's lock and every pool's (before ``os.fork``): the child then
        inherits each pool whole, never in the middle of another thread's update."""
        self._lock.acquire()
        self._held = list(self._pools.values())
        for pool in self._held:
            pool._lock.acquire()

    def release_locks(self) -> None:
        """Let go of what :meth:`hold_locks` took (after the fork, in parent and child)."""
        for pool in self._held:
            pool._lock.release()
        self._held = []
        self._lock.release()

    def _pool_of(self, handle: Handle, action: str) -> DevicePool:
        if not isinstance(handle, Handle):
            raise StorageError(f"{action}: expected a storage Handle from alloc(), got {handle!r}")
        pool = self._pools.get(handle.ctx)
        if pool is None:
            raise StorageError(f"{action}: {handle!r} was not allocated by this storage manager")
        return pool
