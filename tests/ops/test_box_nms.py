"""_contrib_box_nms against a plain greedy suppression written independently here (the
conformance suite's reference is the kernel's own function), for class-aware and forced
suppression, topk, background and formats; and a size GluonCV's detectors reach."""

from __future__ import annotations

import time

import numpy as np
import pytest

import dagnet as mx


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
