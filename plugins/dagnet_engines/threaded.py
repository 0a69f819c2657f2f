"""The threaded engine: one pool of workers runs every ready function."""

from __future__ import annotations

import os

from dagnet import config
from dagnet.engine import Block, TrackedEngine, WorkerPool

__all__ = ["ThreadedEngine"]


def worker_count() -> int:
    """``cpu_workers`` from config, or one per core when it is 0."""
    return config.get("cpu_workers") or os.cpu_count() or 1


class ThreadedEngine(TrackedEngine):
    """All devices share one worker pool (MXNet's ``ThreadedEnginePooled``).

    Each worker keeps its own stream per device, so device work issued by two
    workers never shares a queue.
    """

    name = "threaded"

    def __init__(self) -> None:
        super().__init__()
        self._pool = WorkerPool("threaded", worker_count, self._run_ready, self._new_run_ctx)

    def _dispatch(self, block: Block) -> None:
        self._pool.submit(block)

    def lanes(self) -> dict[str, int]:
        """The one pool and its worker count (for inspection, as the per-device engine's)."""
        return {"all": self._pool.num_workers}

    def _stop_workers(self, deadline: float | None) -> None:
        self._pool.stop(deadline)

    def _after_fork_in_child(self) -> None:
        super()._after_fork_in_child()
        self._pool.reset_after_fork()
