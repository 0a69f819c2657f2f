"""GluonCV's vision families through ONNX: the graphs GluonCV builds for detection (SSD
and YOLOv3 with box decoding and non-maximum suppression, CenterNet), segmentation
(Fast-SCNN) and pose estimation (data/gluoncv, made by GluonCV on MXNet) load in
dagnet, export, and ONNX Runtime gives dagnet's outputs.  Weights are drawn at random;
small inputs keep the suite fast."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

import dagnet as mx

DATA = Path(__file__).parent / "data" / "gluoncv"

MODELS = [  # (name, input size, detection output: ids, scores, boxes)
    ("ssd_300_mobilenet0.25_voc", 128, True),
    ("yolo3_mobilenet0.25_voc", 128, True),
    ("center_net_mobilenetv3_small_duc_voc", 128, True),
    ("fastscnn_citys", 256, False),
    ("mobile_pose_mobilenetv3_small", 128, False),
]

# Layers whose random weights are scaled down, as training leaves them: CenterNet's
# heatmap logits would otherwise saturate its sigmoid, every score 1.0 and the top-k
# order all ties.
DAMPED = {"center_net_mobilenetv3_small_duc_voc": ("centernet0_conv1_", 0.03)}


def _random_params(sym, data_shape, damped=None):
    arg_shapes, _, aux_shapes = sym.infer_shape(data=data_shape)
    rng = np.random.default_rng(1)

    def draw(shape):
        # He's scale for weights keeps logits, and so scores, spread out (unit-scale
        # logits tie less); vectors (biases, BatchNorm's scale and shift) near 1
        if len(shape) < 2:
            return rng.uniform(0.5, 1.5, shape)
        return rng.normal(0, np.sqrt(2.0 / np.prod(shape[1:])), shape)

    params = {name: mx.nd.array(draw(shape).astype(np.float32))
              for name, shape in zip(sym.list_arguments(), arg_shapes) if name != "data"}
    # running statistics and scales away from 0 keep the activations at a useful scale
    params.update({name: mx.nd.array(rng.uniform(0.5, 1.5, shape).astype(np.float32))
                   for name, shape in zip(sym.list_auxiliary_states(), aux_shapes)})
    if damped is not None:
        prefix, scale = damped
        params.update({name: value * scale for name, value in params.items()
                       if name.startswith(prefix)})
    return params


def _unique_scores(scores: np.ndarray) -> np.ndarray:
    """Rows whose score no other row shares: where ties (random weights give many) may
    order detections either way, only these rows have one right answer."""
    flat = scores.reshape(scores.shape[0], -1)
    close = np.abs(flat[:, :, None] - flat[:, None, :]) < 1e-4
    return close.sum(axis=-1) == 1


@pytest.mark.parametrize("name, size, detection", MODELS, ids=[m[0] for m in MODELS])
def test_gluoncv_graph_exports_and_runs(name, size, detection, run_onnx):
    sym = mx.sym.load_json(gzip.decompress((DATA / f"{name}-symbol.json.gz").read_bytes())
                           .decode())
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, size, size)).astype(np.float32)
    params = _random_params(sym, x.shape, DAMPED.get(name))
    args = {k: v for k, v in params.items() if k in sym.list_arguments()}
    aux = {k: v for k, v in params.items() if k in sym.list_auxiliary_states()}
    expected = [o.asnumpy() for o in sym.bind(mx.cpu(), {"data": mx.nd.array(x), **args},
                                              aux_states=aux).forward()]
    got = run_onnx(mx.onnx.export_to_proto(sym, params, [x.shape]), x)
    assert [g.shape for g in got] == [e.shape for e in expected]
    if not detection:
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-4 * np.abs(e).max())
        return
    ids, scores, boxes = expected
    assert (ids >= 0).any(), "the model detects something: the comparison means something"
    # the same scores, in the same order; tied rows may hold their detections either way
    np.testing.assert_allclose(got[1], scores, rtol=1e-4, atol=1e-6)
    unique = _unique_scores(scores)
    assert unique.sum() >= 10
    np.testing.assert_array_equal(got[0][unique], ids[unique])
    np.testing.assert_allclose(got[2][unique], boxes[unique], rtol=1e-4,
                               atol=1e-4 * np.abs(boxes).max())
