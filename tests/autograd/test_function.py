"""``autograd.Function``: hand-written gradients inside a recorded graph (MXNet 1.x)."""

from __future__ import annotations

import numpy as np
import pytest

from dagnet import autograd, nd


class Sigmoid(autograd.Function):
    """The example of MXNet's documentation."""

    def forward(self, x):
        y = 1 / (1 + nd.exp(-x))
        self.save_for_backward(y)
        self.modes = (autograd.is_recording(), autograd.is_training())
        return y

    def backward(self, dy):
        (y,) = self.saved_tensors
        self.backward_recording = autograd.is_recording()
        return dy * y * (1 - y)


class ProductAndSum(autograd.Function):
    """Two inputs, two outputs: (a * b, a + b)."""

    def forward(self, a, b):
        self.save_for_backward(a, b)
        return a * b, a + b

    def backward(self, d_product, d_sum):
        a, b = self.saved_tensors
        return d_product * b + d_sum, d_product * a + d_sum


def _variable(values, grad_req="write"):
    array = nd.array(values, dtype=np.float64)
    array.attach_grad(grad_req)
    return array


def test_the_documented_sigmoid(engine):
    x = _variable([0.0, 1.0, -2.0])
    f = Sigmoid()
    with autograd.record():
        y = f(x)
    y.backward()
    s = 1 / (1 + np.exp(-np.array([0.0, 1.0, -2.0])))
    np.testing.assert_allclose(x.grad.asnumpy(), s * (1 - s), rtol=1e-12)
    assert f.modes == (False, True)  # forward runs unrecorded, in the record's train mode
    assert f.backward_recording is False


def test_a_function_between_recorded_operators(engine):
    xv = np.array([0.5, -1.0, 2.0])
    x, w = _variable(xv), _variable([2.0], "add")
    for _ in range(2):
        with autograd.record():
            product, total = ProductAndSum()(nd.exp(x), nd.broadcast_to(w, shape=(3,)))
            loss = (product * 3 + total * total).sum()
        loss.backward()
    e = np.exp(xv)
    d_product, d_sum = 3.0, 2 * (e + 2.0)
    np.testing.assert_allclose(x.grad.asnumpy(), (d_product * 2.0 + d_sum) * e, rtol=1e-12)
    np.testing.assert_allclose(w.grad.asnumpy(), [2 * (d_product * e + d_sum).sum()], rtol=1e-12)


def test_outside_record_it_is_just_its_forward():
    x = nd.array([1.0, 2.0])
    np.testing.assert_allclose(Sigmoid()(x).asnumpy(), 1 / (1 + np.exp(-np.array([1.0, 2.0]))),
                               rtol=1e-6)


def test_misuse_is_explained():
    x = _variable([1.0])
    f = Sigmoid()
    with autograd.record():
        f(x)
    with pytest.raises(autograd.AutogradError, match="called once"):
        f(x)

    class TooMany(autograd.Function):
        def forward(self, x):
            return x * 2

        def backward(self, dy):
            return dy, dy

    with autograd.record():
        y = TooMany()(x)
    with pytest.raises(autograd.AutogradError, match="returned 2 gradient"):
        y.backward()

    class Identity(autograd.Function):
        def forward(self, x):
            return x

    with autograd.record(), pytest.raises(autograd.AutogradError, match="new array"):
        Identity()(x)
