"""Sliding windows over the spatial axes of ``(N, C, *spatial)`` arrays, for any number
of spatial dimensions, written against ``xp`` (numpy or cupy), and convolution as
matrix products of those windows.

Convolution runs on column matrices ``(C * prod(kernel), n * L)``: one row per input
channel and filter tap, one column per output position of a block of ``n`` samples
(blocks keep the matrices around :data:`BLOCK_BYTES`, so they stay in cache and
their memory is reused).  With ``config cpu_kernel_threads`` above 1 the blocks
are shared out over that many threads (numpy and BLAS release the GIL), each
block computed whole by one thread, so no thread waits on another mid-product.
Each product is one large matrix product per group.  Two ways to lay the columns out:

- *flat* (stride 1): the padded input is flattened per channel, and the tap at
  offset ``o`` of every output position is the contiguous run ``flat[o : o + L]``,
  so a tap's rows are copied as long contiguous runs.  Output positions then follow
  the padded grid: the few columns past each row's last output are computed and
  dropped.
- *dense*: one column per output position, each tap a strided view of the input.

:func:`windows`, :func:`scatter_windows` and :func:`kernel_first` give the windows as a
strided view and its adjoint, for pooling.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from ._common import each, sample_spans, threads_for

__all__ = [
    "pad_spatial", "windows", "scatter_windows", "kernel_first", "window_count",
    "conv_forward", "conv_grad_data", "conv_grad_weight", "BLOCK_BYTES",
]

#: the size a block of column matrices aims at: a few samples' columns at a time
BLOCK_BYTES = 8 << 20
# The flat layout is used while its dropped columns cost at most this fraction more (the
# scattered data gradient gains more from contiguous runs: a higher bound).
_FLAT_OVERHEAD = 1.25
_SCATTER_FLAT_OVERHEAD = 2.0
# A 1x1 convolution's per-sample matrix product needs no copy when outputs are this many.
_POINTWISE_MIN = 256


def window_count(size: int, kernel: int, stride: int, dilate: int = 1) -> int:
    """How many windows fit along an axis of ``size`` (already padded)."""
    return (size - dilate * (kernel - 1) - 1) // stride + 1


def pad_spatial(xp: Any, x: Any, before: Sequence[int], after: Sequence[int],
                value: float = 0) -> Any:
    """``x`` padded on its spatial axes (all but the first two) with ``value``."""
    if not any(before) and not any(after):
        return x
    shape = x.shape[:2] + tuple(s + int(b) + int(a) for s, b, a in zip(x.shape[2:], before, after))
    out = xp.full(shape, value, dtype=x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(int(b), int(b) + s)
                                           for b, s in zip(before, x.shape[2:]))] = x
    return out


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


def _tap_slices(offset, dilate, stride, out):
    """The input positions (per spatial axis) the tap at ``offset`` reads for every output."""
    return tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                 for o, d, s, n in zip(offset, dilate, stride, out))


def scatter_windows(xp: Any, cols: Any, spatial: Sequence[int], stride: Sequence[int],
                    dilate: Sequence[int]) -> Any:
    """The adjoint of :func:`windows`, kernel axes first: ``cols`` ``(*kernel, N, C, *out)``
    summed back into a new ``(N, C, *spatial)`` array (one strided add per kernel offset,
    each reading a contiguous block)."""
    nd = len(spatial)
    kernel, lead, out = cols.shape[:nd], cols.shape[nd:nd + 2], cols.shape[nd + 2:]
    result = xp.zeros(tuple(lead) + tuple(spatial), dtype=cols.dtype)
    for offset in itertools.product(*(range(k) for k in kernel)):
        target = (slice(None), slice(None)) + _tap_slices(offset, dilate, stride, out)
        result[target] += cols[offset]
    return result


def kernel_first(cols: Any, nd: int) -> Any:
    """``(N, C, *out, *kernel)`` viewed as ``(*kernel, N, C, *out)``."""
    return cols.transpose(tuple(range(2 + nd, 2 + 2 * nd)) + (0, 1) + tuple(range(2, 2 + nd)))


class _Columns:
    """How the input of a convolution becomes column matrices, a block of samples at a time."""

    def __init__(self, x_shape, kernel, stride, dilate, pad, itemsize, flat=True, threads=1,
                 out=None, overhead=None):
        self.n, self.c = int(x_shape[0]), int(x_shape[1])
        self.sizes = tuple(int(s) for s in x_shape[2:])
        self.kernel, self.stride = tuple(kernel), tuple(stride)
        self.dilate, self.pad = tuple(dilate), tuple(pad)
        self.padded = tuple(s + 2 * p for s, p in zip(self.sizes, self.pad))
        self.out = tuple(window_count(s, k, st, d) for s, k, st, d in
                         zip(self.padded, self.kernel, self.stride, self.dilate))
        if out is not None and tuple(out) != self.out:  # fewer windows than fit (adj): dense
            self.out, flat = tuple(out), False
        self.taps = list(itertools.product(*(range(k) for k in self.kernel)))
        inner = math.prod(self.padded[1:]) / max(1, math.prod(self.out[1:]))
        bound = _FLAT_OVERHEAD if overhead is None else overhead
        self.flat = flat and all(s == 1 for s in self.stride) and inner <= bound
        if self.flat:
            steps = [math.prod(self.padded[d + 1:]) for d in range(len(self.padded))]
            self.offsets = [sum(k * d * st for k, d, st in zip(tap, self.dilate, steps))
                            for tap in self.taps]
            self.grid = (self.out[0],) + self.padded[1:]  # output positions, dropped ones too
            self.length = math.prod(self.grid)
            self.total = max(math.prod(self.padded), max(self.offsets) + self.length)
        else:
            self.grid = self.out
            self.length = math.prod(self.out)
        per_sample = max(1, self.c * len(self.taps) * self.length * itemsize)
        self.block = max(1, min(self.n, BLOCK_BYTES // per_sample, -(-self.n // threads)))
        self.threads = threads

    def blocks(self):
        """``(start, stop)`` of each block of samples."""
        return [(a, min(a + self.block, self.n)) for a in range(0, self.n, self.block)]

    def _inside(self):
        return tuple(slice(p, p + s) for p, s in zip(self.pad, self.sizes))

    def matrix(self, xp, x):
        """The columns ``(C * prod(kernel), n * L)`` of the samples ``x`` ``(n, C, *spatial)``."""
        n, c = x.shape[:2]
        cols = xp.empty((c, len(self.taps), n, self.length), dtype=x.dtype)
        if self.flat:
            buf = xp.zeros((n, c, self.total), dtype=x.dtype)
            grid = buf[:, :, :math.prod(self.padded)].reshape((n, c) + self.padded)
            grid[(slice(None), slice(None)) + self._inside()] = x
            source = buf.transpose(1, 0, 2)
            for t, offset in enumerate(self.offsets):
                cols[:, t] = source[:, :, offset:offset + self.length]
        else:
            if any(self.pad):
                padded = xp.zeros((n, c) + self.padded, dtype=x.dtype)
                padded[(slice(None), slice(None)) + self._inside()] = x
            else:
                padded = x
            source = padded.swapaxes(0, 1)
            view = cols.reshape((c, len(self.taps), n) + self.out)
            for t, tap in enumerate(self.taps):
                view[:, t] = source[(slice(None), slice(None))
                                    + _tap_slices(tap, self.dilate, self.stride, self.out)]
        return cols.reshape(c * len(self.taps), n * self.length)

    def to_outputs(self, ymat, n):
        """Output columns ``(F, n * L)`` as the view ``(n, F, *out)``."""
        f = ymat.shape[0]
        view = ymat.reshape((f, n) + self.grid)
        if self.flat:
            view = view[(slice(None),) * 3 + tuple(slice(0, o) for o in self.out[1:])]
        return view.swapaxes(0, 1)

    def from_outputs(self, xp, dy):
        """Output gradients ``(n, F, *out)`` as columns ``(F, n * L)`` (zero on dropped ones)."""
        n, f = dy.shape[:2]
        if self.flat and self.grid != self.out:
            mat = xp.zeros((f, n) + self.grid, dtype=dy.dtype)
            mat[(slice(None),) * 3 + tuple(slice(0, o) for o in self.out[1:])] = dy.swapaxes(0, 1)
        else:
            mat = xp.ascontiguousarray(dy.swapaxes(0, 1))
        return mat.reshape(f, n * self.length)


def _pointwise(kernel, stride, pad, positions):
    return all(k == 1 for k in kernel) and all(s == 1 for s in stride) and not any(pad) \
        and positions >= _POINTWISE_MIN


def _result(xp, out, shape, dtype):
    """``out`` when it can take the result as it is (C-contiguous, of ``shape`` and
    ``dtype``, not overlapping the inputs), else a new array."""
    if out is not None and tuple(out.shape) == tuple(shape) and out.dtype == dtype and \
            out.flags.c_contiguous:
        return out
    return xp.empty(shape, dtype=dtype)


def conv_forward(xp, x, w, stride, dilate, pad, groups, out=None):
    """Cross-correlation of ``x`` ``(N, C, *S)`` with filters ``w`` ``(F, C/groups, *K)``:
    ``(N, F, *out)``, written into ``out`` when given and it fits (it must not overlap
    ``x``)."""
    n, f = x.shape[0], w.shape[0]
    filters = w.reshape(groups, f // groups, -1)
    positions = math.prod(x.shape[2:])
    threads = threads_for(xp)
    dtype = xp.result_type(x, w)
    if _pointwise(w.shape[2:], stride, pad, positions):  # one product per sample, no copies
        xs = x.reshape(n, groups, -1, positions)
        y = _result(xp, out, (n, f) + tuple(x.shape[2:]), dtype)
        ys = y.reshape(n, groups, f // groups, positions)
        each(lambda span: xp.matmul(filters, xs[span[0]:span[1]], out=ys[span[0]:span[1]]),
              sample_spans(n, threads), threads)
        return y
    plan = _Columns(x.shape, w.shape[2:], stride, dilate, pad, x.dtype.itemsize, threads=threads)
    y = _result(xp, out, (n, f) + plan.out, dtype)

    def block(span):
        a, b = span
        cols = plan.matrix(xp, x[a:b]).reshape(groups, -1, (b - a) * plan.length)
        y[a:b] = plan.to_outputs(xp.matmul(filters, cols).reshape(f, -1), b - a)

    each(block, plan.blocks(), threads)
    return y


def _sum(parts):
    total = parts[0]
    for part in parts[1:]:
        total += part
    return total


def conv_grad_weight(xp, x, dy, w_shape, stride, dilate, pad, groups):
    """The gradient of :func:`conv_forward` with respect to the filters."""
    n, f = x.shape[0], w_shape[0]
    positions = math.prod(x.shape[2:])
    threads = threads_for(xp)
    if _pointwise(w_shape[2:], stride, pad, positions):
        xs = x.reshape(n, groups, -1, positions)
        dys = dy.reshape(n, groups, f // groups, positions)

        def samples(span):
            dw = xp.matmul(dys[span[0]], xs[span[0]].swapaxes(1, 2))
            for i in range(span[0] + 1, span[1]):
                dw += xp.matmul(dys[i], xs[i].swapaxes(1, 2))
            return dw

        return _sum(each(samples, sample_spans(n, threads), threads)).reshape(w_shape)
    plan = _Columns(x.shape, w_shape[2:], stride, dilate, pad, x.dtype.itemsize, threads=threads)

    def block(span):
        a, b = span
        cols = plan.matrix(xp, x[a:b]).reshape(groups, -1, (b - a) * plan.length)
        dym = plan.from_outputs(xp, dy[a:b]).reshape(groups, f // groups, -1)
        return xp.matmul(dym, cols.swapaxes(1, 2))

    # Each thread adds up its own blocks; the threads' sums are added at the end.
    chunks = [plan.blocks()[i::threads] for i in range(min(threads, len(plan.blocks())))]
    parts = each(lambda spans: _sum([block(span) for span in spans]), chunks, threads)
    return _sum(parts).reshape(w_shape)


def _flipped(xp, w, groups):
    """Filters ``(F, C/g, *K)`` as those of the transposed convolution: ``(C, F/g, *K)``,
    each kernel reversed along every spatial axis."""
    f, cg = w.shape[:2]
    kernel = tuple(w.shape[2:])
    grouped = w.reshape((groups, f // groups, cg) + kernel).swapaxes(1, 2)
    reverse = grouped[(slice(None),) * 3 + (slice(None, None, -1),) * len(kernel)]
    return xp.ascontiguousarray(reverse).reshape((groups * cg, f // groups) + kernel)


def conv_grad_data(xp, dy, w, x_shape, stride, dilate, pad, groups, out=None):
    """The gradient of :func:`conv_forward` with respect to its input of shape ``x_shape``
    (also the transposed convolution of ``dy`` with ``w``), written into ``out`` when given
    and it fits (it must not overlap ``dy``)."""
    n, c = int(x_shape[0]), int(x_shape[1])
    f = w.shape[0]
    result = out
    kernel, out, sizes = tuple(w.shape[2:]), tuple(dy.shape[2:]), tuple(x_shape[2:])
    filters_t = w.reshape(groups, f // groups, -1).swapaxes(1, 2)  # (G, C/G * prod(K), F/G)
    positions = math.prod(out)
    threads = threads_for(xp)
    if _pointwise(kernel, stride, pad, positions) and out == sizes:
        dys = dy.reshape(n, groups, f // groups, positions)
        dx = _result(xp, result, tuple(x_shape), xp.result_type(dy, w))
        dxs = dx.reshape(n, groups, c // groups, positions)
        each(lambda span: xp.matmul(filters_t, dys[span[0]:span[1]], out=dxs[span[0]:span[1]]),
              sample_spans(n, threads), threads)
        return dx
    reach = tuple(d * (k - 1) for d, k in zip(dilate, kernel))
    if all(s == 1 for s in stride) and all(p <= r for p, r in zip(pad, reach)) and \
            2 * c >= f and out == tuple(s + 2 * p - r for s, p, r in zip(sizes, pad, reach)):
        # A full correlation of dy with the reversed filters: columns copied, not scattered.
        return conv_forward(xp, dy, _flipped(xp, w, groups), stride, dilate,
                            tuple(r - p for r, p in zip(reach, pad)), groups, result)
    dtype = xp.result_type(dy, w)
    plan = _Columns(x_shape, kernel, stride, dilate, pad, dy.dtype.itemsize, threads=threads,
                    out=out, overhead=_SCATTER_FLAT_OVERHEAD)
    if plan.flat:
        # The columns scatter back as contiguous runs of the flattened padded gradient (the
        # dropped positions of dy are zero, so what they add is zero).
        dx = _result(xp, result, tuple(x_shape), dtype)

        def block(span):
            a, b = span
            dym = plan.from_outputs(xp, dy[a:b]).reshape(groups, f // groups, -1)
            cols = xp.matmul(filters_t, dym).reshape(c, len(plan.taps), b - a, plan.length)
            flat = xp.zeros((c, b - a, plan.total), dtype=dtype)
            for t, offset in enumerate(plan.offsets):
                flat[:, :, offset:offset + plan.length] += cols[:, t]
            grid = flat[:, :, :math.prod(plan.padded)].reshape((c, b - a) + plan.padded)
            dx[a:b] = grid[(slice(None), slice(None)) + plan._inside()].swapaxes(0, 1)

        each(block, plan.blocks(), threads)
        return dx
    padded = xp.zeros((n, c) + plan.padded, dtype=dtype)

    def block(span):
        a, b = span
        dym = plan.from_outputs(xp, dy[a:b]).reshape(groups, f // groups, -1)
        cols = xp.matmul(filters_t, dym).reshape((c, len(plan.taps), b - a) + out)
        target = padded[a:b].swapaxes(0, 1)
        for t, tap in enumerate(plan.taps):
            target[(slice(None), slice(None)) + _tap_slices(tap, dilate, stride, out)] += cols[:, t]

    each(block, plan.blocks(), threads)
    return padded[(slice(None), slice(None)) + plan._inside()]
