"""Zero-size arrays under NumPy shape semantics: operators without inputs make them, and
reshaping one keeps it in the autograd graph."""

from __future__ import annotations

import pytest

import dagnet as mx
from dagnet import autograd, np
from dagnet.base import MXNetError


def test_an_operator_without_inputs_makes_a_zero_size_array_under_np_shape():
    with mx.np_shape(True):
        assert mx.nd.random.uniform(-1, 1, shape=(2, 0, 3)).shape == (2, 0, 3)
    with pytest.raises(MXNetError, match="cannot infer the shape"):
        mx.nd.random.uniform(-1, 1, shape=(2, 0, 3))  # a 0 is an unknown size here


def test_reshaping_a_zero_size_array_keeps_its_gradient():
    mx.npx.set_np()
    try:
        x = np.ones((2, 3, 0, 4))
        x.attach_grad()
        with autograd.record():
            y = np.reshape(x.sum(axis=1), (2, 0))
        y.backward()
        assert x.grad.shape == (2, 3, 0, 4)
    finally:
        mx.npx.reset_np()


def test_a_zero_size_view_past_the_end_of_an_empty_array():
    x = mx.np.zeros((100, 0, 10, 0, 0))
    y = x[(57, slice(None), 3)]  # an offset into a chunk of no bytes
    assert y.shape == (0, 0, 0)
    assert (y + y).shape == (0, 0, 0)
