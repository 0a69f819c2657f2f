"""Whether two ``dagnet.numpy`` arrays share memory: ``shares_memory`` and
``may_share_memory``.

dagnet arrays are views of a chunk of device memory (an offset, a shape and the
strides); a basic index that selects a contiguous part gives a view, anything else a
copy.  Two arrays share memory when they view one chunk and the bytes they cover
overlap; an empty array shares nothing.
"""

from __future__ import annotations

import math
from typing import Any

from ..ndarray import NDArray
from ._array import NumpyTypeError

__all__ = ["shares_memory", "may_share_memory"]


def _extent(array: NDArray) -> tuple[int, int]:
    """The first byte and one past the last byte ``array`` covers in its chunk."""
    start = end = array._offset
    strides = array._strides
    if strides is None:
        return start, start + math.prod(array._shape) * array._dtype.itemsize
    for length, stride in zip(array._shape, strides):
        if stride < 0:
            start += (length - 1) * stride
        else:
            end += (length - 1) * stride
    return start, end + array._dtype.itemsize


def _overlap(a: Any, b: Any, name: str) -> bool:
    for value in (a, b):
        if not isinstance(value, NDArray):
            raise NumpyTypeError(f"{name}: expected dagnet.numpy arrays, got "
                                 f"{type(value).__name__}")
    if a.size == 0 or b.size == 0 or a._chunk is not b._chunk:
        return False
    a_start, a_end = _extent(a)
    b_start, b_end = _extent(b)
    return a_start < b_end and b_start < a_end


def shares_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """Whether ``a`` and ``b`` (views of one chunk) cover some of the same bytes.  The
    arrays dagnet makes are contiguous, so this is exact; ``max_work`` is accepted and
    ignored."""
    return _overlap(a, b, "shares_memory")


def may_share_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """Whether ``a`` and ``b`` might share memory: the byte ranges they span overlap."""
    return _overlap(a, b, "may_share_memory")
