"""``LayerNorm`` against MXNet 1.9.1 semantics: per-sample statistics along ``axis``,
gamma and beta along it, gradients of all three inputs."""

from __future__ import annotations

import numpy as np

import dagnet as mx


def test_layer_norm_values_and_gradients():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(2, 3, 4)).astype(np.float32)
    gamma, beta = rng.uniform(size=3).astype(np.float32), rng.uniform(size=3).astype(np.float32)
    data, g = mx.nd.array(x), mx.nd.array(gamma)
    data.attach_grad()
    g.attach_grad()
    with mx.autograd.record():
        y = mx.nd.LayerNorm(data, g, mx.nd.array(beta), axis=1, eps=1e-5)
        loss = (y * y).sum()
    loss.backward()
    mean = x.mean(axis=1, keepdims=True)
    std = np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    xhat = (x - mean) / std
    expected = xhat * gamma[None, :, None] + beta[None, :, None]
    np.testing.assert_allclose(y.asnumpy(), expected, rtol=1e-5, atol=1e-6)
    dy = 2 * expected
    np.testing.assert_allclose(g.grad.asnumpy(), (dy * xhat).sum(axis=(0, 2)), rtol=1e-4)
    dxhat = dy * gamma[None, :, None]
    dx = (dxhat - dxhat.mean(axis=1, keepdims=True)
          - xhat * (dxhat * xhat).mean(axis=1, keepdims=True)) / std
    np.testing.assert_allclose(data.grad.asnumpy(), dx, rtol=1e-4, atol=1e-5)


def test_layer_norm_statistics_outputs_and_shape_inference():
    out, mean, std = mx.nd.LayerNorm(mx.nd.ones((2, 5)), mx.nd.ones(5), mx.nd.zeros(5),
                                     output_mean_var=True)
    assert mean.shape == (2, 1) and std.shape == (2, 1)
    sym = mx.sym.LayerNorm(mx.sym.var("data"), name="ln")
    args, outs, _ = sym.infer_shape(data=(4, 7))
    assert args == [(4, 7), (7,), (7,)] and outs == [(4, 7)]
