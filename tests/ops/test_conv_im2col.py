"""The blocked column-matrix convolution kernels (plugins/dagnet_ops/nn/_im2col.py).

Every layout the kernels pick (1x1 without copies, flat columns for stride 1, dense
columns for strides and dilations, the reversed-filter and the scatter paths of the
data gradient, one or many sample blocks) is checked against a direct sum over the
windows, and the gradients against the forward through the adjoint identities
``<conv(x), dy> = <x, dx> = <w, dw>``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dagnet
from dagnet_ops.nn import _im2col


def reference(x, w, stride, dilate, pad, groups):
    """The convolution summed window by window, in float64."""
    nd = x.ndim - 2
    x = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    n, c = x.shape[:2]
    f, kernel = w.shape[0], w.shape[2:]
    out = tuple(_im2col.window_count(s, k, st, d)
                for s, k, st, d in zip(x.shape[2:], kernel, stride, dilate))
    y = np.zeros((n, f) + out)
    cg, fg = c // groups, f // groups
    for o in range(f):
        g = o // fg
        for tap in itertools.product(*(range(k) for k in kernel)):
            window = (slice(None), slice(g * cg, (g + 1) * cg)) + tuple(
                slice(t * d, t * d + s * (m - 1) + 1, s)
                for t, d, s, m in zip(tap, dilate, stride, out))
            y[:, o] += np.einsum("nc...,c->n...", x[window], w[(o, slice(None)) + tap])
    assert y.ndim == nd + 2
    return y


CASES = [
    # (x shape, filters, kernel, stride, dilate, pad, groups): what each one reaches
    ((2, 4, 20, 20), 6, (1, 1), (1, 1), (1, 1), (0, 0), 1),  # 1x1, per-sample products
    ((2, 4, 20, 20), 6, (1, 1), (1, 1), (1, 1), (0, 0), 2),  # ... grouped
    ((2, 4, 5, 5), 6, (1, 1), (1, 1), (1, 1), (0, 0), 1),  # 1x1 on few positions: columns
    ((3, 4, 9, 9), 4, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # flat columns, reversed filters
    ((3, 2, 9, 9), 6, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # flat, scattered data gradient
    ((2, 2, 8, 8), 6, (5, 5), (1, 1), (1, 1), (0, 0), 1),  # dense forward, flat scatter (lenet)
    ((2, 4, 9, 8), 4, (3, 2), (1, 1), (2, 1), (2, 1), 2),  # flat, dilated, grouped
    ((2, 3, 9, 9), 4, (3, 3), (2, 2), (1, 1), (1, 1), 1),  # dense: stride 2
    ((2, 4, 8, 7), 6, (3, 3), (2, 1), (1, 2), (0, 1), 2),  # dense: mixed stride and dilation
    ((2, 4, 8, 8), 4, (1, 1), (2, 2), (1, 1), (0, 0), 1),  # 1x1 stride 2 (resnet shortcut)
    ((2, 4, 4, 4), 4, (3, 3), (1, 1), (1, 1), (1, 1), 1),  # small grid: dense at stride 1
    ((2, 3, 11), 4, (3,), (1,), (1,), (3,), 1),  # 1-D: pad beyond the reversed filter's reach
    ((2, 3, 11), 4, (3,), (2,), (2,), (1,), 1),  # 1-D, dense
    ((1, 2, 5, 5, 5), 4, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), 2),  # 3-D
    ((2, 2, 6, 5, 5), 2, (2, 3, 1), (2, 1, 1), (1, 1, 1), (1, 0, 0), 1),  # 3-D, dense
]


def _inputs(case, dtype=np.float64, seed=0):
    shape, f, kernel, *_, groups = case
    rs = np.random.RandomState(seed)
    x = rs.standard_normal(shape).astype(dtype)
    w = rs.standard_normal((f, shape[1] // groups) + kernel).astype(dtype)
    return x, w


@pytest.fixture(params=[(False, 1), (True, 1), (False, 2), (True, 3)],
                ids=["one-block", "block-per-sample", "2-threads", "3-threads-per-sample"])
def blocks(request, monkeypatch):
    per_sample, threads = request.param
    if per_sample:
        monkeypatch.setattr(_im2col, "BLOCK_BYTES", 1)
    with dagnet.config.set(cpu_kernel_threads=threads):
        yield request.param


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_forward_matches_the_window_sums(case, blocks):
    _, _, _, stride, dilate, pad, groups = case
    x, w = _inputs(case)
    got = _im2col.conv_forward(np, x, w, stride, dilate, pad, groups)
    np.testing.assert_allclose(got, reference(x, w, stride, dilate, pad, groups),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_gradients_are_the_adjoints_of_the_forward(case, blocks):
    _, _, _, stride, dilate, pad, groups = case
    x, w = _inputs(case)
    y = _im2col.conv_forward(np, x, w, stride, dilate, pad, groups)
    dy = np.random.RandomState(1).standard_normal(y.shape)
    dx = _im2col.conv_grad_data(np, dy, w, x.shape, stride, dilate, pad, groups)
    dw = _im2col.conv_grad_weight(np, x, dy, w.shape, stride, dilate, pad, groups)
    assert dx.shape == x.shape and dw.shape == w.shape
    inner = float((y * dy).sum())
    assert float((x * dx).sum()) == pytest.approx(inner, rel=1e-10, abs=1e-10)
    assert float((w * dw).sum()) == pytest.approx(inner, rel=1e-10, abs=1e-10)
    # and elementwise: the data gradient is linear in dy, so probe it with unit vectors
    probe = np.zeros_like(x)
    flat = probe.reshape(-1)
    for i in range(0, flat.size, max(1, flat.size // 7)):
        flat[:] = 0
        flat[i] = 1
        moved = _im2col.conv_forward(np, probe, w, stride, dilate, pad, groups)
        assert float((moved * dy).sum()) == pytest.approx(dx.reshape(-1)[i], abs=1e-10)


@pytest.mark.parametrize("case", [CASES[0], CASES[3], CASES[6]], ids=["1x1", "flat", "dense"])
def test_float32_within_1e4_of_float64(case):
    _, _, _, stride, dilate, pad, groups = case
    x, w = _inputs(case, np.float32)
    got = _im2col.conv_forward(np, x, w, stride, dilate, pad, groups)
    assert got.dtype == np.float32
    want = reference(x, w, stride, dilate, pad, groups)
    assert np.abs(got - want).max() <= 1e-4 * np.abs(want).max()


@pytest.mark.parametrize("stride,covered", [((2, 2), 9), ((1, 1), 6)])
def test_data_gradient_with_a_larger_input_than_the_windows_cover(stride, covered):
    # A transposed convolution's output may be taller than its windows reach (adj): the
    # positions no window covers get zero gradient.
    x_shape, w = (2, 4, 10, 10), np.random.RandomState(0).standard_normal((3, 4, 3, 3))
    dy = np.random.RandomState(1).standard_normal((2, 3, 4, 4))
    dx = _im2col.conv_grad_data(np, dy, w, x_shape, stride, (1, 1), (0, 0), 1)
    assert dx.shape == x_shape
    assert not dx[:, :, covered:].any() and not dx[:, :, :, covered:].any()
    part = np.ones(x_shape)[:, :, :covered, :covered]
    inner = float((_im2col.conv_forward(np, part, w, stride, (1, 1), (0, 0), 1) * dy).sum())
    assert float(dx.sum()) == pytest.approx(inner)


def test_blocks_cover_every_sample_once(monkeypatch):
    # a sample's flat columns: 4 channels x 9 taps x (9 rows x 11 padded columns) float64
    monkeypatch.setattr(_im2col, "BLOCK_BYTES", 3 * 4 * 9 * 99 * 8)  # three samples a block
    x, w = _inputs(CASES[3])
    x = np.concatenate([x, x + 1, x - 1])  # 9 samples: blocks of 3
    y = _im2col.conv_forward(np, x, w, (1, 1), (1, 1), (1, 1), 1)
    np.testing.assert_allclose(y, reference(x, w, (1, 1), (1, 1), (1, 1), 1), atol=1e-10)
    plan = _im2col._Columns(x.shape, w.shape[2:], (1, 1), (1, 1), (1, 1), 8)
    assert plan.flat and plan.blocks() == [(0, 3), (3, 6), (6, 9)]
