"""Kernel threads, shared by the operator families: a kernel may split its work over
``config cpu_kernel_threads`` threads.  numpy's ufuncs and copies, BLAS and the compiled
kernels release the GIL, and each thread takes whole pieces, so no thread waits on
another in the middle of a product (as BLAS's own threads do, spinning)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from dagnet import config

__all__ = ["threads_for", "each", "sample_spans", "PIECE", "pieces"]

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forget_pool() -> None:
    # A forked child has none of the pool's threads: work handed to them would never run.
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def threads_for(xp: Any) -> int:
    """The threads a kernel on ``xp`` may use now: ``config cpu_kernel_threads`` on numpy,
    one elsewhere (a GPU queues its own work)."""
    return config.get("cpu_kernel_threads") if getattr(xp, "__name__", "") == "numpy" else 1


def each(work: Callable[[Any], Any], items: Sequence, threads: int) -> list:
    """``[work(item) for item in items]``, over up to ``threads`` threads (the calling one
    included); an exception in any piece is raised here."""
    if threads <= 1 or len(items) <= 1:
        return [work(item) for item in items]
    global _pool
    with _pool_lock:
        if _pool is None or _pool._max_workers < threads - 1:
            _pool = ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="dagnet-kernel")
        pool = _pool
    if len(items) > threads:  # hand out runs of items, one run per thread
        runs = [items[i::threads] for i in range(threads)]
        return [r for run_result in each(lambda run: [work(i) for i in run], runs, threads)
                for r in run_result]
    futures = [pool.submit(work, item) for item in items[1:]]
    first = work(items[0])
    return [first] + [f.result() for f in futures]


def sample_spans(n: int, threads: int) -> list[tuple[int, int]]:
    """``range(n)`` cut into at most ``threads`` runs ``(start, stop)`` of nearly equal length."""
    step = -(-n // max(1, threads))
    return [(a, min(a + step, n)) for a in range(0, n, max(1, step))]


#: elements below which an element-wise pass is not worth sharing out (twice this)
PIECE = 1 << 18


def pieces(xp: Any, *arrays: Any) -> tuple[list[tuple], int]:
    """Flat views of equally shaped C-contiguous ``arrays`` cut into pieces for the kernel
    threads, for an element-wise pass to run with :func:`each`: ``(pieces, threads)``; one
    whole piece when threads are 1 or the arrays small, of other shapes or not contiguous."""
    size = arrays[0].size
    threads = threads_for(xp) if size >= 2 * PIECE else 1  # small: no need to ask config
    if threads <= 1 or not all(
            a.shape == arrays[0].shape and a.flags.c_contiguous for a in arrays):
        return [tuple(arrays)], 1
    flat = [a.reshape(-1) for a in arrays]
    return [tuple(f[a:b] for f in flat) for a, b in sample_spans(size, threads)], threads
