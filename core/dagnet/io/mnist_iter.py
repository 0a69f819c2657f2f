"""``MNISTIter``: batches from MNIST's idx files (local files; nothing is downloaded)."""

from __future__ import annotations

import gzip
import os
import struct
from typing import Any

import numpy as np

from .batch_loader import BatchLoaderIter
from .csv_iter import TextDataError

__all__ = ["MNISTIter"]


def _read_idx(path: str, what: str, ndim: int) -> np.ndarray:
    opener: Any = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as file:
            raw = file.read()
    except OSError as error:
        raise TextDataError(f"MNISTIter: cannot read {what} file {path!r}: "
                            f"{error.strerror or error}") from error
    if len(raw) < 4 + 4 * ndim:
        raise TextDataError(f"MNISTIter: {what} file {path!r} is too short for an idx header")
    zero, kind, dims = struct.unpack(">HBB", raw[:4])
    if zero != 0 or kind != 0x08 or dims != ndim:
        raise TextDataError(f"MNISTIter: {path!r} is not an idx file of {ndim}-d unsigned "
                            f"bytes (the {what} file); header {raw[:4].hex()}")
    shape = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    body = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(shape)):
        raise TextDataError(f"MNISTIter: {what} file {path!r} holds {body.size} bytes of "
                            f"data, its header declares {shape}")
    return body.reshape(shape)


class MNISTIter(BatchLoaderIter):
    """Batches of MNIST images scaled to [0, 1], float32 ``(batch_size, 1, 28, 28)`` (or
    ``(batch_size, 784)`` with ``flat``), and their labels; ``shuffle`` shuffles them
    once (seeded by ``seed``), as MXNet's does, so every epoch has the same order; a
    last partial batch is dropped, as MXNet's is.
    ``num_parts``/``part_index`` read one contiguous part.
    """

    def __init__(self, image: str = "./train-images-idx3-ubyte",
                 label: str = "./train-labels-idx1-ubyte", batch_size: int = 128,
                 shuffle: bool = True, flat: bool = False, seed: int = 0, silent: bool = False,
                 num_parts: int = 1, part_index: int = 0, prefetch_buffer: int = 4,
                 ctx: str = "cpu", dtype: str | None = None, data_shape: Any = None,
                 input_shape: Any = None, data_name: str = "data",
                 label_name: str = "softmax_label"):
        images = _read_idx(os.fspath(image), "image", 3)
        labels = _read_idx(os.fspath(label), "label", 1)
        if len(images) != len(labels):
            raise TextDataError(f"MNISTIter: {image!r} holds {len(images)} images but "
                                f"{label!r} {len(labels)} labels")
        if not 0 <= part_index < num_parts:
            raise TextDataError(f"MNISTIter: part_index {part_index} is out of range for "
                                f"num_parts {num_parts}")
        part = np.array_split(np.arange(len(images)), num_parts)[part_index]
        data = images[part].astype(np.float32) / np.float32(255)
        h, w = images.shape[1:]
        data = data.reshape(len(part), h * w) if flat else data.reshape(len(part), 1, h, w)
        self.shuffle = bool(shuffle)
        super().__init__(data, labels[part].astype(np.float32), batch_size, round_batch=False,
                         data_name=data_name, label_name=label_name, discard_last=True)
        if self.shuffle:
            np.random.RandomState(seed).shuffle(self._order)
