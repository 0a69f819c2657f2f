"""Differentiable forms of the NDArray methods that make views or copies without an
operator (``x[key]``, ``reshape``, ``copy``, ``astype``).

Outside a graph those methods share memory or push a plain copy.  For an array
in a live graph, while recording, they go through registered operators
instead (``slice`` + ``Reshape``, ``take``, ``gather_nd``, ``_copy``,
``Cast``), so the result is recorded and gradients flow back, as in MXNet; an
index mixing integer arrays with slices or integers takes the flat positions
numpy selects.  Not differentiable: copies to another device (the copy is out of
the graph).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import ndarray as nd
from ..ndarray import NDArray, invoke, is_basic_key
from ..util import np_shape

__all__ = ["getitem", "reshape", "copy", "astype"]


def getitem(array: NDArray, key: Any) -> NDArray:
    """``array[key]`` through operators; the same shape and values as the view would have."""
    if is_basic_key(key):
        return _basic(array, key)
    return _advanced(array, key)


def _basic(array: NDArray, key: Any) -> NDArray:
    shape = array._view(key)._shape  # the result's shape, by the non-recorded rules
    items = key if isinstance(key, tuple) else (key,)
    real = sum(1 for item in items if item is not None and item is not Ellipsis)
    begin, end, step = [], [], []
    axis = 0
    for item in items:
        if item is None:
            continue
        if item is Ellipsis:
            count = array.ndim - real
            begin += [None] * count
            end += [None] * count
            step += [None] * count
            axis += count
            continue
        dim = array._shape[axis]
        if isinstance(item, slice):
            start, stop, stride = item.indices(dim)
            begin.append(start)
            end.append(stop if stop >= 0 else None)  # a negative step running past index 0
            step.append(stride)
        else:
            index = operator.index(item)
            index = index + dim if index < 0 else index
            begin.append(index)
            end.append(index + 1)
            step.append(1)
        axis += 1
    result = array
    if any(b not in (None, 0) for b in begin) or any(s not in (None, 1) for s in step) or any(
            e is not None and e != array._shape[i] for i, e in enumerate(end)):
        result = invoke("slice", [array], {"begin": tuple(begin), "end": tuple(end),
                                                   "step": tuple(step)})
    if result._shape != shape:
        result = _reshape(result, shape)
    if result is array:  # x[:] and the like: a new array, as the view would be
        result = invoke("_copy", [array])
    return result


def _advanced(array: NDArray, key: Any) -> NDArray:
    items = key if isinstance(key, tuple) else (key,)
    if not all(isinstance(item, (NDArray, list, np.ndarray)) for item in items):
        return _mixed(array, items)
    host = [item.asnumpy() if isinstance(item, NDArray) else np.asarray(item) for item in items]
    host = [np.asarray(h, dtype=np.int64) for h in host]
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), array._shape,
                                            (0,) * array.ndim)
    probe[tuple(host)]  # raises IndexError as numpy would
    ctx = array.context
    if len(host) == 1:
        indices = nd.array(host[0] % array._shape[0], ctx=ctx, dtype=np.int64)
        return invoke("take", [array, indices], {"axis": 0})
    stacked = np.stack([h % array._shape[i] for i, h in enumerate(np.broadcast_arrays(*host))])
    indices = nd.array(stacked, ctx=ctx, dtype=np.int64)
    return invoke("gather_nd", [array, indices])


def _mixed(array: NDArray, items: tuple) -> NDArray:
    """Integer arrays mixed with slices, integers, None or Ellipsis: numpy decides which
    flat positions the index selects, in the result's shape, and ``take`` picks them
    from the flattened array (its gradient scatters back)."""
    host = tuple(np.asarray(item.asnumpy(), dtype=np.int64) if isinstance(item, NDArray)
                 else np.asarray(item) if isinstance(item, list) else item for item in items)
    positions = np.arange(array.size, dtype=np.int64).reshape(array._shape)[host]
    flat = invoke("Reshape", [array], {"shape": (-1,)})
    indices = nd.array(positions, ctx=array.context, dtype=np.int64)
    return invoke("take", [flat, indices], {"axis": 0})


def reshape(array: NDArray, shape: tuple[int, ...]) -> NDArray:
    """``array.reshape(shape)`` (an inferred, explicit shape) through ``Reshape``."""
    return _reshape(array, shape)


def _reshape(array: NDArray, shape: tuple[int, ...]) -> NDArray:
    """``Reshape`` to an explicit shape; one with a 0 (a zero-size array, under NumPy shape
    semantics; ``Reshape`` reads 0 as "keep this dimension") through ``reshape_like``."""
    if 0 not in shape:
        return invoke("Reshape", [array], {"shape": shape})
    with np_shape(True):
        template = nd.zeros(shape, ctx=array.context, dtype=array.dtype)
    return invoke("reshape_like", [array, template])


def copy(array: NDArray, out: NDArray | None = None) -> NDArray:
    """A copy on the same device through ``_copy`` (into ``out`` when given)."""
    return invoke("_copy", [array], out=out)


def astype(array: NDArray, dtype: np.dtype) -> NDArray:
    """A converted copy through ``Cast``."""
    return invoke("Cast", [array], {"dtype": dtype.name})
