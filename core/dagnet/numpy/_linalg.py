"""Products of ``dagnet.numpy``: ``dot``, ``matmul`` (``@``), ``tensordot``, ``inner``
and ``outer``, with NumPy's rules for which axes contract, computed by the ``dot`` and
``batch_dot`` operators on reshaped views."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as onp

from .. import ndarray as nd
from .._errors import ShapeError
from ..ndarray import NDArray
from ._array import NumpyError, ndarray, wrap, zeros_from
from ._elementwise import as_operand, multiply, promote
from ._manipulation import broadcast_to, normalize_axis, reshape, transpose

__all__ = ["dot", "matmul", "tensordot", "inner", "outer", "vdot"]


def _pair(a: Any, b: Any) -> tuple[ndarray, ndarray]:
    from ._creation import array

    a, b = as_operand(a), as_operand(b)
    a = a if isinstance(a, NDArray) else array(a)
    b = b if isinstance(b, NDArray) else array(b)
    dtype = promote(a.dtype, b.dtype)
    return (a if a.dtype == dtype else a.astype(dtype),
            b if b.dtype == dtype else b.astype(dtype))


def _mm(a: ndarray, b: ndarray) -> ndarray:
    """``(n, k) x (k, m)`` with the ``dot`` operator."""
    if a.shape[1] != b.shape[0]:
        raise ShapeError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[1]} (dim 1) != "
                         f"{b.shape[0]} (dim 0)")
    if 0 in (a.shape[0], b.shape[1]) or a.shape[1] == 0:
        return zeros_from((a.shape[0], b.shape[1]), a.dtype, a.context, a, b)
    return wrap(nd.dot(a, b))


def tensordot(a: Any, b: Any, axes: int | Sequence[Any] = 2) -> ndarray:
    """The sum of products over the axes ``axes`` of ``a`` and ``b`` (an int: the last
    ``axes`` of ``a`` with the first of ``b``; or two sequences of axes)."""
    a, b = _pair(a, b)
    if isinstance(axes, (int, onp.integer)):
        n = int(axes)
        a_axes, b_axes = list(range(a.ndim - n, a.ndim)), list(range(n))
    else:
        a_axes, b_axes = axes
        a_axes = [a_axes] if isinstance(a_axes, (int, onp.integer)) else list(a_axes)
        b_axes = [b_axes] if isinstance(b_axes, (int, onp.integer)) else list(b_axes)
    a_axes = [normalize_axis(x, a.ndim) for x in a_axes]
    b_axes = [normalize_axis(x, b.ndim) for x in b_axes]
    if len(a_axes) != len(b_axes) or any(a.shape[i] != b.shape[j]
                                         for i, j in zip(a_axes, b_axes)):
        raise ShapeError(f"tensordot: shape mismatch for sum over axes {a_axes} of {a.shape} "
                         f"and {b_axes} of {b.shape}")
    a_free = [i for i in range(a.ndim) if i not in a_axes]
    b_free = [i for i in range(b.ndim) if i not in b_axes]
    inner = math.prod(a.shape[i] for i in a_axes)
    left = reshape(transpose(a, a_free + a_axes) if a.ndim > 1 else a,
                   (math.prod(a.shape[i] for i in a_free), inner))
    right = reshape(transpose(b, b_axes + b_free) if b.ndim > 1 else b,
                    (inner, math.prod(b.shape[i] for i in b_free)))
    shape = tuple(a.shape[i] for i in a_free) + tuple(b.shape[i] for i in b_free)
    return reshape(_mm(left, right), shape)


def dot(a: Any, b: Any, out: ndarray | None = None) -> ndarray:
    """NumPy's ``dot``: a product with a scalar, the inner product of vectors, the matrix
    product, or the sum over the last axis of ``a`` and the second-to-last of ``b``."""
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        result = multiply(a, b)
    elif b.ndim == 1:
        result = tensordot(a, b, ([a.ndim - 1], [0]))
    else:
        result = tensordot(a, b, ([a.ndim - 1], [b.ndim - 2]))
    if out is not None:
        out[...] = result
        return out
    return result


def matmul(a: Any, b: Any, out: ndarray | None = None) -> ndarray:
    """NumPy's ``matmul`` (``a @ b``): matrix products over the last two axes, the
    leading axes broadcast; a 1-d operand is a row (``a``) or column (``b``) vector."""
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise NumpyError("matmul: Input operand does not have enough dimensions (0-d arrays "
                         "cannot be multiplied as matrices; use multiply or *)")
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    left = reshape(a, (1, a.shape[0])) if a_vec else a
    right = reshape(b, (b.shape[0], 1)) if b_vec else b
    if left.shape[-1] != right.shape[-2]:
        raise ShapeError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {right.shape[-2]} is different from {left.shape[-1]})")
    if left.ndim == 2 and right.ndim == 2:
        result = _mm(left, right)
    else:
        try:
            batch = onp.broadcast_shapes(left.shape[:-2], right.shape[:-2])
        except ValueError:
            raise ShapeError(f"matmul: the leading (batch) axes of shapes {a.shape} and "
                             f"{b.shape} do not broadcast") from None
        n, k, m = left.shape[-2], left.shape[-1], right.shape[-1]
        count = math.prod(batch)
        lhs = reshape(broadcast_to(left, batch + (n, k)), (count, n, k))
        rhs = reshape(broadcast_to(right, batch + (k, m)), (count, k, m))
        if 0 in (count, n, m, k):
            product = zeros_from((count, n, m), lhs.dtype, lhs.context, lhs, rhs)
        else:
            product = wrap(nd.batch_dot(lhs, rhs))
        result = reshape(product, batch + (n, m))
    shape = result.shape
    if a_vec:
        shape = shape[:-2] + shape[-1:]
    if b_vec:
        shape = shape[:-1]
    result = reshape(result, shape) if shape != result.shape else result
    if out is not None:
        out[...] = result
        return out
    return result


def inner(a: Any, b: Any) -> ndarray:
    """The sum of products over the last axes of ``a`` and ``b``."""
    a, b = _pair(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return tensordot(a, b, ([a.ndim - 1], [b.ndim - 1]))


def outer(a: Any, b: Any) -> ndarray:
    """``a.ravel()[:, None] * b.ravel()[None, :]``."""
    a, b = _pair(a, b)
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def vdot(a: Any, b: Any) -> ndarray:
    """The dot product of the flattened ``a`` and ``b``."""
    a, b = _pair(a, b)
    return tensordot(reshape(a, (-1,)), reshape(b, (-1,)), 1)
