"""Autograd's backward pass goes to the engine in bulks of ``exec_bulk_size`` backward
operators (MXNet bulks its backward pass too)."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet
import dagnet as mx
from dagnet import autograd
from dagnet.operator import XP, Gradient, Op, assign, elemwise_shape


def _chain(x):
    y = x * 2
    for fn in (mx.nd.exp, mx.nd.sin, mx.nd.tanh, mx.nd.sigmoid):
        y = fn(y)
    return y + x  # x is read twice: its two gradient parts are summed


@pytest.mark.parametrize("bulk, bulks", [(15, 1), (4, 2), (1, 6)])
def test_backward_operators_are_pushed_in_bulks(naive_pushes, bulk, bulks):
    x = mx.nd.array([0.1, 0.2, 0.3])
    x.attach_grad()
    with mx.config.set(exec_bulk_size=bulk):
        with autograd.record():
            y = _chain(x)
        naive_pushes.clear()
        y.backward()
    pushed = [name for name, _, _ in naive_pushes]
    # the head gradient (ones), six backward operators in bulks, x's two parts summed
    assert len(pushed) == 1 + bulks + 1, pushed
    assert pushed[0] == "_set_value" and pushed[-1] == "_grad_add"
    if bulk == 15:
        assert pushed[1].endswith("(6 operators)")


def test_bulked_and_unbulked_backward_agree(engine_name):
    data = np.linspace(-1, 1, 12).reshape(3, 4)
    grads = []
    for bulk in (1, 3, 15):
        x = mx.nd.array(data)
        x.attach_grad()
        with mx.config.set(exec_bulk_size=bulk):
            with autograd.record():
                y = _chain(x)
            y.backward()
        grads.append(x.grad.asnumpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)
    np.testing.assert_allclose(grads[0], grads[2], rtol=1e-6)


def _broken_gradient_ops():
    def forward(attrs, ctx, inputs, req, outputs):
        assign(outputs[0], req[0], inputs[0] * 3)

    def backward(attrs, ctx, inputs, req, outputs):
        raise ValueError("broken gradient kernel")

    return (Op("_triple", input_names=["data"], infer_shape=elemwise_shape("_triple"),
               compute={XP: forward}, gradient=Gradient("_backward_triple")),
            Op("_backward_triple", input_names=["out_grad"],
               infer_shape=elemwise_shape("_backward_triple"), compute={XP: backward}))


def test_a_failing_backward_operator_is_named(engine_name, register):
    register(*_broken_gradient_ops())
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.exp(mx.nd._triple(x))
    y.backward()
    with pytest.raises(dagnet.OperatorFailedError) as caught:
        x.grad.asnumpy()
    original = caught.value.original
    assert isinstance(original, ValueError)
    assert "raised by operator '_backward_triple'" in original.__notes__
