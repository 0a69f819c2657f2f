"""``NDArrayIter``: batches from arrays held in memory."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._argcheck import ArgumentTypeError, choice, integer
from .._errors import ParamError, ShapeError
from .data_batch import DataBatch
from .data_desc import DataDesc
from .data_iter import DataIter

__all__ = ["NDArrayIter"]

LAST_BATCH_HANDLES = ("pad", "discard", "roll_over")

_Sources = list[tuple[str, np.ndarray]]


def _as_host(name: str, value: Any) -> np.ndarray:
    """The values of one input as a numpy array, in the dtype MXNet would give it: an
    NDArray keeps its dtype, anything else becomes float32 (like ``mx.nd.array``); a
    scipy sparse matrix is read densely (its batches are csr again)."""
    if _is_scipy_sparse(value):
        return np.asarray(value.toarray(), dtype=np.float32)
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    try:
        host = np.array(value, dtype=np.float32)
    except (TypeError, ValueError) as err:
        raise ArgumentTypeError(
            f"NDArrayIter: input {name!r} is a {type(value).__name__}, which cannot be read "
            f"as an array ({err}); pass an NDArray, a numpy array or a nested list of "
            f"numbers") from None
    return host


def _is_scipy_sparse(value: Any) -> bool:
    return type(value).__module__.startswith("scipy.sparse") and hasattr(value, "toarray")


def _is_csr(value: Any) -> bool:
    """Whether ``value`` is a csr source (a CSRNDArray or a scipy sparse matrix), whose
    batches are CSRNDArrays."""
    return getattr(value, "stype", None) == "csr" or _is_scipy_sparse(value)


def _csr_names(value: Any, default_name: str) -> set[str]:
    """The names :func:`_named_sources` gives the csr sources in ``value``."""
    if value is None:
        return set()
    if not isinstance(value, (list, tuple, Mapping)):
        value = [value]
    if isinstance(value, (list, tuple)):
        value = ({default_name: value[0]} if len(value) == 1 else
                 {f"_{i}_{default_name}": v for i, v in enumerate(value)})
    return {name for name, v in value.items() if _is_csr(v)}


def _named_sources(value: Any, default_name: str, what: str) -> _Sources:
    """``value`` as ``[(name, array), ...]`` sorted by name, as MXNet orders them: one
    array is named ``default_name``, a list of several ``_<i>_<default_name>``, a dict
    by its keys."""
    if value is None:
        return []
    if isinstance(value, np.ndarray) or hasattr(value, "asnumpy") or _is_scipy_sparse(value):
        value = [value]
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            value = {default_name: value[0]}
        else:
            value = {f"_{i}_{default_name}": v for i, v in enumerate(value)}
    if not isinstance(value, Mapping):
        raise ArgumentTypeError(
            f"NDArrayIter: {what} must be an NDArray, a numpy array, a list of them or a "
            f"dict of name -> array, got {type(value).__name__}")
    for name in value:
        if not isinstance(name, str):
            raise ArgumentTypeError(f"NDArrayIter: the {what} dict's keys are input names and "
                                    f"must be str, got {name!r}")
    return sorted((name, _as_host(name, v)) for name, v in value.items())


class NDArrayIter(DataIter):
    """Iterates over in-memory arrays in batches of ``batch_size`` examples.

    ``data`` and ``label`` are each an NDArray or numpy array, a list of them
    (named ``_0_<data_name>``, ``_1_<data_name>``, ...) or a dict of name -> array;
    the inputs are provided sorted by name.  Every array holds the same number of
    examples along the batch axis (the ``'N'`` of ``layout``).

    ``shuffle`` permutes the examples at construction and at every ``reset``
    with numpy's global generator, so ``np.random.seed`` reproduces the order; as in
    MXNet a shuffled input is stored as float32.

    ``last_batch_handle`` decides what happens to examples that do not fill a
    last batch: ``'pad'`` fills it up with examples from the start and reports
    how many in ``batch.pad``; ``'discard'`` drops them; ``'roll_over'`` keeps them
    for the first batch of the next epoch (that batch reports their count as its
    ``pad``, as MXNet does).  Batches are new NDArrays on ``cpu()``.
    """

    def __init__(self, data: Any, label: Any = None, batch_size: int = 1, shuffle: bool = False,
                 last_batch_handle: str = "pad", data_name: str = "data",
                 label_name: str = "softmax_label", layout: str = "NCHW"):
        batch_size = integer("NDArrayIter", "batch_size", batch_size, minimum=1)
        super().__init__(batch_size)
        self.last_batch_handle = choice("NDArrayIter", "last_batch_handle", last_batch_handle,
                                        LAST_BATCH_HANDLES)
        if not isinstance(layout, str) or "N" not in layout:
            raise ParamError(f"NDArrayIter: layout={layout!r} has no batch axis 'N'; pass a "
                             f"layout such as 'NCHW' or 'NTC'")
        self.layout = layout
        self._axis = layout.find("N")
        if data is None or (isinstance(data, (list, tuple, Mapping)) and len(data) == 0):
            raise ArgumentTypeError("NDArrayIter: data is empty; pass at least one array")
        self._data = _named_sources(data, data_name, "data")
        self._label = _named_sources(label, label_name, "label")
        # csr inputs (CSRNDArray, scipy sparse) give CSRNDArray batches; as in MXNet they
        # cannot be padded or rolled over
        self._csr = _csr_names(data, data_name) | _csr_names(label, label_name)
        if self._csr and self.last_batch_handle != "discard":
            raise NotImplementedError(
                f"NDArrayIter: csr inputs ({', '.join(sorted(self._csr))}) need "
                f"last_batch_handle='discard', got {self.last_batch_handle!r}")
        self.num_data = self._check_lengths()
        if self.last_batch_handle == "roll_over" and batch_size > self.num_data:
            # MXNet fails (or yields an over-padded batch) here; no epoch can fill a batch.
            raise ParamError(
                f"NDArrayIter: batch_size={batch_size} exceeds the {self.num_data} examples, so "
                f"last_batch_handle='roll_over' can never complete a batch; use "
                f"last_batch_handle='pad' or a batch_size of at most {self.num_data}")
        self.shuffle = bool(shuffle)
        self.idx = np.arange(self.num_data)
        self.cursor = -batch_size
        # The examples of an incomplete last batch, which open the next epoch ('roll_over').
        self._carry: tuple[list[np.ndarray], list[np.ndarray]] | None = None
        self._batch: tuple[list[np.ndarray], list[np.ndarray]] | None = None
        self.reset()

    def _check_lengths(self) -> int:
        lengths = {}
        for name, array in self._data + self._label:
            if array.ndim <= self._axis:
                raise ShapeError(
                    f"NDArrayIter: input {name!r} has shape {array.shape}, which has no batch "
                    f"axis {self._axis} (layout {self.layout!r}); give every array at least "
                    f"{self._axis + 1} dimension(s)")
            lengths[name] = array.shape[self._axis]
        # As MXNet: the first data array counts the examples; a longer array (a label or
        # sample weight over a bigger set) contributes its first ones, a shorter one cannot.
        count = lengths[self._data[0][0]]
        short = {name: n for name, n in lengths.items() if n < count}
        longer = {name for name, n in lengths.items() if n > count}
        if short or longer & self._csr:
            found = ", ".join(f"{name}: {n}" for name, n in lengths.items())
            raise ShapeError(
                f"NDArrayIter: every input must hold at least the {count} examples of "
                f"{self._data[0][0]!r} along the batch axis (csr inputs exactly as many), got "
                f"{found}; pass one label per example")
        if longer:
            keep = np.arange(count)
            self._data, self._label = (
                [(name, np.take(array, keep, axis=self._axis) if name in longer else array)
                 for name, array in sources] for sources in (self._data, self._label))
        return count

    def _describe(self, sources: _Sources) -> list[DataDesc]:
        descs = []
        for name, array in sources:
            shape = list(array.shape)
            shape[self._axis] = self.batch_size
            descs.append(DataDesc(name, tuple(shape), array.dtype.type, layout=self.layout))
        return descs

    @property
    def provide_data(self) -> list[DataDesc]:
        """Name, batch shape, dtype and layout of each data input, sorted by name."""
        return self._describe(self._data)

    @property
    def provide_label(self) -> list[DataDesc]:
        """Name, batch shape, dtype and layout of each label input (empty without labels)."""
        return self._describe(self._label)

    def hard_reset(self) -> None:
        """Start the next epoch at the first example, dropping any rolled-over examples."""
        if self.shuffle:
            self._shuffle()
        self.cursor = -self.batch_size
        self._carry = None
        self._batch = None

    def reset(self) -> None:
        """Start the next epoch (reshuffling when ``shuffle``); with ``'roll_over'`` the
        examples left over from the last epoch open it."""
        n, size = self.num_data, self.batch_size
        rolling = self.last_batch_handle == "roll_over" and n - size < self.cursor < n
        # The leftover examples are taken before reshuffling: they are the ones not yet seen.
        self._carry = self._take(slice(self.cursor, n)) if rolling else None
        if self.shuffle:
            self._shuffle()
        # A cursor of -k means that the next batch opens with k carried examples.
        self.cursor = self.cursor - n - size if rolling else -size
        self._batch = None

    def iter_next(self) -> bool:
        """Advance to the next batch; False past the end of the data."""
        self.cursor += self.batch_size
        self._batch = None
        return self.cursor < self.num_data

    def next(self) -> DataBatch:
        """The next full batch; StopIteration at the end of the epoch."""
        if not self.iter_next():
            raise StopIteration
        data, label = self._current()
        if data[0].shape[self._axis] != self.batch_size:
            raise StopIteration  # an incomplete batch: dropped, or carried over by reset()
        return DataBatch(data=self._to_nd(data, self._data),
                         label=self._to_nd(label, self._label), pad=self.getpad(), index=None)

    def getdata(self) -> list[Any]:
        """The data arrays of the current batch."""
        return self._to_nd(self._current()[0], self._data)

    def getlabel(self) -> list[Any]:
        """The label arrays of the current batch (empty without labels)."""
        return self._to_nd(self._current()[1], self._label)

    def getpad(self) -> int:
        """How many examples pad the current batch: filled in from the start (``'pad'``)
        or, for MXNet compatibility, carried over from the last epoch (``'roll_over'``)."""
        end = self.cursor + self.batch_size
        if self.last_batch_handle == "pad" and end > self.num_data:
            return end - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def _current(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if self._batch is None:
            if not self.cursor < self.num_data:
                raise StopIteration("NDArrayIter is past the end of the data; call reset()")
            self._batch = self._assemble()
        return self._batch

    def _assemble(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        n, size, start = self.num_data, self.batch_size, self.cursor
        if self.last_batch_handle == "roll_over" and -size < start < 0:
            carry, self._carry = self._carry, None
            head = self._take(slice(0, start + size))
            return tuple(  # type: ignore[return-value]
                [np.concatenate([old, new], axis=self._axis) for old, new in zip(olds, news)]
                for olds, news in zip(carry, head))
        if self.last_batch_handle == "pad" and start + size > n:
            # Wrap around to the start, as often as a batch larger than the data needs.
            rows = np.concatenate([np.arange(start, n), np.arange(start + size - n) % n])
            return self._take(rows)
        return self._take(slice(start, min(start + size, n)))

    def _take(self, rows: slice | np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        def pick(sources: _Sources) -> list[np.ndarray]:
            if isinstance(rows, slice):
                index = [slice(None)] * self._axis + [rows]
                return [array[tuple(index)] for _, array in sources]
            return [np.take(array, rows, axis=self._axis) for _, array in sources]

        return pick(self._data), pick(self._label)

    def _shuffle(self) -> None:
        # The permutation is applied to the already shuffled data and kept in self.idx,
        # exactly as MXNet does, so a seeded run gives MXNet's order epoch after epoch.
        np.random.shuffle(self.idx)
        self._data = [(name, np.take(a, self.idx, axis=self._axis).astype(np.float32))
                      for name, a in self._data]
        self._label = [(name, np.take(a, self.idx, axis=self._axis).astype(np.float32))
                       for name, a in self._label]

    def _to_nd(self, arrays: list[np.ndarray], sources: _Sources) -> list[Any]:
        from .. import ndarray
        from ..context import cpu

        return [ndarray.sparse.csr_matrix(a, ctx=cpu(), dtype=a.dtype) if name in self._csr
                else ndarray.array(a, ctx=cpu(), dtype=a.dtype)
                for (name, _), a in zip(sources, arrays)]
