"""``CSVIter``: batches from comma-separated text files, as MXNet 1.x's."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .._errors import DagnetError
from .batch_loader import BatchLoaderIter

__all__ = ["CSVIter", "TextDataError"]

_DTYPES = ("float32", "int32", "int64")


class TextDataError(DagnetError, ValueError):
    """A CSV, LibSVM or MNIST file that cannot be read as the iterator's parameters say."""


def _read_csv(path: str, shape: tuple[int, ...], dtype: np.dtype, what: str) -> np.ndarray:
    width = int(np.prod(shape))
    rows = []
    try:
        with open(path) as file:
            for number, line in enumerate(file, 1):
                line = line.strip()
                if not line:
                    continue
                try:
                    row = np.array(line.split(","), dtype=np.float64 if dtype.kind == "f"
                                   else np.int64).astype(dtype)
                except ValueError as error:
                    raise TextDataError(f"CSVIter: line {number} of {what} {path!r} is not "
                                        f"numbers ({error})") from error
                if row.size != width:
                    raise TextDataError(
                        f"CSVIter: line {number} of {what} {path!r} has {row.size} values; "
                        f"the shape {shape} needs {width}")
                rows.append(row)
    except OSError as error:
        raise TextDataError(f"CSVIter: cannot read {what} {path!r}: {error.strerror}") \
            from error
    return np.array(rows, dtype=dtype).reshape((len(rows),) + tuple(shape))


class CSVIter(BatchLoaderIter):
    """Batches of rows of ``data_csv`` reshaped to ``data_shape``, with labels from
    ``label_csv`` (rows of ``label_shape``) or zeros.

    ``dtype``: float32 (default), int32 or int64, for data and labels.
    ``round_batch``: see :class:`~dagnet.io.batch_loader.BatchLoaderIter`.
    """

    def __init__(self, data_csv: str, data_shape: Any, batch_size: int,
                 label_csv: str = "NULL", label_shape: Any = (1,), round_batch: bool = True,
                 dtype: str | None = None, prefetch_buffer: int = 4, ctx: str = "cpu",
                 data_name: str = "data", label_name: str = "softmax_label"):
        dtype = dtype or "float32"
        if str(dtype) not in _DTYPES:
            raise TextDataError(f"CSVIter: dtype {dtype!r} is not supported; expected one of "
                                f"{', '.join(_DTYPES)}")
        np_dtype = np.dtype(str(dtype))
        data_shape = tuple(int(d) for d in np.atleast_1d(data_shape))
        label_shape = tuple(int(d) for d in np.atleast_1d(label_shape))
        data = _read_csv(os.fspath(data_csv), data_shape, np_dtype, "data_csv")
        if label_csv and label_csv != "NULL":
            label = _read_csv(os.fspath(label_csv), label_shape, np_dtype, "label_csv")
            if len(label) != len(data):
                raise TextDataError(f"CSVIter: label_csv {label_csv!r} has {len(label)} rows, "
                                    f"data_csv {data_csv!r} has {len(data)}")
        else:
            label = np.zeros((len(data),) + label_shape, dtype=np_dtype)
        if label_shape == (1,):
            label = label.reshape(len(data))
        super().__init__(data, label, batch_size, round_batch, data_name, label_name)
