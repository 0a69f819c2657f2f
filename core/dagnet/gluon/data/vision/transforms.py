"""Image transforms as Blocks (MXNet's ``gluon.data.vision.transforms``).

Images are HWC (or NHWC batches) until :class:`ToTensor` makes them CHW float32
in [0, 1]; :class:`Normalize`, :class:`Rotate` and :class:`RandomRotation` take
CHW (or NCHW).  The geometric transforms use :mod:`dagnet.image`; the random
ones draw from numpy's global generator (what ``mx.random.seed`` and MXNet's
tests seed).  ``Cast``, ``ToTensor`` and ``Normalize`` are HybridBlocks built
from generic operators, so they hybridize; the others run on NDArrays.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from .... import ndarray
from ...._errors import DagnetError
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential

__all__ = ["Compose", "HybridCompose", "Cast", "ToTensor", "Normalize", "Rotate",
           "RandomRotation", "RandomResizedCrop", "CropResize", "CenterCrop", "Resize",
           "RandomFlipLeftRight", "RandomFlipTopBottom", "RandomBrightness", "RandomContrast",
           "RandomSaturation", "RandomHue", "RandomColorJitter", "RandomLighting",
           "RandomApply", "TransformError"]

_GRAY = np.array([0.299, 0.587, 0.114], dtype=np.float32)  # ITU-R BT.601 luma


class TransformError(DagnetError, ValueError):
    """A transform got an image (or parameters) it cannot work with."""


def _image(x: Any, what: str, dims: tuple[int, ...] = (3, 4)) -> None:
    if not isinstance(x, ndarray.NDArray):
        raise TransformError(f"{what} takes an NDArray image, got {type(x).__name__}")
    if x.ndim not in dims:
        raise TransformError(f"{what}: expected a {' or '.join(map(str, dims))}-D image "
                             f"(HWC or NHWC), got shape {tuple(x.shape)}")


def _per_image(x: Any, fn: Any) -> Any:
    """``fn`` on one HWC image, or on each image of an NHWC batch (stacked again)."""
    if x.ndim == 3:
        return fn(x)
    return ndarray.stack(*[fn(x[i]) for i in range(x.shape[0])])


def _like(values: np.ndarray, x: Any) -> Any:
    """``values`` (float) as an NDArray of ``x``'s dtype and context (integers rounded
    and clipped to their range, as image data saturates)."""
    dtype = np.dtype(x.dtype)
    if dtype.kind in "ui":
        info = np.iinfo(dtype)
        values = np.clip(np.rint(values), info.min, info.max)
    return ndarray.array(values.astype(dtype), ctx=x.context, dtype=dtype)


class Compose(Sequential):
    """Applies ``transforms`` in order."""

    def __init__(self, transforms: Sequence[Block]):
        super().__init__()
        with self.name_scope():
            for transform in transforms:
                self.add(transform)


class HybridCompose(HybridSequential):
    """Applies hybridizable ``transforms`` in order (and hybridizes as one)."""

    def __init__(self, transforms: Sequence[HybridBlock]):
        super().__init__()
        with self.name_scope():
            for transform in transforms:
                self.add(transform)


class Cast(HybridBlock):
    """Casts the image to ``dtype``."""

    def __init__(self, dtype: Any = "float32"):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """HWC (NHWC) in [0, 255] to CHW (NCHW) float32 in [0, 1]."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        if isinstance(x, ndarray.NDArray):
            _image(x, "ToTensor")
        axes = (2, 0, 1) if getattr(x, "ndim", 3) == 3 else (0, 3, 1, 2)
        return F.transpose(F.cast(x, "float32") / 255.0, axes=axes)


class Normalize(HybridBlock):
    """``(x - mean) / std`` per channel of a CHW (NCHW) float image; ``mean`` and
    ``std`` are numbers or one value per channel."""

    def __init__(self, mean: float | Sequence[float] = 0.0, std: float | Sequence[float] = 1.0):
        super().__init__()
        self._mean = tuple(np.atleast_1d(np.asarray(mean, dtype=np.float32)).tolist())
        self._std = tuple(np.atleast_1d(np.asarray(std, dtype=np.float32)).tolist())
        if any(s == 0 for s in self._std):
            raise TransformError(f"Normalize: std must not be zero, got {self._std}")

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        if isinstance(x, ndarray.NDArray):
            if x.ndim not in (3, 4):
                raise TransformError(f"Normalize: expected a 3-D (CHW) or 4-D (NCHW) image, "
                                     f"got shape {tuple(x.shape)}")
            channels = x.shape[0 if x.ndim == 3 else 1]
            for name, values in (("mean", self._mean), ("std", self._std)):
                if len(values) not in (1, channels):
                    raise TransformError(f"Normalize: the image has {channels} channels but "
                                         f"{name} has {len(values)} values (give 1 or "
                                         f"{channels})")
            if channels not in (1, 3):
                raise TransformError(f"Normalize: images must have 1 or 3 channels, got "
                                     f"{channels} (shape {tuple(x.shape)})")
        # (C, 1, 1) constants, so they broadcast over CHW and, from the second axis, NCHW
        mean = F.concat(*[F.full((1, 1, 1), m) for m in self._mean], dim=0)
        std = F.concat(*[F.full((1, 1, 1), v) for v in self._std], dim=0)
        if isinstance(x, ndarray.NDArray):
            mean, std = mean.astype(x.dtype), std.astype(x.dtype)
        return F.broadcast_div(F.broadcast_sub(x, mean), std)


def _check_float(x: Any, what: str) -> None:
    if np.dtype(x.dtype) != np.float32:
        raise TypeError(f"{what} only supports float32 images (got {np.dtype(x.dtype).name}); "
                        f"cast with transforms.Cast('float32') or ToTensor first")


class Rotate(Block):
    """Rotates a CHW (NCHW) float32 image by ``rotation_degrees`` counter-clockwise;
    ``zoom_in`` leaves no black corners, ``zoom_out`` keeps the whole image."""

    def __init__(self, rotation_degrees: float, zoom_in: bool = False, zoom_out: bool = False):
        super().__init__()
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x: Any) -> Any:
        from .... import image

        _check_float(x, "Rotate")
        return image.imrotate(x, *self._args)


class RandomRotation(Block):
    """Rotates by an angle drawn from ``angle_limits`` (degrees), with probability
    ``rotate_with_proba``."""

    def __init__(self, angle_limits: Sequence[float], zoom_in: bool = False,
                 zoom_out: bool = False, rotate_with_proba: float = 1.0):
        super().__init__()
        lower, upper = angle_limits
        if lower > upper:
            raise ValueError(f"RandomRotation: angle_limits must be ordered (low, high), got "
                             f"{tuple(angle_limits)}")
        if not 0 <= rotate_with_proba <= 1:
            raise ValueError(f"RandomRotation: rotate_with_proba must be in [0, 1], got "
                             f"{rotate_with_proba}")
        self._args = ((lower, upper), zoom_in, zoom_out)
        self._proba = rotate_with_proba

    def forward(self, x: Any) -> Any:
        from .... import image

        _check_float(x, "RandomRotation")
        if self._proba < 1 and np.random.random_sample() > self._proba:
            return x
        return image.random_rotate(x, *self._args)


def _wh(size: int | Sequence[int], what: str) -> tuple[int, int]:
    if isinstance(size, (int, np.integer)):
        size = (int(size), int(size))
    size = tuple(size)
    if len(size) != 2 or any(int(s) <= 0 for s in size):
        raise TransformError(f"{what}: size must be a positive int or (width, height), got "
                             f"{size}")
    return int(size[0]), int(size[1])


class RandomResizedCrop(Block):
    """A crop of random area (``scale`` of the image) and aspect ratio (``ratio``)
    resized to ``size`` (``(width, height)`` or one int)."""

    def __init__(self, size: int | Sequence[int], scale: tuple = (0.08, 1.0),
                 ratio: tuple = (3.0 / 4.0, 4.0 / 3.0), interpolation: int = 1):
        super().__init__()
        self._args = (_wh(size, "RandomResizedCrop"), scale, ratio, interpolation)

    def forward(self, x: Any) -> Any:
        from .... import image

        _image(x, "RandomResizedCrop")
        return _per_image(x, lambda img: image.random_size_crop(img, *self._args)[0])


class CenterCrop(Block):
    """The centre ``size`` (``(width, height)`` or one int) of the image, upsampled
    when the image is smaller."""

    def __init__(self, size: int | Sequence[int], interpolation: int = 1):
        super().__init__()
        self._args = (_wh(size, "CenterCrop"), interpolation)

    def forward(self, x: Any) -> Any:
        from .... import image

        _image(x, "CenterCrop")
        return _per_image(x, lambda img: image.center_crop(img, *self._args)[0])


class Resize(HybridBlock):
    """Resizes to ``size``: ``(width, height)``, or one int for a square, or with
    ``keep_ratio`` the short side (the other scaled alike)."""

    def __init__(self, size: int | Sequence[int], keep_ratio: bool = False,
                 interpolation: int = 1):
        super().__init__()
        self._size = size
        self._keep = keep_ratio
        self._interpolation = interpolation

    def _target(self, h: int, w: int) -> tuple[int, int]:
        size = self._size
        if isinstance(size, (int, np.integer)):
            if size <= 0:
                raise TransformError(f"Resize: size must be positive, got {size}")
            if not self._keep:
                return int(size), int(size)
            if h > w:
                return int(size), int(h * size / w)
            return int(w * size / h), int(size)
        return _wh(size, "Resize")

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        from .... import image

        if F is not ndarray:
            raise TransformError("Resize runs on NDArrays (it is not part of a hybridized "
                                 "graph)")
        _image(x, "Resize")
        h, w = (x.shape[0], x.shape[1]) if x.ndim == 3 else (x.shape[1], x.shape[2])
        tw, th = self._target(h, w)
        return _per_image(x, lambda img: image.imresize(img, tw, th, self._interpolation))


class CropResize(HybridBlock):
    """The ``width`` x ``height`` region at ``(x, y)``, resized to ``size``
    (``(width, height)`` or one int) when given."""

    def __init__(self, x: int, y: int, width: int, height: int,
                 size: int | Sequence[int] | None = None, interpolation: int | None = None):
        super().__init__()
        self._box = (x, y, width, height)
        self._size = size
        self._interpolation = 1 if interpolation is None else interpolation

    def hybrid_forward(self, F: Any, img: Any) -> Any:
        if F is not ndarray:
            raise TransformError("CropResize runs on NDArrays (it is not part of a hybridized "
                                 "graph)")
        _image(img, "CropResize")
        x, y, width, height = self._box
        h, w = img.shape[-3], img.shape[-2]
        if width <= 0 or height <= 0 or x < 0 or y < 0:
            raise TransformError(f"CropResize: x, y must be >= 0 and width, height > 0, got "
                                 f"{self._box}")
        if x + width > w or y + height > h:
            raise TransformError(f"CropResize: the region x={x}, y={y}, width={width}, "
                                 f"height={height} leaves the {w}x{h} image")
        out = img[y:y + height, x:x + width] if img.ndim == 3 else \
            img[:, y:y + height, x:x + width]
        if self._size is not None:
            out = Resize(_wh(self._size, "CropResize"), False, self._interpolation)(out)
        return out


class _RandomFlip(Block):
    _axis = 1

    def forward(self, x: Any) -> Any:
        _image(x, type(self).__name__)
        if np.random.random_sample() < 0.5:
            return ndarray.flip(x, axis=self._axis + (x.ndim - 3))
        return x


class RandomFlipLeftRight(_RandomFlip):
    """Mirrors the image left to right with probability 1/2."""

    _axis = 1


class RandomFlipTopBottom(_RandomFlip):
    """Flips the image upside down with probability 1/2."""

    _axis = 0


def _gray(values: np.ndarray) -> np.ndarray:
    return (values * _GRAY).sum(axis=-1, keepdims=True)


class _ColorBlock(Block):
    """A random colour change computed in float32 on HWC (NHWC) RGB images."""

    def _apply(self, values: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def forward(self, x: Any) -> Any:
        _image(x, type(self).__name__)
        if x.shape[-1] != 3:
            raise TransformError(f"{type(self).__name__}: expected 3 (RGB) channels last, got "
                                 f"shape {tuple(x.shape)}")
        return _like(self._apply(x.asnumpy().astype(np.float32)), x)


def _factor(limit: float) -> float:
    return 1.0 + np.random.uniform(-limit, limit)


class RandomBrightness(_ColorBlock):
    """Scales the image by a factor drawn from ``[1 - brightness, 1 + brightness]``."""

    def __init__(self, brightness: float):
        super().__init__()
        self._brightness = brightness

    def _apply(self, values: np.ndarray) -> np.ndarray:
        return values * _factor(self._brightness)


class RandomContrast(_ColorBlock):
    """Blends the image with its mean grey by a factor drawn from
    ``[1 - contrast, 1 + contrast]``."""

    def __init__(self, contrast: float):
        super().__init__()
        self._contrast = contrast

    def _apply(self, values: np.ndarray) -> np.ndarray:
        alpha = _factor(self._contrast)
        axes = tuple(range(values.ndim - 3, values.ndim))
        mean = _gray(values).mean(axis=axes, keepdims=True)
        return values * alpha + mean * (1 - alpha)


class RandomSaturation(_ColorBlock):
    """Blends each pixel with its grey by a factor drawn from
    ``[1 - saturation, 1 + saturation]``."""

    def __init__(self, saturation: float):
        super().__init__()
        self._saturation = saturation

    def _apply(self, values: np.ndarray) -> np.ndarray:
        alpha = _factor(self._saturation)
        return values * alpha + _gray(values) * (1 - alpha)


_TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321],
                    [0.211, -0.523, 0.311]], dtype=np.float32)
_FROM_YIQ = np.linalg.inv(_TO_YIQ).astype(np.float32)


class RandomHue(_ColorBlock):
    """Rotates the hue (in YIQ space) by ``pi * u``, ``u`` drawn from
    ``[-hue, hue]``."""

    def __init__(self, hue: float):
        super().__init__()
        self._hue = hue

    def _apply(self, values: np.ndarray) -> np.ndarray:
        angle = np.random.uniform(-self._hue, self._hue) * np.pi
        c, s = np.cos(angle), np.sin(angle)
        rotate = np.array([[1, 0, 0], [0, c, -s], [0, s, c]], dtype=np.float32)
        matrix = _FROM_YIQ @ rotate @ _TO_YIQ
        return values @ matrix.T


class RandomColorJitter(Block):
    """Random brightness, contrast, saturation and hue changes, in random order
    (a zero skips one)."""

    def __init__(self, brightness: float = 0, contrast: float = 0, saturation: float = 0,
                 hue: float = 0):
        super().__init__()
        self._steps = [cls(v) for cls, v in ((RandomBrightness, brightness),
                                             (RandomContrast, contrast),
                                             (RandomSaturation, saturation),
                                             (RandomHue, hue)) if v > 0]

    def forward(self, x: Any) -> Any:
        steps = list(self._steps)
        random.shuffle(steps)
        for step in steps:
            x = step(x)
        return x


_EIGVAL = np.array([55.46, 4.794, 1.148], dtype=np.float32)
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                    [-0.5836, -0.6948, 0.4203]], dtype=np.float32)


class RandomLighting(_ColorBlock):
    """AlexNet's PCA lighting noise: adds ``eigvec @ (a * eigval)`` to every pixel,
    ``a`` drawn from a normal distribution with deviation ``alpha``."""

    def __init__(self, alpha: float):
        super().__init__()
        self._alpha = alpha

    def _apply(self, values: np.ndarray) -> np.ndarray:
        weights = np.random.normal(0, self._alpha, size=3).astype(np.float32)
        return values + _EIGVEC @ (weights * _EIGVAL)


class RandomApply(Sequential):
    """Applies ``transforms`` (a Block) with probability ``p``, else passes the image
    through."""

    def __init__(self, transforms: Block, p: float = 0.5):
        super().__init__()
        if not 0 <= p <= 1:
            raise TransformError(f"RandomApply: p must be in [0, 1], got {p}")
        self.transforms = transforms
        self.p = p

    def forward(self, x: Any) -> Any:
        if np.random.random_sample() < self.p:
            return self.transforms(x)
        return x
