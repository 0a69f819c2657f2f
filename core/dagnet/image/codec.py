"""Image bytes to pixels and back, on Pillow.

Pillow rather than OpenCV (``opencv-python-headless``): it is a small wheel for
every platform with no system libraries to match, its JPEG decoder is
libjpeg-turbo (the decoder MXNet's own OpenCV build uses, so JPEG pixels agree
with MXNet's to within the decoder's rounding), and ``Image.load`` and
``Image.resize`` release the GIL, so the data iterators decode on threads rather
than processes.  Arrays here are numpy, height x width x channels, RGB order
unless a caller asks for BGR (OpenCV's order, which ``mx.recordio`` keeps).
"""

from __future__ import annotations

import io
import os
from typing import Any

import numpy as np

from .._errors import DagnetError

__all__ = ["ImageError", "ImageDecodeError", "decode_image", "encode_image", "pillow",
           "read_image_file"]


class ImageError(DagnetError, ValueError):
    """A bad argument to an image function, augmenter or image iterator."""


class ImageDecodeError(ImageError):
    """Bytes that are not an image Pillow can decode, or an image file that cannot be
    read."""


def pillow() -> Any:
    """Pillow's ``Image`` module, or an error that says how to install it."""
    try:
        from PIL import Image
    except ImportError as error:  # pragma: no cover - Pillow is a dependency
        raise ImageDecodeError(
            f"dagnet's image functions need Pillow ({error}); pip install pillow") from error
    return Image


def decode_image(buf: Any, flag: int = 1, to_rgb: bool = True) -> np.ndarray:
    """Decode encoded image bytes to a uint8 numpy array.

    ``flag`` 1 gives 3 channels ``(h, w, 3)``, 0 gray ``(h, w, 1)``, -1 the
    file's own channels (gray ``(h, w, 1)``, colour ``(h, w, 3)``, with alpha
    ``(h, w, 4)``).  Colour comes RGB, or BGR with ``to_rgb=False``.  16-bit
    images are scaled to 8 bits.
    """
    Image = pillow()
    if isinstance(buf, np.ndarray):
        buf = buf.tobytes()
    elif isinstance(buf, memoryview):
        buf = buf.tobytes()
    if not isinstance(buf, (bytes, bytearray)):
        raise ImageDecodeError(f"imdecode takes bytes, a bytearray or a uint8 numpy array, "
                               f"got {type(buf).__name__}; encode text to bytes first")
    if len(buf) == 0:
        raise ImageDecodeError("imdecode: the buffer is empty; there is no image to decode")
    try:
        image = Image.open(io.BytesIO(buf))
        image.load()
    except Exception as error:
        raise ImageDecodeError(f"imdecode: cannot decode {len(buf)} bytes starting "
                               f"{bytes(buf[:8])!r} as an image ({error})") from error
    return _to_array(image, flag, to_rgb)


def _to_array(image: Any, flag: int, to_rgb: bool) -> np.ndarray:
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        image = image.point(lambda v: v / 256).convert("L") if mode != "I" else \
            image.convert("L")
        mode = "L"
    if flag == 0:
        array = np.asarray(image.convert("L") if mode != "L" else image)
        return array[:, :, None]
    if flag == 1 or mode not in ("L", "RGBA", "LA"):
        if mode != "RGB":
            image = image.convert("RGB")
        array = np.asarray(image)
    elif mode == "L":
        return np.asarray(image)[:, :, None]
    else:
        array = np.asarray(image.convert("RGBA"))
    if not to_rgb:
        array = np.concatenate([array[:, :, 2::-1], array[:, :, 3:]], axis=2) \
            if array.shape[2] == 4 else array[:, :, ::-1]
    return np.ascontiguousarray(array)


def encode_image(array: Any, img_fmt: str = ".jpg", quality: int = 95) -> bytes:
    """Encode an RGB (or gray) uint8 array ``(h, w[, c])`` as ``img_fmt``: '.jpg'
    (``quality`` 1-100) or '.png' (``quality`` is the compression level 0-9)."""
    Image = pillow()
    array = np.asarray(array)
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    fmt = img_fmt.lower().lstrip(".")
    image = Image.fromarray(np.ascontiguousarray(array))
    out = io.BytesIO()
    if fmt in ("jpg", "jpeg"):
        if image.mode not in ("RGB", "L"):
            image = image.convert("RGB")
        image.save(out, format="JPEG", quality=int(quality))
    elif fmt == "png":
        image.save(out, format="PNG", compress_level=int(min(max(quality, 0), 9)))
    else:
        raise ImageError(f"cannot encode images as {img_fmt!r}; expected '.jpg' or "
                               f"'.png'")
    return out.getvalue()


def read_image_file(filename: str | os.PathLike[str]) -> bytes:
    """The bytes of an image file, with an error naming the file when it cannot be read."""
    try:
        with open(filename, "rb") as file:
            return file.read()
    except OSError as error:
        raise ImageDecodeError(f"cannot read image file {os.fspath(filename)!r}: "
                               f"{error.strerror}") from error
