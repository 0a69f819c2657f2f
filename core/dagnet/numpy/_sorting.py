"""Sorting and searching in ``dagnet.numpy``: ``sort``, ``argsort``, ``unique``,
``nonzero``.

``sort`` and ``argsort`` are the registered ``sort``/``argsort`` operators (stable;
``kind`` is accepted and ignored, as MXNet does); ``sort`` is differentiable (the head
gradient goes back to each element's place), ``argsort`` gives int64 indices.
``unique`` and ``nonzero`` have outputs whose shape depends on the values: they compute
on the host (a hybridized block that calls them runs imperatively) and are not
differentiable.  Index outputs are int64, as in MXNet.
"""

from __future__ import annotations

from typing import Any

import numpy as onp

from .. import ndarray as nd
from ._array import NumpyError, OptionNotSupportedError, ndarray, wrap
from ._elementwise import require_array as _array
from ._manipulation import normalize_axis, ravel

__all__ = ["sort", "argsort", "unique", "nonzero"]

_INT64 = onp.dtype(onp.int64)


def _along(name: str, a: ndarray, axis: int | None, order: Any) -> tuple[ndarray, int]:
    """(the array to sort, its axis): flattened for ``axis=None``."""
    if order is not None:
        raise OptionNotSupportedError(f"{name}: order={order!r} is not supported (dagnet "
                                      f"arrays have no fields)")
    if axis is None:
        return ravel(a) if a.ndim != 1 else a, 0
    if a.ndim == 0:
        raise NumpyError(f"{name}: axis {axis} is out of bounds for a 0-d array; use "
                         f"axis=None")
    return a, normalize_axis(axis, a.ndim)


def sort(a: Any, axis: int | None = -1, kind: str | None = None,
         order: Any = None) -> ndarray:
    """A sorted copy of ``a`` along ``axis`` (the flattened array when None); stable
    whatever ``kind`` says.  Differentiable: the gradient goes back to each element's
    original place (the ``sort`` operator)."""
    source, axis = _along("sort", _array(a, "sort"), axis, order)
    return wrap(nd.invoke("sort", [source], {"axis": axis}))


def argsort(a: Any, axis: int | None = -1, kind: str | None = None,
            order: Any = None) -> ndarray:
    """The int64 indices that sort ``a`` along ``axis`` (of the flattened array when None);
    stable (the ``argsort`` operator)."""
    source, axis = _along("argsort", _array(a, "argsort"), axis, order)
    return wrap(nd.invoke("argsort", [source], {"axis": axis, "dtype": "int64"}))


def _host(values: onp.ndarray, dtype: Any, like: ndarray) -> ndarray:
    from ._creation import array

    return array(onp.asarray(values, dtype=dtype), ctx=like.context)


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None) -> Any:
    """The sorted unique elements of ``ar`` (of the flattened array, or the unique slices
    along ``axis``), with, as asked, the index of each one's first occurrence, the indices
    rebuilding ``ar`` from them (1-d, as MXNet and NumPy 1.x give) and their counts, all
    int64.  Computed on the host: not differentiable."""
    ar = _array(ar, "unique")
    host = ar.asnumpy()
    if axis is not None:
        if host.ndim == 0:
            raise NumpyError("unique: a 0-d array has no axis; use axis=None")
        axis = normalize_axis(axis, host.ndim)
    results = onp.unique(host, True, True, True, axis=axis)
    values, index, inverse, counts = results
    outputs = [_host(values, host.dtype, ar)]
    if return_index:
        outputs.append(_host(index, _INT64, ar))
    if return_inverse:
        outputs.append(_host(inverse.reshape(-1), _INT64, ar))
    if return_counts:
        outputs.append(_host(counts, _INT64, ar))
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _nonzero_host(a: ndarray) -> onp.ndarray:
    """The (count, ndim) int64 indices of the non-zero elements (a 0-d array is one)."""
    host = a.asnumpy()
    if host.ndim == 0:
        return onp.zeros((int(host != 0), 1), _INT64)
    return onp.argwhere(host).astype(_INT64)


def nonzero(a: Any) -> tuple[ndarray, ...]:
    """The indices of the non-zero elements of ``a``: one int64 array per dimension (a 0-d
    array counts as 1-d).  Computed on the host."""
    a = _array(a, "nonzero")
    rows = _nonzero_host(a)
    return tuple(_host(onp.ascontiguousarray(rows[:, i]), _INT64, a)
                 for i in range(rows.shape[1]))
