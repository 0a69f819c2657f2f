"""Basic indexing as arithmetic on a view's layout: byte offset, shape, byte strides.

``x[1:3]``, ``x[2]``, ``x[:, 1]``, ``x[..., None]`` select a regular part of the
same memory, so the result is a view that shares the parent's chunk.  Indexes
with arrays, lists or booleans (advanced indexing) are not views; the caller
handles them.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

__all__ = ["c_strides", "is_contiguous", "basic_view", "is_basic_key"]


def c_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """Byte strides of a C-contiguous array of ``shape``."""
    strides = []
    step = itemsize
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    return tuple(reversed(strides))


def is_contiguous(shape: tuple[int, ...], strides: tuple[int, ...], itemsize: int) -> bool:
    """Whether a layout is C-contiguous (dimensions of size 1 may have any stride)."""
    step = itemsize
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim == 0:
            return True
        if dim != 1 and stride != step:
            return False
        step *= dim
    return True


def _is_int(item: Any) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))


def is_basic_key(key: Any) -> bool:
    """Whether ``key`` is made only of integers, slices, ``...`` and ``None``."""
    items = key if isinstance(key, tuple) else (key,)
    return all(_is_int(i) or isinstance(i, slice) or i is Ellipsis or i is None for i in items)


def basic_view(shape: tuple[int, ...], strides: tuple[int, ...], key: Any
               ) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """The layout ``key`` selects: ``(byte offset, shape, strides)``.

    Raises ``IndexError`` as numpy does for an index out of range or too many
    indices.
    """
    items = key if isinstance(key, tuple) else (key,)
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
    if sum(1 for i in items if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > len(shape):
        raise IndexError(
            f"too many indices for array: array is {len(shape)}-dimensional, "
            f"but {consumed} were indexed")
    offset = 0
    out_shape: list[int] = []
    out_strides: list[int] = []
    axis = 0
    for item in items:
        if item is Ellipsis:
            for _ in range(len(shape) - consumed):
                out_shape.append(shape[axis])
                out_strides.append(strides[axis])
                axis += 1
        elif item is None:
            out_shape.append(1)
            out_strides.append(0)
        elif isinstance(item, slice):
            start, stop, step = item.indices(shape[axis])
            count = len(range(start, stop, step))
            if count:
                offset += start * strides[axis]
            out_shape.append(count)
            out_strides.append(strides[axis] * step)
            axis += 1
        else:
            index = operator.index(item)
            size = shape[axis]
            if not -size <= index < size:
                raise IndexError(
                    f"index {index} is out of bounds for axis {axis} with size {size}")
            offset += (index % size) * strides[axis]
            axis += 1
    while axis < len(shape):
        out_shape.append(shape[axis])
        out_strides.append(strides[axis])
        axis += 1
    return offset, tuple(out_shape), tuple(out_strides)
