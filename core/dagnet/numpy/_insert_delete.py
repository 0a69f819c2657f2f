"""``insert`` and ``delete``, NumPy's way.

Where the new elements go (or which are kept) depends on ``obj`` and the shapes only,
so it is worked out on the host; the values move with registered operators (slices,
``concatenate`` and ``take``), so ``arr`` and ``values`` get gradients under autograd.
An ``obj`` given as an array is read on the host.
"""

from __future__ import annotations

from typing import Any

import numpy as onp

from .. import ndarray as nd
from ..ndarray import NDArray
from ..util import use_np_shape
from ._array import NumpyError, ndarray, wrap, zeros_from
from ._manipulation import (
    _array,
    broadcast_to,
    concatenate,
    moveaxis,
    normalize_axis,
    ravel,
    reshape,
)

__all__ = ["insert", "delete"]


def _flat_or_axis(arr: ndarray, axis: int | None) -> tuple[ndarray, int]:
    if axis is None:
        return ravel(arr), 0
    return arr, normalize_axis(axis, arr.ndim)


def _host_indices(obj: Any, what: str) -> onp.ndarray:
    values = obj.asnumpy() if isinstance(obj, NDArray) else onp.asarray(obj)
    if values.dtype.kind not in "iu" and values.size:
        raise NumpyError(f"{what}: indices must be integers, got dtype {values.dtype}")
    if values.ndim > 1:
        raise NumpyError(f"{what}: indices must be a scalar or 1-d, got shape {values.shape}")
    return values.astype(onp.int64)


def _gather(a: ndarray, positions: onp.ndarray, axis: int) -> ndarray:
    """``a`` at ``positions`` along ``axis`` (empty positions give an empty result)."""
    if positions.size == 0:
        shape = list(a.shape)
        shape[axis] = 0
        return zeros_from(tuple(shape), a.dtype, a.context, a)
    from ._creation import array

    return wrap(nd.take(a, array(positions, dtype=onp.int64, ctx=a.context), axis=axis))


def _part(a: ndarray, axis: int, start: int | None, stop: int | None) -> ndarray:
    return a[(slice(None),) * axis + (slice(start, stop),)]


@use_np_shape
def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> ndarray:
    """``arr`` with ``values`` inserted before index (or indices, or slice) ``obj`` along
    ``axis`` (of the flattened ``arr`` when None).  ``values`` take ``arr``'s dtype and
    are broadcast to the inserted block; one index inserts all of ``values`` there (a
    scalar index puts values' first axis along ``axis``), several indices insert one
    element each."""
    arr = _array(arr)
    arr, axis = _flat_or_axis(arr, axis)
    size = arr.shape[axis]
    values = _array(values)
    if values.dtype != arr.dtype:
        values = values.astype(arr.dtype)
    if isinstance(obj, slice):
        indices = onp.arange(*obj.indices(size), dtype=onp.int64)
    else:
        indices = _host_indices(obj, "insert")
    if indices.size == 1:
        index = int(indices.reshape(-1)[0])
        if not -size <= index <= size:
            raise IndexError(f"insert: index {index} is out of bounds for axis {axis} with "
                             f"size {size}")
        index = index + size if index < 0 else index
        block = reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape) \
            if values.ndim < arr.ndim else values
        if indices.ndim == 0 and not isinstance(obj, slice):
            block = moveaxis(block, 0, axis)
        shape = list(arr.shape)
        shape[axis] = block.shape[axis]
        block = broadcast_to(block, shape)
        return concatenate([_part(arr, axis, None, index), block, _part(arr, axis, index, None)],
                           axis=axis)
    if ((indices < -size) | (indices > size)).any():
        raise IndexError(f"insert: an index of {indices.tolist()} is out of bounds for axis "
                         f"{axis} with size {size}")
    indices = onp.where(indices < 0, indices + size, indices)
    count = indices.size
    shape = list(arr.shape)
    shape[axis] = count
    block = broadcast_to(values, shape)
    # new position of the j-th inserted element: its index plus the elements inserted
    # before it (ties in index order)
    order = onp.argsort(indices, kind="stable")
    placed = indices.copy()
    placed[order] += onp.arange(count)
    source = onp.empty(size + count, onp.int64)
    kept = onp.ones(size + count, bool)
    kept[placed] = False
    source[kept] = onp.arange(size)
    source[placed] = size + onp.arange(count)
    return _gather(concatenate([arr, block], axis=axis), source, axis)


@use_np_shape
def delete(arr: Any, obj: Any, axis: int | None = None) -> ndarray:
    """``arr`` without the elements at index (or indices, or slice) ``obj`` along ``axis``
    (of the flattened ``arr`` when None).  A single int index must be in bounds; in an
    array of indices, as in MXNet, those out of ``[0, size)`` are ignored."""
    arr = _array(arr)
    arr, axis = _flat_or_axis(arr, axis)
    size = arr.shape[axis]
    if isinstance(obj, slice):
        drop = onp.arange(*obj.indices(size), dtype=onp.int64)
    elif isinstance(obj, (int, onp.integer)) and not isinstance(obj, (bool, onp.bool_)):
        index = int(obj)
        if not -size <= index < size:
            raise IndexError(f"delete: index {index} is out of bounds for axis {axis} with "
                             f"size {size}")
        index %= size
        return concatenate([_part(arr, axis, None, index), _part(arr, axis, index + 1, None)],
                           axis=axis)
    elif isinstance(obj, NDArray):
        drop = _host_indices(obj, "delete").reshape(-1)
        drop = drop[(drop >= 0) & (drop < size)]
    else:
        raise TypeError(f"delete: obj must be an int, a slice or an mx.np array of indices, "
                        f"got {type(obj).__name__}")
    keep = onp.ones(size, bool)
    keep[drop] = False
    if keep.all():
        return arr.copy()
    return _gather(arr, onp.flatnonzero(keep), axis)
