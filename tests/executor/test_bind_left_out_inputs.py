"""An input left out with None (Convolution(x, w, None, no_bias=True)), and the names and
head gradients bind and backward accept beyond the symbol's, as MXNet does."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def test_none_input_then_bind_dicts_naming_it():
    x, w = mx.sym.var("x"), mx.sym.var("w")
    conv = mx.sym.Convolution(x, w, None, num_filter=2, kernel=(3, 3), no_bias=True)
    assert conv.list_arguments() == ["x", "w"]
    args = {"x": mx.nd.ones((1, 1, 5, 5)), "w": mx.nd.ones((2, 1, 3, 3)), "b": None}
    grads = {"x": mx.nd.zeros((1, 1, 5, 5)), "w": mx.nd.zeros((2, 1, 3, 3)), "b": None}
    ex = conv.bind(mx.cpu(), args, args_grad=grads,
                   grad_req={"x": "write", "w": "add", "b": "write"})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((1, 2, 3, 3)))
    np.testing.assert_allclose(ex.grad_dict["w"].asnumpy(), np.full((2, 1, 3, 3), 9.0))
    # an array under a name the symbol lacks is ignored, as MXNet ...
    ex = conv.bind(mx.cpu(), {**args, "b": mx.nd.ones((2,))},
                   args_grad={**grads, "b": mx.nd.zeros((2,))})
    assert sorted(ex.arg_dict) == ["w", "x"] and sorted(ex.grad_dict) == ["w", "x"]
    # ... unless an argument is missing: then it is named as a likely misspelling
    with pytest.raises(mx.base.MXNetError, match="lacks 'w'.*'weight'.*misspelt"):
        conv.bind(mx.cpu(), {"x": args["x"], "weight": mx.nd.ones((2, 1, 3, 3))})


def test_none_for_an_input_the_operator_has_makes_a_variable():
    x, w = mx.sym.var("x"), mx.sym.var("w")
    conv = mx.sym.Convolution(x, w, None, num_filter=2, kernel=(3, 3), name="c")
    assert conv.list_arguments() == ["x", "w", "c_bias"]


def test_backward_ignores_head_gradients_past_the_last_output():
    # as MXNet: one list of head gradients may serve graphs with and without some outputs
    x = mx.sym.var("x")
    ex = (x * 2).bind(mx.cpu(), {"x": mx.nd.ones(2)}, args_grad={"x": mx.nd.zeros(2)})
    ex.forward(is_train=True)
    ex.backward([mx.nd.array([1.0, 3.0]), mx.nd.ones((5,))])
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), [2.0, 6.0])
    two = mx.sym.Group([x * 2, x * 3]).bind(mx.cpu(), {"x": mx.nd.ones(2)},
                                             args_grad={"x": mx.nd.zeros(2)})
    two.forward(is_train=True)
    with pytest.raises(ValueError, match="1 head gradient.*2 output.*one per output"):
        two.backward([mx.nd.ones(2)])
