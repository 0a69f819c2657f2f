"""The AdamW updates (``_adamw_update`` and its mixed-precision and multi-weight forms,
plugins/dagnet_ops/optimizer/adamw.py) through ``mx.nd.contrib``'s wrappers.

The expected figures are MXNet 1.9.1's, from the same calls on the arrays below."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.testing.op_suite import check_operator


@pytest.mark.parametrize("name", ["_adamw_update", "_mp_adamw_update", "_multi_adamw_update",
                                  "_multi_mp_adamw_update"])
def test_conforms(name):
    check_operator(name, backends=["cpu"], engines=["naive"], max_examples=20)


def test_adamw_step_matches_mxnet_and_decouples_weight_decay():
    w, g = mx.nd.array([1, 2]), mx.nd.array([0.5, 0.5])
    mean, var = mx.nd.zeros(2), mx.nd.zeros(2)
    out = mx.nd.contrib.adamw_update(w, g, mean, var, rescale_grad=2.0, lr=0.1, eta=0.5,
                                     wd=0.1)
    np.testing.assert_allclose(out.asnumpy(), [0.79188514, 1.7418852], rtol=1e-5)
    np.testing.assert_allclose(mean.asnumpy(), [0.1, 0.1], rtol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), [0.001, 0.001], rtol=1e-5)
    np.testing.assert_array_equal(w.asnumpy(), [1, 2])  # no out=: the weight is kept


@pytest.mark.parametrize("scale", [0.0, np.nan, np.inf])
def test_a_scale_that_is_not_finite_or_zero_skips_the_update(scale):
    w, mean, var = mx.nd.array([1, 2]), mx.nd.ones(2), mx.nd.ones(2)
    out = mx.nd.contrib.adamw_update(w, mx.nd.ones(2), mean, var,
                                     rescale_grad=mx.nd.array([scale]), lr=0.1, eta=1.0)
    np.testing.assert_array_equal(out.asnumpy(), [1, 2])
    np.testing.assert_array_equal(mean.asnumpy(), [1, 1])
    np.testing.assert_array_equal(var.asnumpy(), [1, 1])


def test_mixed_precision_updates_the_float32_master_copy():
    w = mx.nd.array([1, -2, 0.5], dtype="float16")
    g = mx.nd.array([0.5, -4, 2], dtype="float16")
    mean, var = mx.nd.array([0.1, 0.2, -0.3]), mx.nd.array([0.01, 0.2, 0.3])
    w32 = mx.nd.array([1, -2, 0.5])
    mx.nd.contrib.mp_adamw_update(w, g, mean, var, w32, rescale_grad=0.5, lr=0.1, eta=0.5,
                                  wd=0.2, clip_gradient=0.6, out=w)
    assert w.dtype == np.float16
    np.testing.assert_allclose(w32.asnumpy(), [0.84265035, -1.813411, 0.46916837], rtol=1e-6)
    np.testing.assert_allclose(w.asnumpy(), [0.843, -1.813, 0.4692], rtol=1e-3)
    np.testing.assert_allclose(mean.asnumpy(), [0.115, 0.12, -0.21], rtol=1e-6)
    np.testing.assert_allclose(var.asnumpy(), [0.0100525, 0.20016, 0.30006], rtol=1e-6)


def test_dtype_rules_name_the_wrong_input():
    w16 = mx.nd.ones(2, dtype="float16")
    with pytest.raises(mx.DTypeError, match="do not match"):  # moments follow the weight
        mx.nd.contrib.adamw_update(w16, w16, mx.nd.zeros(2), mx.nd.zeros(2), 1.0, lr=0.1,
                                   eta=1.0)
    with pytest.raises(mx.DTypeError, match="must be float32"):
        mx.nd.contrib.mp_adamw_update(w16, w16, mx.nd.zeros(2, dtype="float16"),
                                      mx.nd.zeros(2), mx.nd.zeros(2), 1.0, lr=0.1, eta=1.0)


def test_multi_weight_update_matches_mxnet():
    ws = [mx.nd.array([1, -2]), mx.nd.array([3.0])]
    gs = [mx.nd.array([0.5, -4]), mx.nd.array([2.0])]
    ms = [mx.nd.array([0.1, 0.2]), mx.nd.array([-0.3])]
    vs = [mx.nd.array([0.01, 0.2]), mx.nd.array([0.3])]
    mx.nd.contrib.multi_adamw_update(ws, gs, ms, vs, rescale_grad=mx.nd.array([2.0]),
                                     lrs=[0.1, 0.01], wds=[0.0, 0.1], etas=[1.0, 0.5],
                                     beta1=0.8, out=ws)
    want = [[0.7329086, -1.719635], [2.8450167], [0.28, -1.44], [0.56],
            [0.01098996, 0.26380157], [0.31569958]]
    for got, expected in zip(ws + ms + vs, want):
        np.testing.assert_allclose(got.asnumpy(), expected, rtol=1e-5)


def test_multi_weight_update_needs_one_rate_per_weight():
    ws = [mx.nd.ones(2), mx.nd.ones(1)]
    with pytest.raises(mx.ShapeError, match="one per weight"):
        mx.nd.contrib.multi_adamw_update(ws, ws, ws, ws, 1.0, lrs=[0.1], wds=[0, 0],
                                         etas=[1, 1])


def test_multi_mixed_precision_equals_one_weight_at_a_time():
    rng = np.random.default_rng(0)
    shapes = [(3,), (2, 2)]
    def arrays():
        return ([mx.nd.array(rng.uniform(size=s), dtype="float16") for s in shapes],
                [mx.nd.array(rng.uniform(size=s), dtype="float16") for s in shapes])
    ws, gs = arrays()
    ms = [mx.nd.zeros(s) for s in shapes]
    vs = [mx.nd.zeros(s) for s in shapes]
    w32 = [w.astype("float32") for w in ws]
    single = [(w.copy(), g, m.copy(), v.copy(), c.copy()) for w, g, m, v, c in
              zip(ws, gs, ms, vs, w32)]
    mx.nd.contrib.multi_mp_adamw_update(ws, gs, ms, vs, w32, 0.5, lrs=[0.1, 0.2],
                                        wds=[0.01, 0.0], etas=[1.0, 0.5], out=ws)
    for (w, g, m, v, c), lr, wd, eta, got in zip(single, [0.1, 0.2], [0.01, 0.0], [1.0, 0.5],
                                                 w32):
        mx.nd.contrib.mp_adamw_update(w, g, m, v, c, 0.5, lr=lr, wd=wd, eta=eta, out=w)
        np.testing.assert_allclose(c.asnumpy(), got.asnumpy(), rtol=1e-6)
