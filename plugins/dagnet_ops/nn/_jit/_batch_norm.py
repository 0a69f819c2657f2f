"""BatchNorm's passes over ``(outer, C, inner)`` data, compiled with numba.

Each kernel walks the rows ``r0 <= r < r1`` of the data seen as ``outer * C`` rows of
``inner`` values (row ``r`` is sample block ``r // C``, channel ``r % C``), so callers
share rows out over threads; the kernels release the GIL.  Sums over a row are taken in
the data's type in blocks of :data:`BLOCK` values (slices: the compiler vectorizes a
loop over a slice, not one over an index range with a computed end) and the blocks added
in float64, into per-channel accumulators the caller gives (one set
per thread, added up afterwards).  Arrays are C-contiguous float32 or float64; ``zero``
is a zero of the data's type (it fixes the block sums' type).
"""

from __future__ import annotations

from numba import njit

__all__ = ["BLOCK", "channel_sums", "centered_squares", "gradient_sums", "normalize",
           "input_gradient"]

BLOCK = 256
# reassociation lets the block sums vectorize and contraction fuses multiply-adds; NaN
# and infinity keep their IEEE meaning (no nnan / ninf)
_FAST = {"reassoc", "contract"}
_jit = njit(nogil=True, cache=True, fastmath=_FAST)


@_jit
def channel_sums(x3, zero, r0, r1, sums):
    """``sums[c] += x[n, c, :].sum()`` for the rows in ``[r0, r1)``."""
    channels, inner = x3.shape[1], x3.shape[2]
    for r in range(r0, r1):
        c = r % channels
        row = x3[r // channels, c]
        total = 0.0
        for start in range(0, inner, BLOCK):
            block, part = row[start:start + BLOCK], zero
            for i in range(block.shape[0]):
                part += block[i]
            total += part
        sums[c] += total


@_jit
def centered_squares(x3, mean, zero, r0, r1, sums):
    """``sums[c] += ((x[n, c, :] - mean[c]) ** 2).sum()`` for the rows in ``[r0, r1)``."""
    channels, inner = x3.shape[1], x3.shape[2]
    for r in range(r0, r1):
        c = r % channels
        row, m = x3[r // channels, c], mean[c]
        total = 0.0
        for start in range(0, inner, BLOCK):
            block, part = row[start:start + BLOCK], zero
            for i in range(block.shape[0]):
                d = block[i] - m
                part += d * d
            total += part
        sums[c] += total


@_jit
def gradient_sums(dy3, x3, mean, zero, r0, r1, dy_sums, dyx_sums):
    """``dy_sums[c] += dy[n, c, :].sum()`` and
    ``dyx_sums[c] += (dy[n, c, :] * (x[n, c, :] - mean[c])).sum()`` for the rows in
    ``[r0, r1)``."""
    channels, inner = x3.shape[1], x3.shape[2]
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
