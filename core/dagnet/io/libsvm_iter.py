"""``LibSVMIter``: batches from LibSVM text files (``label index:value ...``), as MXNet
1.x's, with dense output arrays."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .batch_loader import BatchLoaderIter
from .csv_iter import TextDataError

__all__ = ["LibSVMIter"]


def _read_libsvm(path: str, width: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    rows, labels = [], []
    try:
        with open(path) as file:
            for number, line in enumerate(file, 1):
                fields = line.split()
                if not fields:
                    continue
                row = np.zeros(width, dtype=np.float32)
                start = 0
                if ":" not in fields[0]:
                    labels.append(float(fields[0]))
                    start = 1
                else:
                    labels.append(0.0)
                for field in fields[start:]:
                    index, _, value = field.partition(":")
                    try:
                        column, number_value = int(index), float(value)
                    except ValueError as error:
                        raise TextDataError(f"LibSVMIter: line {number} of {what} {path!r}: "
                                            f"{field!r} is not index:value") from error
                    if not 0 <= column < width:
                        raise TextDataError(
                            f"LibSVMIter: line {number} of {what} {path!r}: feature index "
                            f"{column} is out of range for the shape's {width} columns")
                    row[column] = number_value
                rows.append(row)
    except OSError as error:
        raise TextDataError(f"LibSVMIter: cannot read {what} {path!r}: {error.strerror}") \
            from error
    return np.array(rows, dtype=np.float32).reshape(len(rows), width), \
        np.array(labels, dtype=np.float32)


class LibSVMIter(BatchLoaderIter):
    """Batches of LibSVM rows as dense float32 arrays ``(batch_size,) + data_shape``.

    The data batches are :class:`~dagnet.ndarray.sparse.CSRNDArray` (as MXNet's)
    when ``data_shape`` is one-dimensional.  Labels are each line's leading number
    (dense), or, with ``label_libsvm``, that file's rows (csr for a one-dimensional
    ``label_shape``).  ``num_parts``/``part_index`` read one of ``num_parts``
    contiguous parts of the rows.
    """

    def __init__(self, data_libsvm: str, data_shape: Any, batch_size: int,
                 label_libsvm: str = "NULL", label_shape: Any = (1,), num_parts: int = 1,
                 part_index: int = 0, round_batch: bool = True, prefetch_buffer: int = 4,
                 ctx: str = "cpu", dtype: str | None = None, data_name: str = "data",
                 label_name: str = "softmax_label"):
        data_shape = tuple(int(d) for d in np.atleast_1d(data_shape))
        label_shape = tuple(int(d) for d in np.atleast_1d(label_shape))
        data, label = _read_libsvm(os.fspath(data_libsvm), int(np.prod(data_shape)),
                                   "data_libsvm")
        data = data.reshape((len(data),) + data_shape)
        if label_libsvm and label_libsvm != "NULL":
            label, _ = _read_libsvm(os.fspath(label_libsvm), int(np.prod(label_shape)),
                                    "label_libsvm")
            if len(label) != len(data):
                raise TextDataError(f"LibSVMIter: label_libsvm {label_libsvm!r} has "
                                    f"{len(label)} rows, data_libsvm has {len(data)}")
            label = label.reshape((len(label),) + label_shape)
        if not 0 <= part_index < num_parts:
            raise TextDataError(f"LibSVMIter: part_index {part_index} is out of range for "
                                f"num_parts {num_parts}")
        part = np.array_split(np.arange(len(data)), num_parts)[part_index]
        self._csr_data = len(data_shape) == 1
        self._csr_label = label_libsvm not in (None, "", "NULL") and len(label_shape) == 1
        super().__init__(data[part], label[part], batch_size, round_batch, data_name,
                         label_name)

    def iter_next(self) -> bool:
        """Advance to the next batch (its arrays in csr storage, as MXNet gives them)."""
        if not super().iter_next():
            return False
        batch = self._batch
        if self._csr_data:
            batch.data = [batch.data[0].tostype("csr")]
        if self._csr_label:
            batch.label = [batch.label[0].tostype("csr")]
        return True
