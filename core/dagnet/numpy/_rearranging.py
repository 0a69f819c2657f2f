"""Rearranging elements without changing them, NumPy's way: ``roll``, ``rot90``,
``flipud``, ``fliplr``, ``atleast_1d``/``2d``/``3d``, ``meshgrid``, ``resize`` and
``shape``.

Each is composed of registered operators (slices joined, ``reverse``, ``transpose``,
reshapes, ``broadcast_to``, ``tile``), so gradients flow under autograd and a hybridized
block traces them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as onp

from ..util import use_np_shape
from ._array import NumpyError, ndarray, zeros_from
from ._manipulation import (
    _array,
    broadcast_to,
    concatenate,
    flip,
    normalize_axis,
    ravel,
    reshape,
    tile,
    transpose,
)

__all__ = ["roll", "rot90", "flipud", "fliplr", "atleast_1d", "atleast_2d", "atleast_3d",
           "meshgrid", "resize", "shape"]


def _ints(value: Any) -> tuple[int, ...]:
    return tuple(int(v) for v in value) if isinstance(value, (tuple, list)) else (int(value),)


@use_np_shape
def roll(a: Any, shift: int | Sequence[int], axis: int | Sequence[int] | None = None
         ) -> ndarray:
    """``a`` with its elements shifted by ``shift`` along ``axis`` (of the flattened ``a``
    when None), those pushed past the end coming back at the start.  ``shift`` and
    ``axis`` pair up as NumPy broadcasts them; the gradient rolls back."""
    a = _array(a)
    if axis is None:
        return reshape(roll(ravel(a), sum(_ints(shift)), 0), a.shape)
    shifts, axes = _ints(shift), _ints(axis)
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise NumpyError(f"roll: shift {shift} and axis {axis} must have the same length "
                         f"(or one of them a single value)")
    total = dict.fromkeys(range(a.ndim), 0)
    for s, ax in zip(shifts * (len(axes) if len(shifts) == 1 else 1),
                     axes * (len(shifts) if len(axes) == 1 else 1)):
        total[normalize_axis(ax, a.ndim)] += s
    result = a
    for ax, s in total.items():
        size = a.shape[ax]
        if size and s % size:
            # the last s elements, then the others: slices joined (no index array, so
            # mx.sym.np.roll holds it too)
            cut = size - s % size
            lead = (slice(None),) * ax
            result = concatenate([result[lead + (slice(cut, None),)],
                                  result[lead + (slice(None, cut),)]], axis=ax)
    return result if result is not a else a.copy()


@use_np_shape
def rot90(m: Any, k: int = 1, axes: Sequence[int] = (0, 1)) -> ndarray:
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``, from the first
    axis towards the second."""
    m = _array(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise NumpyError(f"rot90: axes must name exactly 2 axes, got {axes}")
    first, second = (normalize_axis(x, m.ndim, "rot90 axis") for x in axes)
    if first == second:
        raise NumpyError(f"rot90: the axes must differ, got {axes}")
    k = int(k) % 4
    if k == 0:
        return m.copy()
    if k == 2:
        return flip(m, (first, second))
    order = list(range(m.ndim))
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return transpose(flip(m, second), order)
    return flip(transpose(m, order), second)


@use_np_shape
def flipud(m: Any) -> ndarray:
    """``m`` with the order of its rows (axis 0) reversed."""
    m = _array(m)
    if m.ndim < 1:
        raise NumpyError("flipud: the input must have at least 1 dimension")
    return flip(m, 0)


@use_np_shape
def fliplr(m: Any) -> ndarray:
    """``m`` with the order of its columns (axis 1) reversed."""
    m = _array(m)
    if m.ndim < 2:
        raise NumpyError(f"fliplr: the input must have at least 2 dimensions, got shape "
                         f"{m.shape}")
    return flip(m, 1)


def _at_least(arys: Sequence[Any], grow: Any, name: str) -> ndarray | list[ndarray]:
    if not arys:
        raise NumpyError(f"{name}: expected at least one array")
    results = [reshape(a, grow(a.shape)) for a in (_array(x) for x in arys)]
    return results[0] if len(results) == 1 else results


@use_np_shape
def atleast_1d(*arys: Any) -> ndarray | list[ndarray]:
    """Each array with at least 1 dimension (a 0-d one becomes shape (1,)); one array for
    one input, else a list."""
    return _at_least(arys, lambda s: s or (1,), "atleast_1d")


@use_np_shape
def atleast_2d(*arys: Any) -> ndarray | list[ndarray]:
    """Each array with at least 2 dimensions (new axes in front)."""
    return _at_least(arys, lambda s: (1,) * (2 - len(s)) + s if len(s) < 2 else s,
                     "atleast_2d")


@use_np_shape
def atleast_3d(*arys: Any) -> ndarray | list[ndarray]:
    """Each array with at least 3 dimensions: shape (1, 1, 1) for 0-d, (1, N, 1) for 1-d,
    (M, N, 1) for 2-d (NumPy's rule)."""
    def grow(s: tuple[int, ...]) -> tuple[int, ...]:
        return {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}.get(len(s), s)

    return _at_least(arys, grow, "atleast_3d")


@use_np_shape
def meshgrid(*xi: Any, indexing: str = "xy", sparse: bool = False,
             copy: bool = True) -> list[ndarray]:
    """Coordinate matrices from the coordinate vectors ``xi`` (each flattened): with
    ``indexing='xy'`` (Cartesian) the first two output axes are swapped relative to
    ``'ij'`` (matrix).  ``sparse`` returns broadcastable arrays instead of full ones."""
    if indexing not in ("xy", "ij"):
        raise NumpyError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrays = [ravel(_array(x)) for x in xi]
    ndim = len(arrays)
    if ndim == 0:
        return []
    sizes = [a.shape[0] for a in arrays]
    if indexing == "xy" and ndim > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    results = []
    for i, a in enumerate(arrays):
        at = {0: 1, 1: 0}.get(i, i) if indexing == "xy" and ndim > 1 else i
        view = tuple(sizes[at] if j == at else 1 for j in range(ndim))
        results.append(reshape(a, view) if sparse else broadcast_to(reshape(a, view), sizes))
    return results


@use_np_shape
def resize(a: Any, new_shape: int | Sequence[int]) -> ndarray:
    """An array of ``new_shape`` filled with the flattened ``a`` repeated as often as
    needed (zeros when ``a`` is empty)."""
    a = _array(a)
    target = _ints(new_shape)
    if any(d < 0 for d in target):
        raise NumpyError(f"resize: all elements of new_shape must be non-negative, got "
                         f"{new_shape}")
    size = math.prod(target)
    if size == 0:
        return zeros_from(target, a.dtype, a.context, a)
    if a.size == 0:
        from ._creation import zeros

        return zeros(target, a.dtype, ctx=a.context)
    flat = ravel(a)
    repeats = -(-size // a.size)
    if repeats > 1:
        flat = tile(flat, repeats)
    return reshape(flat[:size] if flat.shape[0] != size else flat, target)


@use_np_shape
def shape(a: Any) -> tuple[int, ...]:
    """The shape of ``a`` (of ``numpy.asarray(a)`` for what is not an array)."""
    return a.shape if hasattr(a, "shape") else onp.shape(a)
