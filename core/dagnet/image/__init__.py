"""``dagnet.image`` (also ``mx.img``): MXNet 1.x's ``mx.image``.

Decode and read images (:func:`imdecode`, :func:`imread`, on Pillow), resize,
crop, pad, normalize and rotate them, augment them (:func:`CreateAugmenter` and
the augmenter classes), and iterate over batches of them (:class:`ImageIter`,
:class:`ImageDetIter`).  Images are HWC uint8 NDArrays in RGB order.

>>> import numpy as np, dagnet as mx
>>> png = mx.image.encode_image(np.full((4, 6, 3), 200, np.uint8), ".png")
>>> img = mx.image.imdecode(png)
>>> img.shape, img.dtype
((4, 6, 3), <class 'numpy.uint8'>)
>>> mx.image.resize_short(img, 2).shape
(2, 3, 3)
"""

from __future__ import annotations

import sys

from . import image
from .augmenters import (
    Augmenter,
    BrightnessJitterAug,
    CastAug,
    CenterCropAug,
    ColorJitterAug,
    ColorNormalizeAug,
    ContrastJitterAug,
    CreateAugmenter,
    ForceResizeAug,
    HorizontalFlipAug,
    HueJitterAug,
    LightingAug,
    RandomCropAug,
    RandomGrayAug,
    RandomOrderAug,
    RandomSizedCropAug,
    ResizeAug,
    SaturationJitterAug,
    SequentialAug,
)
from .codec import ImageDecodeError, ImageError, decode_image, encode_image
from .image import (
    center_crop,
    color_normalize,
    copyMakeBorder,
    fixed_crop,
    imdecode,
    imread,
    imresize,
    imrotate,
    random_crop,
    random_rotate,
    random_size_crop,
    resize_array,
    resize_short,
    scale_down,
)
from .image_iter import ImageIter

# MXNet names this package ``mx.img`` too; dagnet's top level finds the alias here.
img = sys.modules[__name__]

__all__ = [
    "Augmenter", "BrightnessJitterAug", "CastAug", "CenterCropAug", "ColorJitterAug",
    "ColorNormalizeAug", "ContrastJitterAug", "CreateAugmenter", "ForceResizeAug",
    "HorizontalFlipAug", "HueJitterAug", "ImageDecodeError", "ImageError", "ImageIter",
    "LightingAug", "RandomCropAug", "RandomGrayAug", "RandomOrderAug", "RandomSizedCropAug",
    "ResizeAug", "SaturationJitterAug", "SequentialAug", "center_crop", "color_normalize",
    "copyMakeBorder", "decode_image", "encode_image", "fixed_crop", "image", "imdecode",
    "imread", "imresize", "imrotate", "random_crop", "random_rotate", "random_size_crop",
    "resize_array", "resize_short", "scale_down",
]
