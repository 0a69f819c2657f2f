"""``make_loss``: the output is the input; the gradient is 1 whatever the head gradient,
imperatively and in a bound symbol."""

from __future__ import annotations

import numpy as np

import dagnet as mx


def test_make_loss_gradient_is_one():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.make_loss(x * 3)
    y.backward(mx.nd.array([5.0, 5.0]))
    np.testing.assert_array_equal(y.asnumpy(), [3.0, 6.0])
    np.testing.assert_array_equal(x.grad.asnumpy(), [3.0, 3.0])


def test_make_loss_is_a_loss_head_for_the_executor():
    sym = mx.sym.make_loss(mx.sym.var("a") * 2)
    exe = sym.simple_bind(mx.cpu(), a=(2,))
    exe.forward(is_train=True, a=mx.nd.array([4.0, 5.0]))
    exe.backward()
    np.testing.assert_array_equal(exe.grad_dict["a"].asnumpy(), [2.0, 2.0])
