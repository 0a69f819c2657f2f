"""``PrefetchingIter``: the next batch is read on a background thread while the model
works on the current one."""

from __future__ import annotations

import queue
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from .._argcheck import ArgumentTypeError
from .._errors import DagnetError, ParamError, ShapeError
from .data_batch import DataBatch
from .data_desc import DataDesc
from .data_iter import DataIter

__all__ = ["IteratorClosedError", "PrefetchingIter"]

_STOP = object()


class IteratorClosedError(DagnetError, RuntimeError):
    """A :class:`PrefetchingIter` was used after ``close()``."""


def _produce(iters: list[DataIter], requests: queue.SimpleQueue, results: queue.Queue) -> None:
    """The background thread: one step of every iterator per request, until told to stop.

    It holds the inner iterators but not the PrefetchingIter, so that one can be
    collected (and its finalizer stop this thread) while the thread waits.
    """
    while requests.get() is not _STOP:
        try:
            batches = []
            for it in iters:
                try:
                    batches.append(it.next())
                except StopIteration:
                    batches.append(None)
            results.put((batches, None))
        except BaseException as err:  # handed to the consumer, who re-raises it
            results.put((None, err))


class PrefetchingIter(DataIter):
    """Reads ahead from one or more iterators on a background thread.

    One batch is prepared while the current one is used (never more, so memory
    stays bounded).  With several iterators each step joins their batches: data
    and labels are concatenated in iterator order, so they must give the same
    number of batches with the same padding.  ``rename_data``/``rename_label``
    hold one ``{old_name: new_name}`` dict per iterator for ``provide_data`` and
    ``provide_label``.

    An exception raised by an inner iterator is re-raised, with its traceback,
    by the ``next`` call that would have returned that batch.  ``close()`` (or
    leaving a ``with`` block, or garbage collection) stops the thread.
    """

    def __init__(self, iters: DataIter | Sequence[DataIter],
                 rename_data: Sequence[dict[str, str]] | None = None,
                 rename_label: Sequence[dict[str, str]] | None = None):
        if isinstance(iters, DataIter) or not isinstance(iters, (list, tuple)):
            iters = [iters]
        if not iters:
            raise ParamError("PrefetchingIter: iters is empty; pass a DataIter or a list of them")
        self.iters = list(iters)
        self.n_iter = len(self.iters)
        self.rename_data = self._check_renames("rename_data", rename_data, "provide_data")
        self.rename_label = self._check_renames("rename_label", rename_label, "provide_label")
        super().__init__(self.provide_data[0].shape[0] if self.provide_data else 0)
        self.current_batch: DataBatch | None = None
        self._requests: queue.SimpleQueue = queue.SimpleQueue()
        self._results: queue.Queue = queue.Queue(maxsize=1)
        self._thread = threading.Thread(target=_produce, name="dagnet-prefetch", daemon=True,
                                        args=(self.iters, self._requests, self._results))
        self._thread.start()
        self._stop_worker = weakref.finalize(self, self._requests.put, _STOP)
        self._closed = False
        self._pending = False  # a fetch was requested and its result not yet taken
        self._exhausted = False
        self._request()

    def _check_renames(self, what: str, renames: Sequence[dict[str, str]] | None,
                       provide: str) -> list[dict[str, str]] | None:
        if renames is None:
            return None
        if not isinstance(renames, (list, tuple)) or len(renames) != self.n_iter or not all(
                isinstance(r, dict) for r in renames):
            raise ArgumentTypeError(
                f"PrefetchingIter: {what} must be a list of {self.n_iter} dict(s), one "
                f"{{old_name: new_name}} per iterator, got {renames!r}")
        for i, (rename, it) in enumerate(zip(renames, self.iters)):
            names = [desc[0] for desc in getattr(it, provide)]
            unknown = sorted(set(rename) - set(names))
            if unknown:
                raise ParamError(
                    f"PrefetchingIter: {what}[{i}] renames {', '.join(map(repr, unknown))}, "
                    f"which iterator {i} does not provide; its names are "
                    f"{', '.join(map(repr, names)) or 'none'}")
        return list(renames)

    @staticmethod
    def _renamed(descs: list[Any], rename: dict[str, str] | None) -> list[Any]:
        if rename is None:
            return list(descs)
        renamed = []
        for desc in descs:
            name, shape = desc[0], desc[1]
            if isinstance(desc, DataDesc):
                renamed.append(DataDesc(rename.get(name, name), shape, desc.dtype, desc.layout))
            else:
                renamed.append(DataDesc(rename.get(name, name), shape))
        return renamed

    @property
    def provide_data(self) -> list[Any]:
        """The inner iterators' data descriptions, in order, renamed by ``rename_data``."""
        renames = self.rename_data or [None] * self.n_iter
        return [d for it, r in zip(self.iters, renames) for d in self._renamed(it.provide_data, r)]

    @property
    def provide_label(self) -> list[Any]:
        """The inner iterators' label descriptions, in order, renamed by ``rename_label``."""
        renames = self.rename_label or [None] * self.n_iter
        return [d for it, r in zip(self.iters, renames)
                for d in self._renamed(it.provide_label, r)]

    def _request(self) -> None:
        self._requests.put(True)
        self._pending = True

    def _check_open(self) -> None:
        if self._closed:
            raise IteratorClosedError("PrefetchingIter is closed; create a new one to read "
                                      "the data again")

    def reset(self) -> None:
        """Start the next epoch of every inner iterator and prefetch its first batch.

        A batch (or an error) prefetched for the abandoned epoch is dropped.
        """
        self._check_open()
        if self._pending:
            self._results.get()
            self._pending = False
        for it in self.iters:
            it.reset()
        self._exhausted = False
        self._request()

    def iter_next(self) -> bool:
        """Take the prefetched batch and start preparing the one after it."""
        self._check_open()
        if not self._pending:
            if self._exhausted:
                return False
            self._request()
        batches, error = self._results.get()
        self._pending = False
        if error is not None:
            raise error
        ended = [i for i, batch in enumerate(batches) if batch is None]
        if ended:
            self._exhausted = True
            if len(ended) != len(batches):
                raise ShapeError(
                    f"PrefetchingIter: iterator(s) {ended} ran out of batches while the others "
                    f"had more; give every iterator the same number of examples and batch size")
            return False
        pads = [batch.pad for batch in batches]
        if len(set(pads)) > 1:
            self._exhausted = True
            raise ShapeError(f"PrefetchingIter: the iterators' batches have different padding "
                             f"{pads}; give every iterator the same number of examples and "
                             f"batch size")
        self.current_batch = DataBatch(
            [d for batch in batches for d in batch.data],
            [lab for batch in batches for lab in (batch.label or [])],
            batches[0].pad, batches[0].index,
            provide_data=self.provide_data, provide_label=self.provide_label)
        self._request()
        return True

    def next(self) -> DataBatch:
        """The next batch (prefetched); StopIteration at the end of the epoch."""
        if not self.iter_next():
            raise StopIteration
        return self.current_batch

    def getdata(self) -> list[Any]:
        """The data arrays of the current batch, all iterators' in order."""
        return self.current_batch.data

    def getlabel(self) -> list[Any]:
        """The label arrays of the current batch, all iterators' in order."""
        return self.current_batch.label

    def getindex(self) -> Any:
        """The example indices of the current batch (from the first iterator)."""
        return self.current_batch.index

    def getpad(self) -> int | None:
        """The padding of the current batch."""
        return self.current_batch.pad

    def close(self, timeout: float | None = None) -> None:
        """Stop the background thread, waiting up to ``timeout`` seconds (None: as long as
        it takes) for a fetch in progress to finish.  Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        self._stop_worker()
        self._thread.join(timeout)

    def __enter__(self) -> PrefetchingIter:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()
