"""DataLoader: a dataset read in mini-batches, in this process or by workers; and MXNet's
``_MultiWorkerIter``, the iterator over a pool the caller made that libraries subclass."""

from __future__ import annotations

import io
import itertools
import multiprocessing
import pickle
from collections.abc import Callable, Iterator
from multiprocessing.reduction import ForkingPickler
from typing import Any

import numpy as np

from ... import ndarray, util
from ...context import Context
from .dataset import DatasetError
from .sampler import BatchSampler, RandomSampler, SequentialSampler
from .worker_pool import DataLoaderTimeoutError, ProcessWorkerPool, ThreadWorkerPool

__all__ = ["DataLoader", "ForkingPickler", "PoolTimeoutError", "default_batchify_fn",
           "default_mp_batchify_fn"]


def default_batchify_fn(data: list[Any]) -> Any:
    """Stack samples into a batch: NDArrays with ``nd.stack``, tuples element by
    element (a list of batches), anything else through ``numpy.asarray`` keeping
    its dtype."""
    first = data[0]
    if isinstance(first, ndarray.NDArray):
        return ndarray.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(column)) for column in zip(*data)]
    host = np.asarray(data)
    return ndarray.array(host, dtype=host.dtype)


def default_mp_batchify_fn(data: list[Any]) -> Any:
    """What worker processes batch with by default: as :func:`default_batchify_fn`,
    NDArrays as MXNet's gives them (libraries with their own worker loops, GluonNLP's,
    pickle them back and use them as NDArrays), stacked on the host in one copy."""
    first = data[0]
    if isinstance(first, ndarray.NDArray):
        host = np.stack([item.asnumpy() for item in data])
        return ndarray.array(host, dtype=host.dtype)
    if isinstance(first, tuple):
        return [default_mp_batchify_fn(list(column)) for column in zip(*data)]
    host = np.asarray(data)
    return ndarray.array(host, dtype=host.dtype)


def _as_in_context(batch: Any, ctx: Context) -> Any:
    """``batch`` with its NDArrays (in lists and tuples too) copied to ``ctx`` (MXNet's
    private name, which GluonNLP's loaders import)."""
    if isinstance(batch, ndarray.NDArray):
        return batch.as_in_context(ctx)
    if isinstance(batch, (list, tuple)):
        return [_as_in_context(item, ctx) for item in batch]
    return batch


def _to_ndarray(batch: Any) -> Any:
    if isinstance(batch, np.ndarray):
        return ndarray.array(batch, dtype=batch.dtype)
    if isinstance(batch, list):
        return [_to_ndarray(item) for item in batch]
    return batch


class _WorkerIter:
    """One pass over the batches, keeping up to ``prefetch`` of them in flight."""

    def __init__(self, loader: DataLoader, pool: Any, keys: Iterator[int],
                 finish: Callable[[Any], Any]):
        self._loader = loader  # the pool lives as long as the loader: keep it alive
        self._pool = pool
        self._keys = keys
        self._finish = finish
        self._batches = iter(loader._batch_sampler)
        self._pending: list[int] = []
        for _ in range(max(1, loader._prefetch)):
            self._push()

    def _push(self) -> None:
        indices = next(self._batches, None)
        if indices is not None:
            key = next(self._keys)
            self._pool.submit(key, indices)
            self._pending.append(key)

    def __iter__(self) -> _WorkerIter:
        return self

    def __next__(self) -> Any:
        if not self._pending:
            raise StopIteration
        key = self._pending[0]
        try:
            batch = self._pool.result(key)
        except BaseException:  # Ctrl-C, say: the pass ends, nothing left in flight
            self.close()
            raise
        del self._pending[0]
        self._push()
        return self._finish(batch)

    def __len__(self) -> int:
        return len(self._loader._batch_sampler)

    def close(self) -> None:
        """Abandon the batches still in flight."""
        if self._pending:
            self._pool.forget(self._pending)
            self._pending = []

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # the pool may already be shut down at interpreter exit
            pass


class DataLoader:
    """Mini-batches of ``dataset`` (anything with ``__getitem__`` and ``__len__``).

    ``batch_size`` with ``shuffle`` or a ``sampler`` and ``last_batch``
    (``'keep'``, ``'discard'``, ``'rollover'``) choose the batches, or
    ``batch_sampler`` gives them directly.  ``batchify_fn`` merges a list of
    samples into a batch (default: :func:`default_batchify_fn`).  With
    ``num_workers > 0`` batches are made ahead (``prefetch``, default
    ``2 * num_workers``) by that many worker processes, or threads with
    ``thread_pool=True``; a worker that fails or dies raises
    :class:`DataLoaderWorkerError` and a batch later than ``timeout`` seconds
    raises :class:`DataLoaderTimeoutError`.  With ``pin_memory`` batches are
    copied to ``cpu_pinned(pin_device_id)`` (page-locked host memory where a GPU
    backend provides it).  ``auto_reload=True`` starts fetching the next pass as
    soon as one ends.
    """

    def __init__(self, dataset: Any, batch_size: int | None = None, shuffle: bool = False,
                 sampler: Any = None, last_batch: str | None = None, batch_sampler: Any = None,
                 batchify_fn: Callable | None = None, num_workers: int = 0,
                 pin_memory: bool = False, pin_device_id: int = 0, prefetch: int | None = None,
                 thread_pool: bool = False, timeout: float = 120, auto_reload: bool = False):
        if not timeout or timeout <= 0:
            raise DatasetError(f"DataLoader: timeout must be a positive number of seconds, "
                               f"got {timeout!r}")
        if batch_sampler is None:
            if batch_size is None:
                raise DatasetError("DataLoader: give batch_size, or a batch_sampler")
            if sampler is None:
                sampler = (RandomSampler if shuffle else SequentialSampler)(len(dataset))
            elif shuffle:
                raise DatasetError("DataLoader: give shuffle=True or a sampler, not both")
            batch_sampler = BatchSampler(sampler, batch_size, last_batch or "keep")
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise DatasetError("DataLoader: batch_size, shuffle, sampler and last_batch must "
                               "not be given with a batch_sampler")
        self._dataset = dataset
        self._batch_sampler = batch_sampler
        self._num_workers = max(0, int(num_workers))
        self._thread_pool = bool(thread_pool)
        self._timeout = timeout
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._prefetch = max(0, int(prefetch) if prefetch is not None
                             else 2 * self._num_workers)
        self._keys = itertools.count()
        self._pool: Any = None
        self._finish: Callable[[Any], Any] = _identity
        if batchify_fn is None:
            processes = self._num_workers > 0 and not self._thread_pool
            batchify_fn = default_mp_batchify_fn if processes else default_batchify_fn
        if batchify_fn is default_mp_batchify_fn:
            self._finish = _to_ndarray
        if pin_memory:
            pinned, convert = Context("cpu_pinned", pin_device_id), self._finish
            self._finish = lambda batch: _as_in_context(convert(batch), pinned)
        self._batchify_fn = batchify_fn
        if self._num_workers > 0:
            pool_type = ThreadWorkerPool if self._thread_pool else ProcessWorkerPool
            if not self._thread_pool:
                ndarray.waitall()  # nothing half-written is copied into the workers
            self._pool = pool_type(self._num_workers, dataset, batchify_fn, timeout)
        self.auto_reload = auto_reload
        self._iter: Any = None
        if auto_reload:
            self.refresh()

    def _same_process_iter(self) -> Iterator[Any]:
        for indices in self._batch_sampler:
            yield self._finish(self._batchify_fn([self._dataset[i] for i in indices]))

    def _prefetch_iter(self) -> Iterator[Any]:
        if self._pool is None:
            return self._same_process_iter()
        return _WorkerIter(self, self._pool, self._keys, self._finish)

    def __iter__(self) -> Iterator[Any]:
        if self._iter is None:
            self.refresh()
        batches, self._iter = self._iter, None
        yield from batches
        if self._iter is None and self.auto_reload:
            self.refresh()

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def refresh(self) -> None:
        """Start the next pass now (its first batches are fetched at once)."""
        self._iter = self._prefetch_iter()

    def clean(self) -> None:
        """Drop a pass started ahead; the next ``iter`` starts a fresh one."""
        if isinstance(self._iter, _WorkerIter):
            self._iter.close()
        self._iter = None

    def __del__(self) -> None:
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown()


def _identity(batch: Any) -> Any:
    return batch


# -- MXNet's iterator over a pool the caller made ----------------------------------------
# DataLoader above runs its own worker pool (worker_pool).  Libraries written for MXNet
# subclass MXNet's private _MultiWorkerIter instead and hand it a multiprocessing.Pool (or
# ThreadPool) they made, its workers started with _worker_initializer (GluonCV's
# RandomTransformDataLoader does): batches are sent with pool.apply_async(worker_fn,
# (indices, batchify_fn, dataset)) and come back in order.

# The dataset of this worker process, set once by the pool's initializer: a dataset
# holding an open file (a RecordIO reader) is then opened per process, not pickled per
# batch.
_worker_dataset: Any = None


def _worker_initializer(dataset: Any, active_shape: bool | None = None,
                        active_array: bool | None = None) -> None:
    """A worker process's initializer: keep ``dataset`` for :func:`_worker_fn`, and take
    the parent's NumPy-semantics flags when given."""
    global _worker_dataset
    _worker_dataset = dataset
    if active_shape is not None or active_array is not None:
        util.set_np(shape=bool(active_shape), array=bool(active_array))


def _worker_fn(samples: list[int], batchify_fn: Callable, dataset: Any = None) -> bytes:
    """Make one batch in a worker process from the dataset :func:`_worker_initializer`
    kept (``dataset`` is unused, as in MXNet), pickled for the trip back."""
    if _worker_dataset is None:
        raise RuntimeError("_worker_fn runs in a pool whose workers were started with "
                           "initializer=_worker_initializer, initargs=(dataset, ...)")
    batch = batchify_fn([_worker_dataset[i] for i in samples])
    buffer = io.BytesIO()
    ForkingPickler(buffer, pickle.HIGHEST_PROTOCOL).dump(batch)
    return buffer.getvalue()


def _thread_worker_fn(samples: list[int], batchify_fn: Callable, dataset: Any) -> Any:
    """Make one batch in a pool thread, from ``dataset`` itself (nothing to pickle)."""
    return batchify_fn([dataset[i] for i in samples])


class PoolTimeoutError(DataLoaderTimeoutError, multiprocessing.TimeoutError):
    """A batch from the pool did not arrive in time: dagnet's DataLoader timeout error and
    the ``multiprocessing.TimeoutError`` MXNet's iterator lets through, so code catching
    either catches it."""


class _MultiWorkerIter:
    """One pass over ``batch_sampler``'s batches, made by ``worker_pool``.

    ``worker_fn(indices, batchify_fn, dataset)`` runs in the pool; with ``dataset``
    None its result is a pickled batch (:func:`_worker_fn`), else the batch itself
    (:func:`_thread_worker_fn`).  ``prefetch`` batches are sent at once and one more
    per batch taken; a batch later than ``timeout`` seconds raises
    :class:`~dagnet.gluon.data.DataLoaderTimeoutError`.  A batch made by dagnet's
    ``default_mp_batchify_fn`` (numpy arrays, cheap to send) becomes NDArrays here,
    and with ``pin_memory`` batches are copied to ``cpu_pinned(pin_device_id)``.
    """

    def __init__(self, worker_pool: Any, batchify_fn: Callable, batch_sampler: Any,
                 pin_memory: bool = False, pin_device_id: int = 0,
                 worker_fn: Callable = _worker_fn, prefetch: int = 0, dataset: Any = None,
                 data_loader: Any = None, timeout: float = 120):
        self._worker_pool = worker_pool
        self._batchify_fn = batchify_fn
        self._batch_sampler = batch_sampler
        self._data_buffer: dict[int, Any] = {}
        self._rcvd_idx = 0
        self._sent_idx = 0
        self._iter = iter(self._batch_sampler)
        self._worker_fn = worker_fn
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._dataset = dataset
        self._data_loader = data_loader  # keeps the loader, and so its pool, alive
        self._timeout = timeout
        for _ in range(prefetch):
            self._push_next()

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def _push_next(self) -> None:
        """Send the next batch's indices to the pool, if any are left."""
        indices = next(self._iter, None)
        if indices is None:
            return
        pending = self._worker_pool.apply_async(
            self._worker_fn, (indices, self._batchify_fn, self._dataset))
        self._data_buffer[self._sent_idx] = pending
        self._sent_idx += 1

    def __next__(self) -> Any:
        self._push_next()
        if self._rcvd_idx == self._sent_idx:
            if self._data_buffer:
                raise RuntimeError(f"_MultiWorkerIter: every batch was received but "
                                   f"{len(self._data_buffer)} are still buffered")
            raise StopIteration
        pending = self._data_buffer.pop(self._rcvd_idx)
        try:
            payload = pending.get(self._timeout)
        except multiprocessing.TimeoutError:
            raise PoolTimeoutError(
                f"a DataLoader worker took more than {self._timeout} seconds for batch "
                f"{self._rcvd_idx}: make the transforms faster or raise timeout") from None
        except Exception:
            # a worker raised: the batches still in flight are of no use any more
            self._worker_pool.terminate()
            raise
        batch = pickle.loads(payload) if self._dataset is None else payload
        batch = _finish(batch, self._batchify_fn)
        if self._pin_memory:
            batch = _as_in_context(batch, Context("cpu_pinned", self._pin_device_id))
        self._rcvd_idx += 1
        return batch

    def next(self) -> Any:
        """Python 2's name for :meth:`__next__`, which MXNet keeps."""
        return self.__next__()

    def __iter__(self) -> _MultiWorkerIter:
        return self


def _finish(batch: Any, batchify_fn: Callable) -> Any:
    """A batch as the loader returns it: numpy batches of ``default_mp_batchify_fn``
    become NDArrays (what MXNet's shared-memory batches are)."""
    return _to_ndarray(batch) if batchify_fn is default_mp_batchify_fn else batch
