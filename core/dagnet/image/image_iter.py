"""``ImageIter``: batches of augmented images from a ``.rec`` file or an image list."""

from __future__ import annotations

import logging
import os
import random
from typing import Any

from .. import ndarray as nd
from .. import recordio
from ..base import numeric_types
from ..io import DataBatch, DataDesc, DataIter
from .augmenters import CreateAugmenter
from .codec import ImageDecodeError, ImageError, read_image_file
from .image import imdecode

__all__ = ["ImageIter"]

_LABEL_DTYPES = ("int32", "float32", "int64", "float64")
_LAST_BATCH = ("pad", "discard", "roll_over")


class ImageIter(DataIter):
    """Batches ``(batch_size,) + data_shape`` (CHW float32) of decoded, augmented images.

    The images come from ``path_imgrec`` (a ``.rec``; with ``path_imgidx`` for
    shuffling and partitions), from ``path_imglist`` (a ``.lst``: index, labels
    and a path under ``path_root``, tab separated) or from ``imglist`` (a list of
    ``[label or labels, path]``).  ``aug_list`` gives the augmenters, else
    :func:`CreateAugmenter` builds them from the remaining keyword arguments.
    ``last_batch_handle``: 'pad' fills the last batch from the start of the data,
    'discard' drops it, 'roll_over' carries it into the next epoch.
    ``part_index``/``num_parts`` read one of ``num_parts`` equal parts.
    """

    def __init__(self, batch_size: int, data_shape: tuple[int, int, int], label_width: int = 1,
                 path_imgrec: str | None = None, path_imglist: str | None = None,
                 path_root: str | None = None, path_imgidx: str | None = None,
                 shuffle: bool = False, part_index: int = 0, num_parts: int = 1,
                 aug_list: list[Any] | None = None, imglist: list[Any] | None = None,
                 data_name: str = "data", label_name: str = "softmax_label",
                 dtype: str = "float32", last_batch_handle: str = "pad", **kwargs: Any):
        super().__init__(batch_size)
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise ImageError("ImageIter needs path_imgrec, path_imglist or imglist (a list)")
        if dtype not in _LABEL_DTYPES:
            raise ImageError(f"ImageIter: label dtype {dtype!r} is not supported; expected one "
                             f"of {', '.join(_LABEL_DTYPES)}")
        if last_batch_handle not in _LAST_BATCH:
            raise ImageError(f"ImageIter: last_batch_handle {last_batch_handle!r}; expected "
                             f"one of {', '.join(_LAST_BATCH)}")
        self.imgrec: Any = None
        self.imgidx: list[Any] | None = None
        if path_imgrec:
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")
        imgkeys: list[Any] = []
        self.imglist: dict[Any, tuple[Any, str]] | None = None
        if path_imglist:
            self.imglist = {}
            with open(path_imglist) as fin:
                for number, line in enumerate(fin, 1):
                    fields = line.strip().split("\t")
                    if fields == [""]:
                        continue
                    if len(fields) < 3:
                        raise ImageError(f"ImageIter: line {number} of {path_imglist!r} has "
                                         f"{len(fields)} fields; expected index, label(s) "
                                         f"and path, tab separated")
                    key = int(fields[0])
                    self.imglist[key] = (nd.array(fields[1:-1], dtype=dtype), fields[-1])
                    imgkeys.append(key)
        elif isinstance(imglist, list):
            self.imglist = {}
            for index, img in enumerate(imglist, 1):
                key = str(index)
                if len(img) > 2:
                    label = nd.array(img[:-1], dtype=dtype)
                elif isinstance(img[0], numeric_types):
                    label = nd.array([img[0]], dtype=dtype)
                else:
                    label = nd.array(img[0], dtype=dtype)
                self.imglist[key] = (label, img[-1])
                imgkeys.append(key)
        self.path_root = path_root
        self.check_data_shape(data_shape)
        self.provide_data = [DataDesc(data_name, (batch_size,) + tuple(data_shape))]
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_label = [DataDesc(label_name, label_shape)]
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.shuffle = shuffle
        self.seq: list[Any] | None
        if self.imgrec is None:
            self.seq = imgkeys
        elif shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise ImageError("ImageIter: shuffle and num_parts > 1 on a .rec need its "
                                 "index: pass path_imgidx")
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise ImageError(f"ImageIter: part_index {part_index} out of range for "
                                 f"num_parts {num_parts}")
            assert self.seq is not None
            part = len(self.seq) // num_parts
            self.seq = self.seq[part_index * part:(part_index + 1) * part]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data: Any = None
        self._cache_label: Any = None
        self._cache_idx: int | None = None
        self.reset()

    def reset(self) -> None:
        """Start the next epoch (reshuffled when ``shuffle``); with 'roll_over', the
        examples left over from the last epoch open it."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self) -> None:
        """Start over, dropping any rolled-over examples."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = self._cache_label = self._cache_idx = None

    def next_sample(self) -> tuple[Any, bytes]:
        """The next example's label and encoded image; StopIteration at the end."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is not None:
            if self.cur >= (self.num_image or 0):
                if self.last_batch_handle != "discard":
                    self.cur = 0
                raise StopIteration
            idx = self.seq[self.cur]
            self.cur += 1
            if self.imgrec is not None:
                header, img = recordio.unpack(self.imgrec.read_idx(idx))
                if self.imglist is None:
                    return header.label, img
                return self.imglist[idx][0], img
            assert self.imglist is not None
            label, fname = self.imglist[idx]
            return label, self.read_image(fname)
        s = self.imgrec.read()
        if s is None:
            if self.last_batch_handle != "discard":
                self.imgrec.reset()
            raise StopIteration
        self.cur += 1
        header, img = recordio.unpack(s)
        return header.label, img

    def _batchify(self, batch_data: Any, batch_label: Any, start: int = 0) -> int:
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                except RuntimeError as error:
                    logging.debug("Invalid image, skipping: %s", error)
                    continue
                data = self.augmentation_transform(data)
                batch_data[i] = self.postprocess_data(data)
                batch_label[i] = label
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self) -> DataBatch:
        """The next batch (``pad`` counts the examples that only fill the last one)."""
        c, h, w = self.data_shape
        if self._cache_data is not None:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data = nd.zeros((self.batch_size, c, h, w))
            batch_label = nd.empty(self.provide_label[0].shape)
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad != 0:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return DataBatch([batch_data], [batch_label], pad=pad)

    def check_data_shape(self, data_shape: tuple[int, ...]) -> None:
        """Raise unless ``data_shape`` is (3, h, w)."""
        if len(data_shape) != 3:
            raise ImageError(f"ImageIter: data_shape must be (channels, height, width), got "
                             f"{data_shape}")
        if data_shape[0] != 3:
            raise ImageError(f"ImageIter expects 3-channel images, got data_shape "
                             f"{data_shape}")

    def check_valid_image(self, data: Any) -> None:
        """Raise RuntimeError for a decoded image with no pixels."""
        if len(data[0].shape) == 0:
            raise RuntimeError("Data shape is wrong")

    def imdecode(self, s: bytes) -> Any:
        """Decode an image, naming the file or record in the error when it fails."""
        try:
            return imdecode(s)
        except ImageDecodeError as error:
            if self.seq is not None and self.num_image:
                idx = self.seq[(self.cur % self.num_image) - 1]
            else:
                idx = self.cur - 1
            where = f"filename: {self.imglist[idx][1]}" if self.imglist is not None \
                else f"index: {idx}"
            raise ImageDecodeError(f"Broken image {where}, {error}") from error

    def read_image(self, fname: str) -> bytes:
        """The bytes of image file ``fname`` under ``path_root``."""
        return read_image_file(os.path.join(self.path_root or "", fname))

    def augmentation_transform(self, data: Any) -> Any:
        """Apply the augmenters in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum: Any) -> Any:
        """HWC to CHW, as the batch holds it."""
        return nd.transpose(datum, axes=(2, 0, 1))
