"""An input left out with None (Convolution(x, w, None, no_bias=True)) and what bind
accepts for it, as MXNet does."""

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
    # an array under a name the symbol lacks is still refused: likely a typo
    with pytest.raises(mx.executor.UnknownArgumentError, match="'b'"):
        conv.bind(mx.cpu(), {**args, "b": mx.nd.ones((2,))})


def test_none_for_an_input_the_operator_has_makes_a_variable():
    x, w = mx.sym.var("x"), mx.sym.var("w")
    conv = mx.sym.Convolution(x, w, None, num_filter=2, kernel=(3, 3), name="c")
    assert conv.list_arguments() == ["x", "w", "c_bias"]
