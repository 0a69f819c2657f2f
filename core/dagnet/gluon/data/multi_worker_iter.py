"""MXNet's iterator over a ``multiprocessing`` pool, for DataLoaders that bring their own.

:class:`~dagnet.gluon.data.DataLoader` runs its workers in its own pool (see
``worker_pool``).  Libraries written for MXNet subclass MXNet's private
``_MultiWorkerIter`` instead and hand it a ``multiprocessing.Pool`` (or
``ThreadPool``) they made, whose workers were started with
:func:`_worker_initializer`; GluonCV's ``RandomTransformDataLoader`` does.  This
module is that iterator, with the same constructor, attributes and worker
functions: batches are sent with ``pool.apply_async(worker_fn, (indices,
batchify_fn, dataset))`` and come back in order.
"""

from __future__ import annotations

import io
import multiprocessing
import multiprocessing.pool
import pickle
from collections.abc import Callable
from multiprocessing.reduction import ForkingPickler
from typing import Any

from ... import util
from ...context import Context
from .dataloader import _as_in_context, _to_ndarray, default_mp_batchify_fn
from .worker_pool import DataLoaderTimeoutError

__all__ = ["_MultiWorkerIter", "_worker_initializer", "_worker_fn", "_thread_worker_fn",
           "PoolTimeoutError"]


class PoolTimeoutError(DataLoaderTimeoutError, multiprocessing.TimeoutError):
    """A batch from the pool did not arrive in time: dagnet's DataLoader timeout error and
    the ``multiprocessing.TimeoutError`` MXNet's iterator lets through, so code catching
    either catches it."""

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
