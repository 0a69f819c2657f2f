"""BatchNorm's passes over ``(outer, C, inner)`` data, compiled with numba.

Each kernel walks the rows ``r0 <= r < r1`` of the data seen as ``outer * C`` rows of
``inner`` values (row ``r`` is sample block ``r // C``, channel ``r % C``), so callers
share rows out over threads; the kernels release the GIL.  Sums over a row are taken in
the data's type in blocks of :data:`BLOCK` values (slices: the compiler vectorizes a
loop over a slice, not one over an index range with a computed end) and the blocks added
in float64, into per-channel accumulators the caller gives (one set per thread, added up
afterwards).  Arrays are C-contiguous float32 or float64, and not empty.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["BLOCK", "channel_moments", "gradient_sums", "normalize", "input_gradient"]

BLOCK = 256
# reassociation lets the block sums vectorize and contraction fuses multiply-adds; NaN
# and infinity keep their IEEE meaning (no nnan / ninf)
_FAST = {"reassoc", "contract"}
_jit = njit(nogil=True, cache=True, fastmath=_FAST)


@_jit
def channel_moments(x3, r0, r1, sums, between, within):
    """Per-channel moments of the rows in ``[r0, r1)``, one trip through memory: each row
    is summed, then its squared deviations from its own mean summed while it is in cache.
    ``sums[c] += row.sum()``, ``between[c] += row.sum() * row.mean()`` and
    ``within[c] += ((row - m) ** 2).sum() - n * (row.mean() - m) ** 2``, ``m`` the row's
    mean rounded to the data's type; so ``sum((x - mean) ** 2) = within + between -
    count * mean ** 2`` per channel."""
    channels, inner = x3.shape[1], x3.shape[2]
    cast = np.zeros_like(x3[0, 0, :1])  # rounds to the data's type
    zero = cast[0]
    for r in range(r0, r1):
        c = r % channels
        row = x3[r // channels, c]
        total = 0.0
        for start in range(0, inner, BLOCK):
            block, part = row[start:start + BLOCK], zero
            for i in range(block.shape[0]):
                part += block[i]
            total += part
        mean = total / inner
        cast[0] = mean
        m = cast[0]
        squares = 0.0
        for start in range(0, inner, BLOCK):
            block, part = row[start:start + BLOCK], zero
            for i in range(block.shape[0]):
                d = block[i] - m
                part += d * d
            squares += part
        sums[c] += total
        between[c] += total * mean
        within[c] += squares - inner * (mean - m) * (mean - m)


@_jit
def gradient_sums(dy3, x3, mean, r0, r1, dy_sums, dyx_sums):
    """``dy_sums[c] += dy[n, c, :].sum()`` and
    ``dyx_sums[c] += (dy[n, c, :] * (x[n, c, :] - mean[c])).sum()`` for the rows in
    ``[r0, r1)``."""
    channels, inner = x3.shape[1], x3.shape[2]
    zero = np.zeros_like(mean[:1])[0]  # the block sums' type: the data's
    for r in range(r0, r1):
        n, c = r // channels, r % channels
        g, row, m = dy3[n, c], x3[n, c], mean[c]
        total, total_x = 0.0, 0.0
        for start in range(0, inner, BLOCK):
            g_block, x_block = g[start:start + BLOCK], row[start:start + BLOCK]
            part, part_x = zero, zero
            for i in range(g_block.shape[0]):
                part += g_block[i]
                part_x += g_block[i] * (x_block[i] - m)
            total += part
            total_x += part_x
        dy_sums[c] += total
        dyx_sums[c] += total_x


@_jit
def normalize(x3, mean, scale, offset, r0, r1, y3, accumulate):
    """``y[n, c, :] = (x[n, c, :] - mean[c]) * scale[c] + offset[c]`` (added to ``y`` when
    ``accumulate``) for the rows in ``[r0, r1)``; ``y`` may be ``x``."""
    channels, inner = x3.shape[1], x3.shape[2]
    for r in range(r0, r1):
        n, c = r // channels, r % channels
        row, out = x3[n, c], y3[n, c]
        m, a, b = mean[c], scale[c], offset[c]
        if accumulate:
            for i in range(inner):
                out[i] += (row[i] - m) * a + b
        else:
            for i in range(inner):
                out[i] = (row[i] - m) * a + b


@_jit
def input_gradient(dy3, x3, mean, dy_scale, x_scale, offset, r0, r1, dx3, accumulate):
    """``dx[n, c, :] = dy * dy_scale[c] + (x - mean[c]) * x_scale[c] + offset[c]`` (added to
    ``dx`` when ``accumulate``) for the rows in ``[r0, r1)``."""
    channels, inner = x3.shape[1], x3.shape[2]
    for r in range(r0, r1):
        n, c = r // channels, r % channels
        g, row, out = dy3[n, c], x3[n, c], dx3[n, c]
        m, a, b, k = mean[c], dy_scale[c], x_scale[c], offset[c]
        if accumulate:
            for i in range(inner):
                out[i] += g[i] * a + (row[i] - m) * b + k
        else:
            for i in range(inner):
                out[i] = g[i] * a + (row[i] - m) * b + k
