"""Differences and running sums, NumPy's way: ``diff``, ``ediff1d`` and ``cumsum``.

Differences are slices subtracted (so their gradient is the head gradient's negated
difference); ``cumsum`` is the registered ``_np_cumsum`` operator.
"""

from __future__ import annotations

from typing import Any

import numpy as onp

from .. import ndarray as nd
from ..util import use_np_shape
from ._array import NumpyError, ndarray, wrap
from ._elementwise import not_equal, subtract
from ._manipulation import _array, broadcast_to, concatenate, normalize_axis, ravel

__all__ = ["diff", "ediff1d", "cumsum"]


def _step(a: ndarray, axis: int) -> ndarray:
    """One difference along ``axis``: ``a[1:] - a[:-1]`` there (``!=`` for booleans)."""
    lead = (slice(None),) * axis
    upper, lower = a[lead + (slice(1, None),)], a[lead + (slice(None, -1),)]
    return not_equal(upper, lower) if a.dtype == onp.bool_ else subtract(upper, lower)


@use_np_shape
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None,
         append: Any = None) -> ndarray:
    """The ``n``-th difference along ``axis``: ``out[i] = a[i+1] - a[i]`` applied ``n``
    times (the axis shrinks by ``n``, to no less than 0).  ``prepend`` / ``append``
    (scalars broadcast across the other axes, or arrays) are joined to ``a`` first."""
    a = _array(a)
    n = int(n)
    if n < 0:
        raise NumpyError(f"diff: the order n must be non-negative, got {n}")
    if a.ndim == 0:
        raise NumpyError("diff requires input that is at least one dimensional")
    axis = normalize_axis(axis, a.ndim)
    if n == 0:
        return a.copy()
    ends = []
    for value in (prepend, append):
        if value is not None:
            value = _array(value)
            if value.ndim == 0:
                shape = list(a.shape)
                shape[axis] = 1
                value = broadcast_to(value, shape)
        ends.append(value)
    if prepend is not None or append is not None:
        a = concatenate([p for p in (ends[0], a, ends[1]) if p is not None], axis=axis)
    for _ in range(min(n, a.shape[axis])):
        a = _step(a, axis)
    return a


@use_np_shape
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> ndarray:
    """The differences between consecutive elements of the flattened ``ary``, with
    ``to_begin`` and ``to_end`` (scalars or arrays, flattened, in ary's dtype) joined at
    the ends."""
    flat = ravel(_array(ary))
    parts = [_step(flat, 0) if flat.shape[0] else flat]
    for value, at in ((to_begin, 0), (to_end, None)):
        if value is None:
            continue
        value = ravel(_array(value))
        if value.dtype != flat.dtype:
            value = value.astype(flat.dtype)
        parts.insert(0 if at == 0 else len(parts), value)
    return concatenate(parts, axis=0) if len(parts) > 1 else parts[0]


@use_np_shape
def cumsum(a: Any, axis: int | None = None, dtype: Any = None,
           out: ndarray | None = None) -> ndarray:
    """The running sum of ``a`` along ``axis`` (of the flattened ``a`` when None, a 1-d
    result), in ``dtype`` or a's dtype (int64 for booleans)."""
    a = _array(a)
    if axis is not None:
        if a.ndim == 0:
            raise NumpyError("cumsum: a 0-d array has no axis to sum along; use axis=None")
        axis = normalize_axis(axis, a.ndim)
    source = a if a.ndim else a.reshape(1)
    result = wrap(nd._np_cumsum(source, axis=axis,
                                dtype=None if dtype is None else onp.dtype(dtype).name))
    if out is not None:
        out[...] = result
        return out
    return result
