"""More joins and splits, NumPy's way, on top of ``concatenate`` and ``split``:
``column_stack``, ``append``, ``vsplit``, ``hsplit`` and ``dsplit``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as onp

from ..util import use_np_shape
from ._array import NumpyError, ndarray
from ._manipulation import _array, array_split, concatenate, ravel, reshape, split

__all__ = ["column_stack", "append", "vsplit", "hsplit", "dsplit"]


@use_np_shape
def column_stack(tup: Sequence[Any]) -> ndarray:
    """The arrays of ``tup`` joined as columns along axis 1: 0-d and 1-d arrays become
    columns (shape (N, 1)), the others are joined as they are."""
    columns = []
    for a in (_array(x) for x in tup):
        columns.append(reshape(a, (a.size, 1)) if a.ndim < 2 else a)
    return concatenate(columns, axis=1)


@use_np_shape
def append(arr: Any, values: Any, axis: int | None = None) -> ndarray:
    """``values`` appended to the end of ``arr`` along ``axis`` (both flattened when
    None; otherwise they must have the same number of dimensions)."""
    arr, values = _array(arr), _array(values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], axis=0)
    return concatenate([arr, values], axis=axis)


def _check_ndim(ary: ndarray, least: int, name: str) -> None:
    if ary.ndim < least:
        raise NumpyError(f"{name} only works on arrays of {least} or more dimensions, got "
                         f"shape {ary.shape}")


@use_np_shape
def vsplit(ary: Any, indices_or_sections: int | Sequence[int]) -> list[ndarray]:
    """``split`` along the first axis (the rows) of an array of 2 or more dimensions."""
    ary = _array(ary)
    _check_ndim(ary, 2, "vsplit")
    return split(ary, indices_or_sections, 0)


@use_np_shape
def hsplit(ary: Any, indices_or_sections: int | Sequence[int]) -> list[ndarray]:
    """``split`` along the second axis (the columns; the first of a 1-d array).  As in
    MXNet, a number of sections that does not divide the axis gives the first parts one
    element more (``array_split``) rather than an error."""
    ary = _array(ary)
    _check_ndim(ary, 1, "hsplit")
    axis = 0 if ary.ndim == 1 else 1
    if isinstance(indices_or_sections, (int, onp.integer)):
        return array_split(ary, indices_or_sections, axis)
    return split(ary, indices_or_sections, axis)


@use_np_shape
def dsplit(ary: Any, indices_or_sections: int | Sequence[int]) -> list[ndarray]:
    """``split`` along the third axis (the depth) of an array of 3 or more dimensions."""
    ary = _array(ary)
    _check_ndim(ary, 3, "dsplit")
    return split(ary, indices_or_sections, 2)
