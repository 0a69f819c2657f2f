"""The per-device engine: workers of its own for every device and kind of work."""

from __future__ import annotations

import threading
from collections.abc import Callable

from dagnet import config
from dagnet.context import Context
from dagnet.engine import Block, FnProperty, TrackedEngine, WorkerPool

from .threaded import worker_count

__all__ = ["ThreadedPerDeviceEngine"]

_NORMAL = FnProperty.NORMAL
_LANES = {
    FnProperty.COPY_FROM_GPU: "copy_from_gpu",
    FnProperty.COPY_TO_GPU: "copy_to_gpu",
    FnProperty.CPU_PRIORITIZED: "priority",
    FnProperty.GPU_PRIORITIZED: "priority",
}


class ThreadedPerDeviceEngine(TrackedEngine):
    """MXNet's ``ThreadedEnginePerDevice``: each device has its own lanes.

    A CPU device gets ``cpu_workers`` compute workers; a GPU gets
    ``gpu_workers`` compute workers, each with its own stream, plus
    ``copy_workers`` for each copy direction; every device has a priority
    lane (``priority_workers``) for ``CPU_PRIORITIZED``/``GPU_PRIORITIZED``
    work, which is also where functions pushed with ``priority > 0`` go, so
    they overtake the device's queued compute work.
    """

    name = "threaded_per_device"

    def __init__(self) -> None:
        super().__init__()
        self._pools: dict[tuple[Context, str], WorkerPool] = {}
        self._pools_lock = threading.Lock()
        # id(ctx) -> (ctx, its compute pool): ordinary work finds its lane
        # without hashing an enum and a Context (Python-level hashes).
        self._compute: dict[int, tuple[Context, WorkerPool]] = {}

    def _dispatch(self, block: Block) -> None:
        ctx = block.ctx
        if block.prop is _NORMAL and block.priority <= 0:
            known = self._compute.get(id(ctx))
            if known is not None and known[0] is ctx:
                known[1].submit(block)
                return
        lane = _LANES.get(block.prop, "compute")
        if block.priority > 0 and lane == "compute":
            lane = "priority"
        key = (ctx, lane)
        pool = self._pools.get(key)
        if pool is None:
            pool = self._make_pool(key)
        if block.prop is _NORMAL and lane == "compute":
            # Under the tracker lock (as every _dispatch): one writer.  The
            # entry holds ctx, so its id is not reused while it is cached;
            # bounded, for code that makes a new Context per push.
            if len(self._compute) >= 64:
                self._compute.clear()
            self._compute[id(ctx)] = (ctx, pool)
        pool.submit(block)

    def _make_pool(self, key: tuple[Context, str]) -> WorkerPool:
        ctx, lane = key
        with self._pools_lock:
            pool = self._pools.get(key)
            if pool is None:
                # the counts are asked whenever the pool's threads start
                if lane == "priority":
                    count = _configured("priority_workers")
                elif lane.startswith("copy"):
                    count = _configured("copy_workers")
                elif ctx.device_type == "cpu":
                    count = worker_count
                else:
                    count = _configured("gpu_workers")
                pool = WorkerPool(f"{ctx}-{lane}", count, self._run_ready, self._new_run_ctx)
                self._pools[key] = pool
        return pool

    def lanes(self) -> dict[str, int]:
        """The lanes started so far and their worker counts (for inspection)."""
        return {f"{ctx}/{lane}": pool.num_workers for (ctx, lane), pool in self._pools.items()}

    def _stop_workers(self, deadline: float | None) -> None:
        for pool in list(self._pools.values()):
            pool.stop(deadline)

    def _after_fork_in_child(self) -> None:
        super()._after_fork_in_child()
        self._pools_lock = threading.Lock()
        self._pools = {}
        self._compute = {}


def _configured(key: str) -> Callable[[], int]:
    """A function giving the current value of config ``key``."""
    return lambda: config.get(key)
