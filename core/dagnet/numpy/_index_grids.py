"""Index arrays, NumPy's way: ``indices`` (a grid of every index of a shape) and
``unravel_index`` (flat indices to one index array per dimension).  Indices carry no
gradient."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as onp

from .. import ndarray as nd
from ..util import use_np_shape
from ._array import NumpyError, OrderNotSupportedError, ndarray, wrap
from ._manipulation import _array

__all__ = ["indices", "unravel_index"]


@use_np_shape
def indices(dimensions: Sequence[int], dtype: Any = onp.int32, ctx: Any = None) -> ndarray:
    """The grid of indices of an array of shape ``dimensions``: shape
    ``(len(dimensions), *dimensions)``, ``out[i]`` holding each element's index along
    axis ``i`` (int32 unless ``dtype``)."""
    if not isinstance(dimensions, (tuple, list)):
        raise NumpyError(f"indices: dimensions must be a tuple of ints, got {dimensions!r}")
    from ._creation import array

    grid = onp.indices(tuple(int(d) for d in dimensions), dtype=onp.dtype(dtype or onp.int32))
    return array(grid, ctx=ctx)


@use_np_shape
def unravel_index(indices: Any, shape: int | Sequence[int],
                  order: str = "C") -> tuple[ndarray, ...]:
    """The multi-indices into an array of ``shape`` of the row-major flat ``indices``
    (integers; each result has their shape and dtype), one array per dimension.  The
    registered ``unravel_index`` operator computes them, so the indices are not read on
    the host and are not checked: one past the end gives a first index past the end."""
    if order != "C":
        raise OrderNotSupportedError(f"unravel_index: order={order!r} is not supported; "
                                     f"only 'C'")
    flat = _array(indices)
    if flat.dtype.kind not in "iu":
        raise NumpyError(f"unravel_index: indices must be integers, got dtype {flat.dtype}")
    dims = (int(shape),) if isinstance(shape, (int, onp.integer)) else tuple(int(d)
                                                                           for d in shape)
    rows = wrap(nd.unravel_index(flat if flat.ndim else flat.reshape(1), shape=dims))
    if flat.ndim == 0:
        return tuple(rows[i, 0] for i in range(len(dims)))
    return tuple(rows[i] for i in range(len(dims)))
