"""``mx.image``'s functions on single images: reading, decoding, resizing, cropping,
padding, normalizing, rotating.

Images are NDArrays laid out height x width x channels (HWC), RGB, as MXNet's
``mx.image`` has them (``imrotate`` alone works on CHW float32, as MXNet's
does).  Decoding and resizing run in Pillow (see :mod:`dagnet.image.codec`);
interpolation codes are OpenCV's, as MXNet takes them: 0 nearest, 1 bilinear,
2 bicubic, 3 area, 4 Lanczos, 9 chosen from the sizes, 10 random.  Bilinear,
MXNet's usual choice, is OpenCV's own fixed-point arithmetic, so its pixels equal
MXNet's; the other filters are Pillow's, which filter a shrinking image over the
whole footprint of each output pixel and so differ from OpenCV's by a few
intensity levels at edges.
"""

from __future__ import annotations

import os
import random
import warnings
from numbers import Number
from typing import Any

import numpy as np

from .. import ndarray as nd
from ..base import numeric_types
from .codec import ImageDecodeError, ImageError, decode_image, pillow, read_image_file

__all__ = ["imread", "imdecode", "imresize", "scale_down", "copyMakeBorder", "resize_short",
           "fixed_crop", "random_crop", "center_crop", "color_normalize", "random_size_crop",
           "imrotate", "random_rotate", "resize_array", "resize_bilinear", "get_interp_method"]


def _host(src: Any) -> np.ndarray:
    return src.asnumpy() if isinstance(src, nd.NDArray) else np.asarray(src)


def _nd(array: np.ndarray, like: Any = None, out: Any = None) -> Any:
    if out is not None:
        out[:] = array
        return out
    return nd.array(array, dtype=array.dtype)


def imread(filename: str | os.PathLike[str], flag: int = 1, to_rgb: int = 1,
           out: Any = None) -> Any:
    """Read and decode an image file to a uint8 HWC NDArray (see :func:`imdecode`)."""
    return imdecode(read_image_file(filename), flag=flag, to_rgb=to_rgb, out=out)


def imdecode(buf: Any, flag: int = 1, to_rgb: int = 1, out: Any = None) -> Any:
    """Decode image bytes (bytes, bytearray, uint8 numpy array or NDArray) to a uint8 HWC
    NDArray: ``flag`` 1 colour (3 channels), 0 gray (1 channel); RGB unless ``to_rgb=0``
    (BGR, OpenCV's order)."""
    if isinstance(buf, nd.NDArray):
        buf = buf.asnumpy().astype(np.uint8)
    elif isinstance(buf, str):
        raise ImageDecodeError("imdecode takes bytes, a bytearray or a uint8 numpy array, "
                               "got str; encode text to bytes first")
    array = decode_image(buf, flag=1 if flag else 0, to_rgb=bool(to_rgb))
    return _nd(array, out=out)


def _filter(interp: int) -> Any:
    Image = pillow()
    filters = {0: Image.Resampling.NEAREST, 1: Image.Resampling.BILINEAR,
               2: Image.Resampling.BICUBIC, 3: Image.Resampling.BOX,
               4: Image.Resampling.LANCZOS}
    return filters[interp]


def _linear_taps(src: int, dst: int, columns: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OpenCV's bilinear taps along one axis: each output's two source indices and the
    weight of the second (half-pixel centres).  Past an edge OpenCV moves a column tap
    onto the edge with weight 0, but keeps a row's weights and only clamps its rows."""
    position = ((np.arange(dst, dtype=np.float64) + 0.5) * (src / dst) - 0.5).astype(np.float32)
    left = np.floor(position).astype(np.int64)
    frac = position - left.astype(np.float32)
    if columns:
        frac[left < 0] = 0.0
        left[left < 0] = 0
        frac[left >= src - 1] = 0.0
        left[left >= src - 1] = src - 1
    return np.clip(left, 0, src - 1), np.clip(left + 1, 0, src - 1), frac


def resize_bilinear(array: np.ndarray, w: int, h: int) -> np.ndarray:
    """OpenCV's ``INTER_LINEAR`` resize of an HWC array, as MXNet's resizes compute it:
    uint8 in OpenCV's fixed point (11-bit weights, its vectorized rounding), so pixels
    match; other dtypes in float.  An exact halving averages 2x2 blocks, as OpenCV
    switches to area interpolation there."""
    sh, sw = array.shape[:2]
    if array.dtype == np.uint8 and sh == 2 * h and sw == 2 * w:
        blocks = array.reshape(h, 2, w, 2, -1).astype(np.int32).sum(axis=(1, 3))
        return ((blocks + 2) >> 2).astype(np.uint8).reshape((h, w) + array.shape[2:])
    xs, xs1, fx = _linear_taps(sw, w, columns=True)
    ys, ys1, fy = _linear_taps(sh, h, columns=False)
    if array.dtype == np.uint8:
        # each weight rounded on its own, as OpenCV does (they may sum to 2047 or 2049)
        one = np.float32(1)
        cx0, cx1 = (np.rint((one - fx) * 2048).astype(np.int32),
                    np.rint(fx * 2048).astype(np.int32))
        cy0, cy1 = (np.rint((one - fy) * 2048).astype(np.int32),
                    np.rint(fy * 2048).astype(np.int32))
        wide = array.astype(np.int32)
        extra = (None,) * (array.ndim - 2)
        rows = np.take(wide, xs, axis=1)
        rows *= cx0[(None, slice(None)) + extra]
        right = np.take(wide, xs1, axis=1)
        right *= cx1[(None, slice(None)) + extra]
        rows += right
        rows >>= 4  # on the source rows, before they are repeated for the output rows
        top = np.take(rows, ys, axis=0)
        top *= cy0[(slice(None), None) + extra]
        top >>= 16
        bottom = np.take(rows, ys1, axis=0)
        bottom *= cy1[(slice(None), None) + extra]
        bottom >>= 16
        top += bottom
        top += 2
        top >>= 2
        return np.clip(top, 0, 255, out=top).astype(np.uint8)
    extra = (None,) * (array.ndim - 2)
    wide = array.astype(np.float64)
    fxb = fx[(None, slice(None)) + extra]
    fyb = fy[(slice(None), None) + extra]
    rows = wide[:, xs] * (1 - fxb) + wide[:, xs1] * fxb
    result = rows[ys] * (1 - fyb) + rows[ys1] * fyb
    if np.issubdtype(array.dtype, np.integer):
        info = np.iinfo(array.dtype)
        result = np.clip(np.rint(result), info.min, info.max)
    return result.astype(array.dtype)


def resize_array(array: np.ndarray, w: int, h: int, interp: int = 1) -> np.ndarray:
    """Resize an HWC (or HW) numpy array to width ``w`` and height ``h``, keeping its
    dtype; ``interp`` is an OpenCV interpolation code 0-4 (see :func:`imresize`).
    Bilinear (1) is OpenCV's own arithmetic (:func:`resize_bilinear`); the other
    filters are Pillow's."""
    Image = pillow()
    if w <= 0 or h <= 0:
        raise ImageError(f"imresize: the new size must be positive, got w={w}, h={h}")
    interp = get_interp_method(interp, (array.shape[0], array.shape[1], h, w))
    resample = _filter(interp)
    squeeze = array.ndim == 2
    if squeeze:
        array = array[:, :, None]
    if array.shape[:2] == (h, w):
        result = array.copy()
    elif interp == 1:
        result = resize_bilinear(array, w, h)
    elif array.dtype == np.uint8 and array.shape[2] in (1, 3):
        mode = "RGB" if array.shape[2] == 3 else "L"
        image = Image.fromarray(np.ascontiguousarray(array if mode == "RGB" else array[:, :, 0]),
                                mode)
        result = np.asarray(image.resize((w, h), resample)).reshape(h, w, array.shape[2])
    else:
        channels = []
        for c in range(array.shape[2]):
            plane = Image.fromarray(np.ascontiguousarray(array[:, :, c], dtype=np.float32), "F")
            channels.append(np.asarray(plane.resize((w, h), resample)))
        result = np.stack(channels, axis=2)
        if np.issubdtype(array.dtype, np.integer):
            info = np.iinfo(array.dtype)
            result = np.clip(np.rint(result), info.min, info.max)
        result = result.astype(array.dtype)
    return result[:, :, 0] if squeeze else result


def imresize(src: Any, w: int, h: int, interp: int = 1, out: Any = None) -> Any:
    """Resize an HWC image NDArray to ``w`` x ``h`` (``interp``: 0 nearest, 1 bilinear,
    2 bicubic, 3 area, 4 Lanczos, 9 auto, 10 random)."""
    return _nd(resize_array(_host(src), int(w), int(h), interp), out=out)


def scale_down(src_size: tuple[int, int], size: tuple[int, int]) -> tuple[int, int]:
    """The crop size ``size`` (w, h) shrunk, keeping its aspect ratio, to fit in an
    image of ``src_size`` (w, h)."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


_BORDER_MODES = {1: "symmetric", 2: "reflect", 3: "edge", 4: "wrap"}


def copyMakeBorder(src: Any, top: int, bot: int, left: int, right: int,  # noqa: N802
                   type: int = 0, value: float = 0.0, values: Any = (),  # noqa: A002
                   out: Any = None) -> Any:
    """Pad an HWC image: ``type`` 0 constant (``values`` per channel, else ``value``),
    1 reflect (fedcba|abcdef), 2 reflect-101 (fedcb|abcdef), 3 replicate, 4 wrap."""
    array = _host(src)
    pad = [(top, bot), (left, right)] + [(0, 0)] * (array.ndim - 2)
    if type == 0:
        fill = np.asarray(values if len(values) else [value], dtype=np.float64)
        result = np.pad(array, pad, mode="constant")
        mask = np.ones(result.shape[:2], dtype=bool)
        mask[top:top + array.shape[0], left:left + array.shape[1]] = False
        if array.ndim == 3:
            fill = np.resize(fill, array.shape[2]) if fill.size < array.shape[2] else \
                fill[:array.shape[2]]
        else:
            fill = fill[0]
        result[mask] = fill.astype(array.dtype) if np.ndim(fill) else array.dtype.type(fill)
    elif type in _BORDER_MODES:
        result = np.pad(array, pad, mode=_BORDER_MODES[type])
    else:
        raise ImageError(f"copyMakeBorder: unknown border type {type}; expected 0 "
                               f"(constant), 1 (reflect), 2 (reflect 101), 3 (replicate) "
                               f"or 4 (wrap)")
    return _nd(result, out=out)


def get_interp_method(interp: int, sizes: tuple[int, ...] = ()) -> int:
    """The interpolation code 0-4 that ``interp`` means for a resize of ``sizes``
    (old h, old w, new h, new w): 9 picks bicubic to enlarge, area to shrink, bilinear
    otherwise; 10 picks one at random."""
    if interp == 9:
        if sizes:
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ImageError(f"unknown interpolation method {interp}; expected 0-4, 9 "
                               f"(auto) or 10 (random)")
    return interp


_get_interp_method = get_interp_method  # MXNet's private name, which GluonCV imports


def resize_short(src: Any, size: int, interp: int = 2) -> Any:
    """Resize so that the shorter edge is ``size``, keeping the aspect ratio."""
    h, w = src.shape[0], src.shape[1]
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src: Any, x0: int, y0: int, w: int, h: int, size: tuple[int, int] | None = None,
               interp: int = 2) -> Any:
    """The ``w`` x ``h`` region at (``x0``, ``y0``), resized to ``size`` (w, h) if given."""
    out = src[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        sizes = (h, w, size[1], size[0])
        out = imresize(out, *size, interp=get_interp_method(interp, sizes))
    return out


def random_crop(src: Any, size: tuple[int, int], interp: int = 2) -> tuple[Any, tuple[int, ...]]:
    """A random crop of ``size`` (w, h) (shrunk to fit, then resized back to ``size``),
    and its (x0, y0, w, h) in ``src``."""
    h, w = src.shape[0], src.shape[1]
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src: Any, size: tuple[int, int], interp: int = 2) -> tuple[Any, tuple[int, ...]]:
    """The centred crop of ``size`` (w, h) (shrunk to fit, then resized back to
    ``size``), and its (x0, y0, w, h) in ``src``."""
    h, w = src.shape[0], src.shape[1]
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src: Any, mean: Any, std: Any = None) -> Any:
    """``(src - mean) / std`` per channel, in place on ``src`` (either may be None)."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src: Any, size: tuple[int, int], area: Any, ratio: tuple[float, float],
                     interp: int = 2, **kwargs: Any) -> tuple[Any, tuple[int, ...]]:
    """A crop of random area (a fraction in ``area``: a minimum, or a (min, max) pair) and
    aspect ratio (in ``ratio``), resized to ``size`` (w, h); after 10 tries that do not
    fit, the centre crop."""
    h, w = src.shape[0], src.shape[1]
    if "min_area" in kwargs:
        warnings.warn("`min_area` is deprecated; use `area`", DeprecationWarning, stacklevel=2)
        area = kwargs.pop("min_area")
    if kwargs:
        raise TypeError(f"random_size_crop got unexpected arguments {sorted(kwargs)}")
    if isinstance(area, numeric_types):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * h * w
        new_ratio = np.exp(random.uniform(np.log(ratio[0]), np.log(ratio[1])))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def _bilinear_sample(images: np.ndarray, gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """Sample NCHW ``images`` at normalized coordinates in [-1, 1] (N, H, W), zero
    outside, as MXNet's BilinearSampler."""
    n, c, h, w = images.shape
    x = (gx + 1) * (w - 1) / 2
    y = (gy + 1) * (h - 1) / 2
    x0 = np.floor(x).astype(np.int64)
    y0 = np.floor(y).astype(np.int64)
    out = np.zeros((n, c) + gx.shape[1:], dtype=np.float32)
    batch = np.arange(n)[:, None, None]
    for dy in (0, 1):
        for dx in (0, 1):
            xi, yi = x0 + dx, y0 + dy
            weight = (1 - np.abs(x - xi)) * (1 - np.abs(y - yi))
            inside = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
            values = images[batch, :, np.clip(yi, 0, h - 1), np.clip(xi, 0, w - 1)]
            values = np.moveaxis(values, -1, 1)  # (n, c, H, W)
            out += (values * (weight * inside)[:, None]).astype(np.float32)
    return out


def imrotate(src: Any, rotation_degrees: Any, zoom_in: bool = False,
             zoom_out: bool = False) -> Any:
    """Rotate a CHW image, or an NCHW batch, of float32 by ``rotation_degrees``
    (counter-clockwise; a number, or one angle per image of a batch), sampling
    bilinearly with zeros outside.  ``zoom_in`` scales so that no padding shows,
    ``zoom_out`` so that the whole image stays in view."""
    if zoom_in and zoom_out:
        raise ValueError("imrotate: zoom_in and zoom_out cannot both be True")
    if src.dtype != np.float32:
        raise TypeError(f"imrotate works on float32 images, got {np.dtype(src.dtype).name}; "
                        f"cast with .astype('float32')")
    images = _host(src)
    single = images.ndim == 3
    if single:
        if not isinstance(rotation_degrees, Number):
            raise TypeError("imrotate: a single image takes one angle (a number), got "
                            f"{type(rotation_degrees).__name__}")
        images = images[None]
    elif images.ndim != 4:
        raise ValueError(f"imrotate takes a CHW image or an NCHW batch, got "
                         f"{images.ndim} dimensions")
    n, _, h, w = images.shape
    if isinstance(rotation_degrees, Number):
        angles = np.full(n, float(rotation_degrees))
    else:
        angles = _host(rotation_degrees).astype(np.float64).ravel()
    if len(angles) != n:
        raise ValueError(f"imrotate: {n} images but {len(angles)} rotation angles")
    rad = (np.pi * angles / 180)[:, None, None]
    hscale, wscale = (h - 1) / 2, (w - 1) / 2
    hh = (np.arange(h, dtype=np.float64)[:, None] - hscale) * np.ones((1, w))
    ww = (np.arange(w, dtype=np.float64)[None, :] - wscale) * np.ones((h, 1))
    gx = (ww * np.cos(rad) - hh * np.sin(rad)) / wscale
    gy = (ww * np.sin(rad) + hh * np.cos(rad)) / hscale
    if zoom_in or zoom_out:
        rho = np.sqrt(h * h + w * w)
        corner = np.arctan(h / w)
        a = np.abs(rad)
        max_x = np.maximum(np.abs(rho * np.cos(corner + a)), np.abs(rho * np.cos(corner - a)))
        max_y = np.maximum(np.abs(rho * np.sin(corner + a)), np.abs(rho * np.sin(corner - a)))
        if zoom_out:
            scale = np.maximum(max_x / w, max_y / h)
        else:
            scale = np.minimum(w / max_x, h / max_y)
        gx, gy = gx * scale, gy * scale
    rotated = _bilinear_sample(images.astype(np.float32), gx, gy)
    return nd.array(rotated[0] if single else rotated, dtype=np.float32)


def random_rotate(src: Any, angle_limits: tuple[float, float], zoom_in: bool = False,
                  zoom_out: bool = False) -> Any:
    """:func:`imrotate` by an angle drawn uniformly from ``angle_limits`` (one per image
    of a batch)."""
    if src.ndim == 3:
        angles: Any = float(np.random.uniform(*angle_limits))
    else:
        angles = nd.array(np.random.uniform(*angle_limits, size=src.shape[0]))
    return imrotate(src, angles, zoom_in=zoom_in, zoom_out=zoom_out)
