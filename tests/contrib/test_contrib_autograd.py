"""mx.contrib.autograd: MXNet's first autograd interface on top of dagnet.autograd."""

import numpy as np
import pytest

import dagnet as mx
from dagnet.contrib import autograd as cag


def test_train_section_records_and_trains_then_restores():
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    with cag.train_section():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        with cag.test_section():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
        assert mx.autograd.is_recording()
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()


def test_mark_variables_and_compute_gradient():
    x = mx.nd.array([1.0, 2.0, 3.0])
    dx = mx.nd.zeros(3)
    cag.mark_variables([x], [dx])
    with cag.train_section():
        y = (x * x).sum()
    cag.compute_gradient([y])
    np.testing.assert_allclose(dx.asnumpy(), [2.0, 4.0, 6.0])


def test_backward_with_head_gradients():
    x = mx.nd.array([1.0, 2.0])
    dx = mx.nd.zeros(2)
    cag.mark_variables([x], [dx])
    with cag.train_section():
        y = x * 3
    cag.backward([y], [mx.nd.array([1.0, 10.0])])
    np.testing.assert_allclose(dx.asnumpy(), [3.0, 30.0])
    with pytest.raises(TypeError, match="list or tuple"):
        cag.backward(y)


def test_grad_and_loss_by_argnum():
    def f(a, b):
        return a * b + a

    a, b = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    grads, loss = cag.grad_and_loss(f)(a, b)
    np.testing.assert_allclose(grads[0].asnumpy(), [4.0, 5.0])
    np.testing.assert_allclose(grads[1].asnumpy(), [1.0, 2.0])
    np.testing.assert_allclose(loss.asnumpy(), [4.0, 10.0])
    only_b = cag.grad(f, argnum=1)(a, b)
    assert len(only_b) == 1
    np.testing.assert_allclose(only_b[0].asnumpy(), [1.0, 2.0])
    with pytest.raises(TypeError, match="argument 1"):
        cag.grad(f)(a, 2.0)
