"""Datasets: indexable collections of samples, and the views built on them.

A dataset is anything with ``__getitem__`` and ``__len__``; :class:`Dataset`
adds MXNet's chaining methods (``transform``, ``transform_first``, ``filter``,
``shard``, ``take``, ``sample``), each returning a new dataset that reads
through to the original.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ... import ndarray
from ..._errors import DagnetError

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset", "DatasetError"]


class DatasetError(DagnetError, ValueError):
    """A dataset was built from, or asked for, something it cannot hold."""


class Dataset:
    """The base of every dataset: subclasses define ``__getitem__`` and ``__len__``."""

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")

    def filter(self, fn: Callable[[Any], bool]) -> Dataset:
        """The samples for which ``fn(sample)`` is true (evaluated once, now)."""
        from .sampler import FilterSampler

        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards: int, index: int) -> Dataset:
        """Shard ``index`` of ``num_shards`` contiguous, near-equal parts; the first
        ``len % num_shards`` shards hold one sample more."""
        if not isinstance(num_shards, int) or num_shards <= 0:
            raise DatasetError(f"shard: num_shards must be an integer > 0, got {num_shards!r}")
        if not isinstance(index, int) or not 0 <= index < num_shards:
            raise DatasetError(f"shard: index must be in [0, {num_shards}), got {index!r}")
        from .sampler import SequentialSampler

        size, rest = divmod(len(self), num_shards)
        start = size * index + min(index, rest)
        return _SampledDataset(self, SequentialSampler(size + (index < rest), start))

    def take(self, count: int | None) -> Dataset:
        """The first ``count`` samples (all of them when ``count`` is None or too large)."""
        from .sampler import SequentialSampler

        if count is None or count > len(self):
            count = len(self)
        if count < 0:
            raise DatasetError(f"take: count must be >= 0 or None, got {count}")
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler: Any) -> Dataset:
        """The samples at the indices ``sampler`` yields, in its order."""
        from .sampler import Sampler

        if not isinstance(sampler, Sampler):
            raise TypeError(f"sample takes a gluon.data.Sampler, got {type(sampler).__name__}")
        return _SampledDataset(self, sampler)

    def transform(self, fn: Callable[..., Any], lazy: bool = True) -> Dataset:
        """Each sample passed through ``fn`` (a tuple sample is spread over its
        arguments); ``lazy=False`` transforms every sample now."""
        view = _LazyTransformDataset(self, fn)
        return view if lazy else SimpleDataset([view[i] for i in range(len(view))])

    def transform_first(self, fn: Callable[[Any], Any], lazy: bool = True) -> Dataset:
        """Only the first element of each sample passed through ``fn`` (the data,
        leaving the label)."""
        return self.transform(_TransformFirst(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over any indexable sequence (list, numpy array, NDArray)."""

    def __init__(self, data: Any):
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data: Any, fn: Callable[..., Any]):
        self._data = data
        self._fn = fn

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        item = self._data[idx]
        return self._fn(*item) if isinstance(item, tuple) else self._fn(item)


class _TransformFirst:
    # A class, not a closure, so that datasets using it pickle for worker processes.
    def __init__(self, fn: Callable[[Any], Any]):
        self._fn = fn

    def __call__(self, first: Any, *rest: Any) -> Any:
        return (self._fn(first), *rest) if rest else self._fn(first)


class _SampledDataset(Dataset):
    def __init__(self, dataset: Any, sampler: Any):
        self._dataset = dataset
        self._indices = list(sampler)

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, idx: int) -> Any:
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Several equally long dataset-like objects side by side: sample ``i`` is
    ``(a[i], b[i], ...)``, or ``a[i]`` when there is only one.  One-dimensional
    NDArrays are read as numpy, so their samples are scalars, as in MXNet."""

    def __init__(self, *args: Any):
        if not args:
            raise DatasetError("ArrayDataset needs at least one array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise DatasetError(
                    f"ArrayDataset: all arrays must have the same length; array 0 has "
                    f"{self._length} samples but array {i} has {len(data)}")
            if isinstance(data, ndarray.NDArray) and data.ndim == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx: int) -> Any:
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self) -> int:
        return self._length


class RecordFileDataset(Dataset):
    """The records of a RecordIO file (``.rec`` with its ``.idx`` index beside it);
    each sample is the record's raw bytes."""

    def __init__(self, filename: str):
        from ... import recordio

        self.filename = filename
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        for path, what in ((filename, "record file"), (self.idx_file, "index file")):
            if not os.path.isfile(path):
                raise DatasetError(
                    f"RecordFileDataset: {what} {path!r} does not exist (a .rec file needs "
                    f"its .idx beside it, as im2rec or MXIndexedRecordIO writes them)")
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx: int) -> bytes:
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self) -> int:
        return len(self._record.keys)

    def __getstate__(self) -> dict:
        # An open file does not cross into a worker process: reopen it there.
        state = dict(self.__dict__)
        state.pop("_record", None)
        return state

    def __setstate__(self, state: dict) -> None:
        from ... import recordio

        self.__dict__.update(state)
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")
