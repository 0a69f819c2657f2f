"""``DataIter``: the protocol every data iterator follows."""

from __future__ import annotations

from typing import Any

from .data_batch import DataBatch

__all__ = ["DataIter"]


class DataIter:
    """Base class of the data iterators: a Python iterator of :class:`DataBatch`.

    A subclass implements ``iter_next`` (advance; False at the end of the epoch)
    and ``getdata`` (the current batch), with ``getlabel``/``getpad``/``getindex``
    where it knows them, or overrides ``next`` directly; ``reset`` starts the next
    epoch.
    """

    def __init__(self, batch_size: int = 0):
        self.batch_size = batch_size

    def __iter__(self) -> DataIter:
        return self

    def reset(self) -> None:
        """Go back to the start of the data (the next epoch)."""

    def next(self) -> DataBatch:
        """The next batch; raises StopIteration at the end of the epoch."""
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                         index=self.getindex())

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        """Move to the next batch; False when the epoch has no more."""
        raise NotImplementedError(f"{type(self).__name__} must implement iter_next() "
                                  f"or override next()")

    def getdata(self) -> list[Any]:
        """The data arrays of the current batch."""
        raise NotImplementedError(f"{type(self).__name__} must implement getdata() "
                                  f"or override next()")

    def getlabel(self) -> list[Any] | None:
        """The label arrays of the current batch; None for an iterator without labels."""
        return None

    def getindex(self) -> Any:
        """The indices of the current batch's examples, or None when not known."""
        return None

    def getpad(self) -> int | None:
        """How many examples at the end of the current batch only pad it to full size;
        None when the iterator does not say."""
        return None
