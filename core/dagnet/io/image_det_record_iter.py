"""``ImageDetRecordIter``: object-detection batches from a ``.rec``, MXNet's basics.

A record's labels are MXNet's detection layout: ``[A, B, (A - 2 extra header
values), objects...]``, each object ``B`` values ``[class, xmin, ymin, xmax,
ymax, ...]`` with coordinates in [0, 1].  Each image is resized to the data
shape (MXNet's default ``resize_mode='force'``), mirrored with probability
``rand_mirror_prob`` (boxes flipped with it), and normalized; each label row is
``[channels, height, width, label length, labels..., label_pad_value...]``, of
width ``label_pad_width + 4`` (the widest record's labels when
``label_pad_width`` is 0), as MXNet gives it.  MXNet's random crop, pad and
colour samplers for detection are not implemented: setting them raises.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from .. import recordio
from .image_record_iter import ImageRecordError, ImageRecordIter, RecordPipeline

__all__ = ["ImageDetRecordIter"]

# Detection augmentations dagnet does not implement, with their "off" values.
_DET_UNSUPPORTED = {
    "rand_crop_prob": 0.0, "rand_pad_prob": 0.0, "max_random_hue": 0,
    "random_hue_prob": 0.0, "max_random_saturation": 0, "random_saturation_prob": 0.0,
    "max_random_illumination": 0, "random_illumination_prob": 0.0,
    "max_random_contrast": 0.0, "random_contrast_prob": 0.0,
}
_DET_IGNORED = {"min_crop_scales", "max_crop_scales", "min_crop_aspect_ratios",
                "max_crop_aspect_ratios", "min_crop_overlaps", "max_crop_overlaps",
                "min_crop_sample_coverages", "max_crop_sample_coverages",
                "min_crop_object_coverages", "max_crop_object_coverages", "num_crop_sampler",
                "crop_emit_mode", "emit_overlap_thresh", "max_crop_trials", "max_pad_scale"}


class DetPipeline(RecordPipeline):
    """RecordPipeline for detection records: variable-width labels, force resize,
    mirrored boxes."""

    def __init__(self, out_dtype: Any, normalize: bool, path_imgrec: str = "",
                 data_shape: Any = None, batch_size: int = 0, label_pad_width: int = 0,
                 label_pad_value: float = -1.0, rand_mirror_prob: float = 0.0,
                 resize_mode: str = "force", label_width: int = -1, std_r: float = 0.0,
                 std_g: float = 0.0, std_b: float = 0.0, std_a: float = 0.0,
                 fill_value: int = 127, **kwargs: Any):
        for name, off in _DET_UNSUPPORTED.items():
            if kwargs.pop(name, off) != off:
                raise ImageRecordError(f"ImageDetRecordIter: {name} is not supported by "
                                       f"dagnet's detection pipeline; leave it at {off!r}")
        for name in _DET_IGNORED:
            kwargs.pop(name, None)
        if resize_mode != "force":
            raise ImageRecordError(f"ImageDetRecordIter: resize_mode {resize_mode!r} is not "
                                   f"supported; dagnet resizes with 'force'")
        self.label_pad_width = int(label_pad_width)
        self.label_pad_value = float(label_pad_value)
        self.rand_mirror_prob = float(rand_mirror_prob)
        self._declared_width = int(label_width)
        stds = {name: (value if value > 0 else 1.0) for name, value in
                (("std_r", std_r), ("std_g", std_g), ("std_b", std_b), ("std_a", std_a))}
        super().__init__(out_dtype, normalize, path_imgrec, data_shape, batch_size,
                         fill_value=fill_value, **stds, **kwargs)

    def _label_row_width(self) -> int:
        widest = 0
        with open(self.path_imgrec, "rb") as file:
            for record in range(len(self._offsets)):
                header, _ = recordio.unpack(self._record_bytes(file, record))
                width = header.flag if header.flag > 0 else 1
                number = self._first_record + record
                if self._declared_width > 0 and width != self._declared_width:
                    raise ImageRecordError(
                        f"ImageDetRecordIter: record {number} of {self.path_imgrec!r} has "
                        f"{width} labels but label_width={self._declared_width}")
                widest = max(widest, width)
        if self.label_pad_width and widest > self.label_pad_width:
            raise ImageRecordError(
                f"ImageDetRecordIter: label_pad_width {self.label_pad_width} is smaller than "
                f"the widest record's {widest} labels in {self.path_imgrec!r}")
        self.label_pad_width = max(self.label_pad_width, widest)
        return self.label_pad_width + 4

    def _label(self, header: Any, number: int) -> Any:
        labels = np.atleast_1d(np.asarray(header.label, dtype=np.float32))
        row = np.full(self.label_width, self.label_pad_value, dtype=np.float32)
        row[:4] = (self.data_shape[0], self.data_shape[1], self.data_shape[2], labels.size)
        row[4:4 + labels.size] = labels
        return row

    def _pixels(self, image: Any, rng: random.Random, number: int,
                augment: bool) -> np.ndarray:
        _, h, w = self.data_shape
        if image.size != (w, h):
            image = image.resize((w, h), self._resample(image.size, (w, h), rng))
        pixels = np.asarray(image)
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        mirrored = augment and rng.random() < self.rand_mirror_prob
        self._local.mirrored = mirrored  # per thread: the threads share this pipeline
        if mirrored:
            pixels = pixels[:, ::-1]
        return pixels.transpose(2, 0, 1)

    def _augment_into(self, image: Any, out: np.ndarray, rng: random.Random,
                      number: int, label_out: np.ndarray | None = None) -> None:
        super()._augment_into(image, out, rng, number, label_out)
        if getattr(self._local, "mirrored", False) and label_out is not None:
            _flip_boxes(label_out)


def _flip_boxes(row: np.ndarray) -> None:
    """Mirror the boxes of one label row in place: x -> 1 - x, xmin and xmax swapped."""
    length = int(row[3])
    labels = row[4:4 + length]
    if length < 2:
        return
    header, width = int(labels[0]), int(labels[1])
    if width < 5 or header < 2:
        return
    objects = labels[header:header + ((length - header) // width) * width].reshape(-1, width)
    valid = objects[:, 0] >= 0
    xmin = objects[valid, 1].copy()
    objects[valid, 1] = 1.0 - objects[valid, 3]
    objects[valid, 3] = 1.0 - xmin


class ImageDetRecordIter(ImageRecordIter):
    """Batches of images and padded detection labels from a RecordIO file, as MXNet
    1.x's ``mx.io.ImageDetRecordIter`` (see the module's description): data
    ``(batch_size,) + data_shape`` float32, label ``(batch_size, label_pad_width + 4)``.
    Sharding, shuffling, threads and prefetching are ImageRecordIter's."""

    _PIPELINE = DetPipeline
