"""Samplers: the order in which a DataLoader visits a dataset's indices."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .dataset import DatasetError

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler",
           "IntervalSampler"]

_LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """The base of every sampler: subclasses define ``__iter__`` and ``__len__``."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


def _length(value: Any, who: str, what: str = "length") -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise DatasetError(f"{who}: {what} must be an integer >= 0, got {value!r}")
    return int(value)


class SequentialSampler(Sampler):
    """``start, start + 1, ..., start + length - 1``."""

    def __init__(self, length: int, start: int = 0):
        self._length = _length(length, "SequentialSampler")
        self._start = _length(start, "SequentialSampler", "start")

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._start, self._start + self._length))

    def __len__(self) -> int:
        return self._length


class RandomSampler(Sampler):
    """``0 .. length - 1`` in a fresh random order each pass (numpy's global generator,
    which MXNet's tests seed)."""

    def __init__(self, length: int):
        self._length = _length(length, "RandomSampler")

    def __iter__(self) -> Iterator[int]:
        return iter(np.random.permutation(self._length).tolist())

    def __len__(self) -> int:
        return self._length


class FilterSampler(Sampler):
    """The indices of ``dataset``'s samples for which ``fn(sample)`` is true."""

    def __init__(self, fn: Callable[[Any], bool], dataset: Any):
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices)

    def __len__(self) -> int:
        return len(self._indices)


class IntervalSampler(Sampler):
    """``0, interval, 2 * interval, ...`` then, with ``rollover``, the same from 1,
    2, ... so every index comes once: ``IntervalSampler(6, 3)`` gives 0 3 1 4 2 5."""

    def __init__(self, length: int, interval: int, rollover: bool = True):
        self._length = _length(length, "IntervalSampler")
        if _length(interval, "IntervalSampler", "interval") == 0 or interval > max(length, 1):
            raise DatasetError(f"IntervalSampler: interval must be in [1, length={length}], "
                               f"got {interval}")
        self._interval = int(interval)
        self._rollover = rollover

    def __iter__(self) -> Iterator[int]:
        for start in range(self._interval if self._rollover else 1):
            yield from range(start, self._length, self._interval)

    def __len__(self) -> int:
        return self._length if self._rollover else len(range(0, self._length, self._interval))


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices drawn from ``sampler``.

    ``last_batch`` says what happens to a short final batch: ``'keep'`` yields it,
    ``'discard'`` drops it, ``'rollover'`` puts its indices first in the next pass.
    """

    def __init__(self, sampler: Any, batch_size: int, last_batch: str = "keep"):
        if _length(batch_size, "BatchSampler", "batch_size") == 0:
            raise DatasetError("BatchSampler: batch_size must be > 0, got 0")
        if last_batch not in _LAST_BATCH:
            raise DatasetError(f"last_batch must be one of 'keep', 'discard' or 'rollover', "
                               f"got {last_batch!r}")
        self._sampler = sampler
        self._batch_size = int(batch_size)
        self._last_batch = last_batch
        self._prev: list[Any] = []

    def __iter__(self) -> Iterator[list[Any]]:
        batch, self._prev = self._prev, []
        for index in self._sampler:
            batch.append(index)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self) -> int:
        n = len(self._sampler)
        if self._last_batch == "keep":
            return -(-n // self._batch_size)
        if self._last_batch == "discard":
            return n // self._batch_size
        return (len(self._prev) + n) // self._batch_size
