"""``ResizeIter``: a fixed number of batches per epoch from any iterator."""

from __future__ import annotations

from typing import Any

from .._argcheck import integer
from .data_batch import DataBatch
from .data_iter import DataIter

__all__ = ["ResizeIter"]


class ResizeIter(DataIter):
    """Gives exactly ``size`` batches per epoch from ``data_iter``, restarting it when it
    runs out early and stopping it early when it has more.

    ``reset_internal`` says whether ``reset`` also resets ``data_iter``; leave it
    False to continue where the last epoch stopped.
    """

    def __init__(self, data_iter: DataIter, size: int, reset_internal: bool = True):
        super().__init__(data_iter.batch_size)
        self.data_iter = data_iter
        self.size = integer("ResizeIter", "size", size, minimum=0)
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch: DataBatch | None = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self) -> None:
        """Start the next epoch of ``size`` batches."""
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self) -> bool:
        """Fetch the next batch, restarting the inner iterator at its end."""
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True

    def getdata(self) -> list[Any]:
        """The data arrays of the current batch."""
        return self.current_batch.data

    def getlabel(self) -> list[Any] | None:
        """The label arrays of the current batch."""
        return self.current_batch.label

    def getindex(self) -> Any:
        """The example indices of the current batch, if the inner iterator gives them."""
        return self.current_batch.index

    def getpad(self) -> int | None:
        """The padding of the current batch."""
        return self.current_batch.pad
