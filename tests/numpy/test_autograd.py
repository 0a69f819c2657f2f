"""Gradients through mx.np expressions against central differences, and the gradient
buffers are mx.np arrays."""

from __future__ import annotations

import numpy as onp

from dagnet import autograd, np


def _expression(x, w):
    h = np.tanh(x @ w)                      # matmul, tanh
    return (h * h + np.exp(-x[:, :1])).mean() + (w ** 2).sum() / 4 + x[1, 2] * 3


def _numeric_grad(f, value, eps=1e-3):
    grad = onp.zeros_like(value)
    for index in onp.ndindex(*value.shape):
        plus, minus = value.copy(), value.copy()
        plus[index] += eps
        minus[index] -= eps
        grad[index] = (f(plus) - f(minus)) / (2 * eps)
    return grad


def test_gradient_of_an_expression_matches_central_differences():
    rng = onp.random.default_rng(0)
    xv = rng.uniform(-1, 1, (3, 4)).astype(onp.float64)
    wv = rng.uniform(-1, 1, (4, 2)).astype(onp.float64)
    x, w = np.array(xv, dtype="float64"), np.array(wv, dtype="float64")
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = _expression(x, w)
    assert isinstance(y, np.ndarray) and y.shape == ()
    y.backward()
    assert isinstance(x.grad, np.ndarray) and x.grad.dtype == onp.float64

    def value(xh, wh):
        return _expression(np.array(xh, dtype="float64"), np.array(wh, dtype="float64")).item()

    onp.testing.assert_allclose(x.grad.asnumpy(), _numeric_grad(lambda v: value(v, wv), xv),
                                rtol=1e-4, atol=1e-6)
    onp.testing.assert_allclose(w.grad.asnumpy(), _numeric_grad(lambda v: value(xv, v), wv),
                                rtol=1e-4, atol=1e-6)


def test_gradient_through_reductions_and_reshapes():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    x.attach_grad()
    with autograd.record():
        y = np.sum(x.reshape(-1) * np.arange(4)) + x.max() + x.T[0, 1]
    y.backward()
    # arange weights, +1 at the max (x[1, 1]) and at x.T[0, 1], which is x[1, 0]
    assert x.grad.asnumpy().tolist() == [[0.0, 1.0], [2.0 + 1.0, 3.0 + 1.0]]
