"""Diagonals and triangles, NumPy's way: ``diagonal``, ``diag``, ``diagflat``, ``trace``,
``tril`` and ``diag_indices_from``.

Diagonals are the registered ``diag`` operator (its gradient puts the head gradient back
on the diagonal); a diagonal that falls outside the matrices is an empty array that
still belongs to the input's graph.  ``tril`` selects with ``where`` against a mask made
by operators, so its gradient is the mask.
"""

from __future__ import annotations

from typing import Any

import numpy as onp

from .. import ndarray as nd
from ..util import use_np_shape
from ._array import NumpyError, ndarray, wrap, zeros_from
from ._elementwise import less_equal, subtract
from ._manipulation import _array, normalize_axis, ravel, reshape, where
from ._reductions import sum as _sum

__all__ = ["diagonal", "diag", "diagflat", "trace", "tril", "diag_indices_from"]


@use_np_shape
def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> ndarray:
    """The ``offset``-th diagonal of the matrices over axes ``axis1`` and ``axis2``: those
    two axes are dropped and the diagonal is the last axis (empty when ``offset`` falls
    outside the matrices).  Dtype of ``a``; the gradient is the head gradient put back on
    the diagonal."""
    a = _array(a)
    if a.ndim < 2:
        raise NumpyError(f"diagonal: the array must be at least 2-d, got shape {a.shape}")
    first = normalize_axis(axis1, a.ndim, "axis1")
    second = normalize_axis(axis2, a.ndim, "axis2")
    if first == second:
        raise NumpyError(f"diagonal: axis1 and axis2 cannot name the same axis ({first})")
    offset = int(offset)
    rows, cols = a.shape[first], a.shape[second]
    size = min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols)
    if size <= 0:
        rest = tuple(d for i, d in enumerate(a.shape) if i not in (first, second))
        return zeros_from(rest + (0,), a.dtype, a.context, a)
    return wrap(nd.diag(a, k=offset, axis1=first, axis2=second))


@use_np_shape
def diag(array: Any, k: int = 0) -> ndarray:  # noqa: A002 - MXNet's name
    """A 1-d ``array`` as a square matrix with it on diagonal ``k`` (zeros elsewhere), or
    the ``k``-th diagonal of a 2-d ``array``."""
    v = _array(array)
    if v.ndim == 1:
        return wrap(nd.diag(v, k=int(k)))
    if v.ndim == 2:
        return diagonal(v, k)
    raise NumpyError(f"diag: the input must be 1-d or 2-d, got shape {v.shape}")


@use_np_shape
def diagflat(array: Any, k: int = 0) -> ndarray:  # noqa: A002 - MXNet's name
    """A square matrix with the flattened ``array`` on diagonal ``k``."""
    return wrap(nd.diag(ravel(_array(array)), k=int(k)))


@use_np_shape
def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1,
          out: ndarray | None = None) -> ndarray:
    """The sum along the ``offset``-th diagonal over axes ``axis1`` and ``axis2`` (0 where
    the diagonal is empty), in ``a``'s dtype; the gradient is 1 on the diagonal."""
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, out=out)


@use_np_shape
def tril(m: Any, k: int = 0) -> ndarray:
    """``m`` with the elements above diagonal ``k`` of its last two axes zeroed; a 1-d
    ``m`` is taken as the rows of a square matrix (NumPy's rule)."""
    m = _array(m)
    if m.ndim < 1:
        raise NumpyError("tril: the input must have at least 1 dimension, got a 0-d array")
    rows, cols = m.shape[-2:] if m.ndim > 1 else (m.shape[0], m.shape[0])
    if not rows or not cols:
        return zeros_from(m.shape[:-2] + (rows, cols), m.dtype, m.context, m)
    # the mask col - row <= k from operators (no array of values, so mx.sym.np.tril
    # holds it too)
    row = reshape(wrap(nd._arange(start=0, stop=rows, dtype="int64", ctx=m.context)),
                  (rows, 1))
    col = wrap(nd._arange(start=0, stop=cols, dtype="int64", ctx=m.context))
    return where(less_equal(subtract(col, row), int(k)), m, wrap(nd.zeros_like(m)))


@use_np_shape
def diag_indices_from(arr: Any) -> tuple[ndarray, ...]:
    """The indices (int64) of the main diagonal of ``arr``, whose dimensions must all be
    equal and at least 2: one ``arange(n)`` per dimension."""
    arr = _array(arr)
    if arr.ndim < 2:
        raise NumpyError(f"diag_indices_from: the input must be at least 2-d, got shape "
                         f"{arr.shape}")
    if len(set(arr.shape)) != 1:
        raise NumpyError(f"diag_indices_from: all dimensions of the input must be of equal "
                         f"length, got shape {arr.shape}")
    from ._creation import arange

    return tuple(arange(arr.shape[0], dtype=onp.int64, ctx=arr.context)
                 for _ in range(arr.ndim))
