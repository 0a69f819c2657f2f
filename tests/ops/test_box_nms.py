"""_contrib_box_nms against a plain greedy suppression written independently here (the
conformance suite's reference is the kernel's own function), for class-aware and forced
suppression, topk, background and formats; and a size GluonCV's detectors reach."""

from __future__ import annotations

import time

import numpy as np
import pytest

import dagnet
import dagnet as mx
from dagnet_ops import _jit


def _iou(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if inter > 0 else 0.0


def _greedy(rows, thresh, valid, topk, by_class, background):
    order = [i for i in range(len(rows)) if rows[i][1] > valid
             and not (by_class is not None and rows[i][0] == background)]
    order.sort(key=lambda i: -rows[i][1])
    if topk > 0:
        order = order[:topk]
    kept = []
    for i in order:
        if all(not ((by_class is None or by_class == "force" or rows[i][0] == rows[j][0])
                    and _iou(rows[j][2:], rows[i][2:]) > thresh) for j in kept):
            kept.append(i)
    out = np.full_like(rows, -1.0)
    out[:len(kept)] = rows[kept]
    return out


@pytest.mark.parametrize("seed", range(20))
def test_box_nms_is_greedy_suppression(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    xy = rng.uniform(0, 5, (n, 2))
    rows = np.concatenate([rng.integers(0, 3, (n, 1)), np.round(rng.uniform(0, 1, (n, 1)), 1),
                           xy, xy + rng.uniform(0.5, 3, (n, 2))], axis=1)
    thresh, topk = float(rng.uniform(0.2, 0.8)), int(rng.choice([-1, 4]))
    mode = rng.choice(["none", "class", "force"])
    kwargs = {"overlap_thresh": thresh, "valid_thresh": 0.1, "topk": topk}
    if mode != "none":
        kwargs.update(id_index=0, background_id=0, force_suppress=mode == "force")
    got = mx.nd.contrib.box_nms(mx.nd.array(rows[None], dtype="float64"), **kwargs)
    want = _greedy(rows, thresh, 0.1, topk, None if mode == "none" else mode, 0)
    np.testing.assert_array_equal(got.asnumpy()[0], want)


def test_box_nms_center_format_out():
    rows = np.array([[0, 0.9, 1, 1, 2, 2], [0, 0.8, 1.1, 1.1, 2, 2], [0, 0.7, 5, 5, 1, 1]])
    got = mx.nd.contrib.box_nms(mx.nd.array(rows), overlap_thresh=0.5, in_format="center",
                                out_format="corner").asnumpy()
    np.testing.assert_allclose(got[:2, 2:], [[0, 0, 2, 2], [4.5, 4.5, 5.5, 5.5]])
    assert (got[2] == -1).all()


def test_thousands_of_proposals_take_well_under_a_minute():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 500, (1, 6000, 2))
    rows = np.concatenate([np.zeros((1, 6000, 1)), rng.uniform(0, 1, (1, 6000, 1)), xy,
                           xy + rng.uniform(5, 100, (1, 6000, 2))], axis=-1)
    start = time.monotonic()
    mx.nd.contrib.box_nms(mx.nd.array(rows), overlap_thresh=0.7).wait_to_read()
    assert time.monotonic() - start < 30  # one IoU at a time took minutes


_needs_numba = pytest.mark.skipif(
    _jit.kernels("nms") is None, reason=f"numba kernels are off: {_jit.unavailable_reason('nms')}")


@_needs_numba
@pytest.mark.parametrize("seed", range(12))
def test_compiled_suppression_keeps_what_the_numpy_one_keeps(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    # a coarse grid, so that equal boxes, equal scores and IoU exactly at the threshold occur
    xy = rng.integers(0, 8, (n, 2)).astype(float)
    rows = np.concatenate([rng.integers(0, 3, (n, 1)), rng.integers(0, 5, (n, 1)) / 4, xy,
                           xy + rng.integers(0, 4, (n, 2))], axis=1)
    if seed % 3 == 0:
        rows[rng.integers(0, n, 3), 2 + int(rng.integers(0, 4))] = np.nan
    kwargs = {"overlap_thresh": float(rng.choice([-0.1, 0.0, 0.25, 0.5, 1 / 3])),
              "valid_thresh": 0.0, "topk": int(rng.choice([-1, 50])),
              "in_format": str(rng.choice(["corner", "center"]))}
    if seed % 2:
        kwargs.update(id_index=0, background_id=2, force_suppress=bool(seed % 4 == 1))
    data = mx.nd.array(rows[None], dtype="float64")
    with dagnet.config.set(cpu_jit=True):
        compiled = mx.nd.contrib.box_nms(data, **kwargs).asnumpy()
    with dagnet.config.set(cpu_jit=False):
        vectorized = mx.nd.contrib.box_nms(data, **kwargs).asnumpy()
    np.testing.assert_array_equal(compiled, vectorized)


def test_box_nms_runs_without_numba(hide_numba):
    hide_numba("nms")
    assert _jit.kernels("nms") is None and "numba" in _jit.unavailable_reason("nms")
    rows = np.array([[0, 0.9, 0, 0, 2, 2], [0, 0.8, 0, 0, 2, 1.9], [0, 0.7, 5, 5, 6, 6]])
    got = mx.nd.contrib.box_nms(mx.nd.array(rows), overlap_thresh=0.5).asnumpy()
    np.testing.assert_allclose(got[:2], rows[[0, 2]], rtol=1e-6)
    assert (got[2] == -1).all()
