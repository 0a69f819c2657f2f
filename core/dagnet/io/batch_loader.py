"""``BatchLoaderIter``: batches over examples held in memory, with MXNet's C++
batch loader's rules (shared by ``CSVIter``, ``LibSVMIter`` and ``MNISTIter``).

With ``round_batch`` the last batch of an epoch is completed from the start of
the data and the next epoch begins after the examples so borrowed; without it,
the slots past the data keep the previous batch's examples.  Either way ``pad``
counts those slots.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ndarray as nd
from .data_batch import DataBatch
from .data_desc import DataDesc
from .data_iter import DataIter

__all__ = ["BatchLoaderIter"]


class BatchLoaderIter(DataIter):
    """Batches of ``data`` and ``label`` (numpy arrays, examples along axis 0)."""

    def __init__(self, data: np.ndarray, label: np.ndarray, batch_size: int,
                 round_batch: bool = True, data_name: str = "data",
                 label_name: str = "softmax_label", discard_last: bool = False):
        super().__init__(int(batch_size))
        self._data, self._label = data, label
        self.round_batch = bool(round_batch)
        self._discard_last = discard_last
        self.provide_data = [DataDesc(data_name, (self.batch_size,) + data.shape[1:],
                                      data.dtype.type)]
        self.provide_label = [DataDesc(label_name, (self.batch_size,) + label.shape[1:],
                                       label.dtype.type)]
        self._order = np.arange(len(data))
        self._start = 0          # where the next epoch begins
        self._head = 0
        self._buffer: tuple[np.ndarray, np.ndarray] | None = None
        self._batch: DataBatch | None = None

    def _shuffle(self) -> None:
        """Reorder ``self._order`` for the next epoch (a subclass that shuffles)."""

    def reset(self) -> None:
        """Start the next epoch."""
        self._shuffle()
        self._head = self._start
        self._batch = None

    def iter_next(self) -> bool:
        """Assemble the next batch; False at the end of the epoch."""
        n, size = len(self._order), self.batch_size
        if self._head >= n or n == 0:
            return False
        stop = self._head + size
        if stop > n and self._discard_last:
            return False
        if self._buffer is None:
            self._buffer = (np.zeros((size,) + self._data.shape[1:], self._data.dtype),
                            np.zeros((size,) + self._label.shape[1:], self._label.dtype))
        data, label = self._buffer
        take = self._order[self._head:min(stop, n)]
        data[:len(take)] = self._data[take]
        label[:len(take)] = self._label[take]
        pad = size - len(take)
        self._start = 0
        if pad and self.round_batch:
            wrap = self._order[np.arange(pad) % n]
            data[len(take):] = self._data[wrap]
            label[len(take):] = self._label[wrap]
            self._start = pad % n
        self._head = stop
        self._batch = DataBatch([nd.array(data, dtype=data.dtype)],
                                [nd.array(label, dtype=label.dtype)], pad=pad)
        return True

    def next(self) -> DataBatch:
        """The next batch; StopIteration at the end of the epoch."""
        if not self.iter_next():
            raise StopIteration
        assert self._batch is not None
        return self._batch

    def getdata(self) -> Any:
        """The current batch's data array (one NDArray, as MXNet's C++ iterators give)."""
        return self._batch.data[0] if self._batch else None

    def getlabel(self) -> Any:
        """The current batch's label array (one NDArray)."""
        return self._batch.label[0] if self._batch else None

    def getpad(self) -> int | None:
        """How many slots at the end of the current batch hold no new example."""
        return self._batch.pad if self._batch else None
