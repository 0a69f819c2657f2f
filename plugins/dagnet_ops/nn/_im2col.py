"""Sliding windows over the spatial axes of ``(N, C, *spatial)`` arrays, for any number
of spatial dimensions, written against ``xp`` (numpy and cupy both have
``lib.stride_tricks.as_strided``).

:func:`windows` is im2col as a strided view; :func:`scatter_windows` is its adjoint
(col2im, summing overlaps), taking the kernel axes first.  Convolution is a matrix
product of the windows with the filters per group, and its two gradients follow from
the same pieces; the transposed convolution (``Deconvolution``) reuses them with roles
exchanged.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

__all__ = [
    "pad_spatial", "windows", "scatter_windows", "kernel_first", "window_count",
    "conv_forward", "conv_grad_data", "conv_grad_weight",
]


def window_count(size: int, kernel: int, stride: int, dilate: int = 1) -> int:
    """How many windows fit along an axis of ``size`` (already padded)."""
    return (size - dilate * (kernel - 1) - 1) // stride + 1


def pad_spatial(xp: Any, x: Any, before: Sequence[int], after: Sequence[int],
                value: float = 0) -> Any:
    """``x`` padded on its spatial axes (all but the first two) with ``value``."""
    if not any(before) and not any(after):
        return x
    widths = [(0, 0), (0, 0)] + [(int(b), int(a)) for b, a in zip(before, after)]
    return xp.pad(x, widths, mode="constant", constant_values=value)


def windows(xp: Any, x: Any, kernel: Sequence[int], stride: Sequence[int],
            dilate: Sequence[int]) -> Any:
    """A read-only view ``(N, C, *out, *kernel)`` of the windows of ``x`` ``(N, C, *spatial)``."""
    x = xp.ascontiguousarray(x)
    nd = len(kernel)
    spatial = x.shape[2:]
    out = tuple(window_count(spatial[i], kernel[i], stride[i], dilate[i]) for i in range(nd))
    strides = x.strides[:2] + tuple(x.strides[2 + i] * stride[i] for i in range(nd)) \
        + tuple(x.strides[2 + i] * dilate[i] for i in range(nd))
    shape = x.shape[:2] + out + tuple(kernel)
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)


def scatter_windows(xp: Any, cols: Any, spatial: Sequence[int], stride: Sequence[int],
                    dilate: Sequence[int]) -> Any:
    """The adjoint of :func:`windows`, kernel axes first: ``cols`` ``(*kernel, N, C, *out)``
    summed back into a new ``(N, C, *spatial)`` array (one strided add per kernel offset,
    each reading a contiguous block)."""
    nd = len(spatial)
    kernel, lead, out = cols.shape[:nd], cols.shape[nd:nd + 2], cols.shape[nd + 2:]
    result = xp.zeros(tuple(lead) + tuple(spatial), dtype=cols.dtype)
    for offset in itertools.product(*(range(k) for k in kernel)):
        target = (slice(None), slice(None)) + tuple(
            slice(o * d, o * d + s * (n - 1) + 1, s)
            for o, d, s, n in zip(offset, dilate, stride, out))
        result[target] += cols[offset]
    return result


def kernel_first(cols: Any, nd: int) -> Any:
    """``(N, C, *out, *kernel)`` viewed as ``(*kernel, N, C, *out)``."""
    return cols.transpose(tuple(range(2 + nd, 2 + 2 * nd)) + (0, 1) + tuple(range(2, 2 + nd)))


# Convolution works on "columns" of shape (groups, C/groups * prod(kernel), N * prod(out)): one
# row per filter tap, one column per output position.  Every product below is a 2-D matrix
# product per group, in the orientations BLAS handles fastest.
def _per_group(xp, groups, product):
    return product(0)[None] if groups == 1 else xp.stack([product(g) for g in range(groups)])


def _columns(xp, x, kernel, stride, dilate, pad, groups):
    nd = len(kernel)
    cols = windows(xp, pad_spatial(xp, x, pad, pad), kernel, stride, dilate)  # (N, C, *out, *K)
    n, c = x.shape[:2]
    out = cols.shape[2:2 + nd]
    order = (1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,) + tuple(range(2, 2 + nd))
    matrix = xp.ascontiguousarray(cols.transpose(order))  # (C, *K, N, *out)
    return matrix.reshape(groups, -1, n * math.prod(out)), out


def _out_grad_matrix(xp, dy, groups):
    """``dy`` ``(N, F, *out)`` as ``(groups, F/groups, N*prod(out))``."""
    f = dy.shape[1]
    return xp.ascontiguousarray(dy.swapaxes(0, 1)).reshape(groups, f // groups, -1)


def conv_forward(xp, x, w, stride, dilate, pad, groups):
    """Cross-correlation of ``x`` ``(N, C, *S)`` with filters ``w`` ``(F, C/groups, *K)``:
    ``(N, F, *out)``."""
    cols, out = _columns(xp, x, w.shape[2:], stride, dilate, pad, groups)
    filters = w.reshape(groups, w.shape[0] // groups, -1)
    y = _per_group(xp, groups, lambda g: filters[g] @ cols[g])  # (G, F/G, N*P)
    return y.reshape((w.shape[0], x.shape[0]) + tuple(out)).swapaxes(0, 1)


def conv_grad_weight(xp, x, dy, w_shape, stride, dilate, pad, groups):
    """The gradient of :func:`conv_forward` with respect to the filters."""
    cols, _ = _columns(xp, x, w_shape[2:], stride, dilate, pad, groups)
    dym = _out_grad_matrix(xp, dy, groups)
    return _per_group(xp, groups, lambda g: (cols[g] @ dym[g].T).T).reshape(w_shape)


def conv_grad_data(xp, dy, w, x_shape, stride, dilate, pad, groups):
    """The gradient of :func:`conv_forward` with respect to its input of shape ``x_shape``
    (also the transposed convolution of ``dy`` with ``w``)."""
    nd = w.ndim - 2
    n, c = x_shape[:2]
    kernel, out = tuple(w.shape[2:]), tuple(dy.shape[2:])
    filters = w.reshape(groups, w.shape[0] // groups, -1)
    dym = _out_grad_matrix(xp, dy, groups)
    cols = _per_group(xp, groups, lambda g: filters[g].T @ dym[g])  # (G, C/G*prod(K), N*P)
    cols = cols.reshape((c,) + kernel + (n,) + out)
    cols = cols.transpose(tuple(range(1, 1 + nd)) + (nd + 1, 0) + tuple(range(nd + 2, 2 * nd + 2)))
    padded = tuple(s + 2 * p for s, p in zip(x_shape[2:], pad))
    grad = scatter_windows(xp, cols, padded, stride, dilate)
    crop = tuple(slice(p, p + s) for p, s in zip(pad, x_shape[2:]))
    return grad[(slice(None), slice(None), *crop)]
