"""The worker pools a DataLoader fetches batches with: processes or threads.

Both pools take ``submit(key, indices)`` and ``result(key)``.  The process pool
forks workers that inherit the dataset (so lambdas and open files need not be
pickled), sends each batch back pickled, and watches its workers: a worker that
dies raises :class:`DataLoaderWorkerError` naming it, and a batch that takes
longer than ``timeout`` seconds raises :class:`DataLoaderTimeoutError`, so a
DataLoader never hangs on a lost batch.
"""

from __future__ import annotations

import multiprocessing
import pickle
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from ..._errors import DagnetError

__all__ = ["DataLoaderWorkerError", "DataLoaderTimeoutError", "ProcessWorkerPool",
           "ThreadWorkerPool"]

_POLL_SECONDS = 0.1
_EXIT_SECONDS = 1.0  # how long shutdown lets the workers finish their batches


class DataLoaderWorkerError(DagnetError, RuntimeError):
    """A DataLoader worker raised while making a batch, or died."""


class DataLoaderTimeoutError(DagnetError, TimeoutError):
    """A DataLoader batch did not arrive within the loader's ``timeout``."""


def _worker_loop(dataset: Any, batchify_fn: Callable, tasks: Any, results: Any,
                 worker_id: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    while True:
        task = tasks.get()
        if task is None:
            # results still unread are not wanted any more: exit without waiting for the
            # parent to drain them from the pipe
            results.cancel_join_thread()
            return
        key, indices = task
        try:
            payload = pickle.dumps(batchify_fn([dataset[i] for i in indices]),
                                   protocol=pickle.HIGHEST_PROTOCOL)
            results.put((key, worker_id, True, payload))
        except Exception as exc:  # reported in the parent, with this traceback
            text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            results.put((key, worker_id, False, text))


class ProcessWorkerPool:
    """``num_workers`` worker processes reading ``dataset`` and batching with
    ``batchify_fn`` (which must return something picklable)."""

    def __init__(self, num_workers: int, dataset: Any, batchify_fn: Callable,
                 timeout: float):
        methods = multiprocessing.get_all_start_methods()
        mp = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self._timeout = timeout
        self._tasks = mp.Queue()
        self._results = mp.Queue()
        self._done: dict[int, tuple[int, bool, Any]] = {}
        self._forgotten: set[int] = set()
        self._lock = threading.Lock()
        self._workers = []
        for worker_id in range(num_workers):
            proc = mp.Process(target=_worker_loop, name=f"DataLoader worker {worker_id}",
                              args=(dataset, batchify_fn, self._tasks, self._results,
                                    worker_id), daemon=True)
            proc.start()
            self._workers.append(proc)
        self._closed = False

    def submit(self, key: int, indices: list[Any]) -> None:
        """Queue the batch of ``indices`` under ``key``."""
        self._tasks.put((key, list(indices)))

    def forget(self, keys: Any) -> None:
        """Drop the results of ``keys`` (an abandoned pass) when they arrive."""
        with self._lock:
            for key in keys:
                if self._done.pop(key, None) is None:
                    self._forgotten.add(key)

    def _dead_worker(self) -> str | None:
        for worker_id, proc in enumerate(self._workers):
            if not proc.is_alive():
                return (f"DataLoader worker {worker_id} (pid {proc.pid}) exited unexpectedly "
                        f"with exit code {proc.exitcode}")
        return None

    def result(self, key: int) -> Any:
        """The batch submitted under ``key``, waiting for it at most ``timeout`` seconds."""
        deadline = time.monotonic() + self._timeout
        while True:
            with self._lock:
                if key in self._done:
                    worker_id, ok, payload = self._done.pop(key)
                    break
            try:
                got_key, worker_id, ok, payload = self._results.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                dead = self._dead_worker()
                if dead is not None:
                    raise DataLoaderWorkerError(
                        f"{dead}; the batch it may have held is lost (a worker dies when "
                        f"the dataset or batchify_fn crashes the process or runs out of "
                        f"memory; try num_workers=0 to see the failure in this process)"
                        ) from None
                if time.monotonic() > deadline:
                    raise DataLoaderTimeoutError(
                        f"DataLoader: no batch from the {len(self._workers)} worker "
                        f"processes within timeout={self._timeout}s (raise the DataLoader's "
                        f"timeout if the dataset is this slow)") from None
                continue
            with self._lock:
                if got_key in self._forgotten:
                    self._forgotten.discard(got_key)
                    continue
                if got_key != key:
                    self._done[got_key] = (worker_id, ok, payload)
                    continue
            break
        if not ok:
            raise DataLoaderWorkerError(
                f"DataLoader worker {worker_id} failed making a batch:\n{payload}")
        return pickle.loads(payload)

    def shutdown(self) -> None:
        """Stop the workers (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for _ in self._workers:
            try:
                self._tasks.put(None)
            except (OSError, ValueError):
                break
        deadline = time.monotonic() + _EXIT_SECONDS  # for all workers together
        for proc in self._workers:
            proc.join(timeout=max(0.0, deadline - time.monotonic()))
        stuck = [proc for proc in self._workers if proc.is_alive()]
        for proc in stuck:
            proc.terminate()
        for proc in stuck:
            proc.join(timeout=1)
        for q in (self._tasks, self._results):
            q.close()
            q.cancel_join_thread()


class ThreadWorkerPool:
    """``num_workers`` threads of this process reading ``dataset`` and batching with
    ``batchify_fn``; nothing is pickled."""

    def __init__(self, num_workers: int, dataset: Any, batchify_fn: Callable,
                 timeout: float):
        self._dataset = dataset
        self._batchify_fn = batchify_fn
        self._timeout = timeout
        self._executor = ThreadPoolExecutor(num_workers, thread_name_prefix="DataLoader")
        self._futures: dict[int, Any] = {}

    def _make(self, indices: list[Any]) -> Any:
        return self._batchify_fn([self._dataset[i] for i in indices])

    def submit(self, key: int, indices: list[Any]) -> None:
        """Start the batch of ``indices`` under ``key``."""
        self._futures[key] = self._executor.submit(self._make, list(indices))

    def forget(self, keys: Any) -> None:
        """Drop the batches of ``keys`` (an abandoned pass)."""
        for key in keys:
            future = self._futures.pop(key, None)
            if future is not None:
                future.cancel()

    def result(self, key: int) -> Any:
        """The batch submitted under ``key``, waiting for it at most ``timeout`` seconds."""
        future = self._futures.pop(key)
        try:
            return future.result(timeout=self._timeout)
        except FutureTimeout:
            raise DataLoaderTimeoutError(
                f"DataLoader: no batch from the worker threads within "
                f"timeout={self._timeout}s (raise the DataLoader's timeout if the dataset "
                f"is this slow)") from None

    def shutdown(self) -> None:
        """Stop the threads once their current batches end."""
        self._executor.shutdown(wait=False, cancel_futures=True)
