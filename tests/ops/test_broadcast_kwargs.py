"""MXNet registers the broadcast_* operators without a parameter parser, so they accept and
ignore keyword arguments (MXNet's own test_cosine_loss passes ``axis=1``); operators that
have parameters, or the elemwise family, still refuse unknown ones."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def test_broadcast_ops_ignore_keyword_arguments():
    a, b = mx.nd.array([[1.0, -2.0, 3.0]]), mx.nd.array([[0.0], [2.0]])
    got = mx.nd.broadcast_maximum(a, b, axis=1)
    np.testing.assert_array_equal(got.asnumpy(), np.maximum(a.asnumpy(), b.asnumpy()))
    sym = mx.sym.broadcast_add(mx.sym.var("a"), mx.sym.var("b"), axis=1)
    assert sym.infer_shape(a=(1, 3), b=(2, 1))[1] == [(2, 3)]


def test_other_operators_still_refuse_unknown_parameters():
    a = mx.nd.ones((2, 3))
    with pytest.raises(mx.base.MXNetError, match="'elemwise_add' has no parameter 'axis'"):
        mx.nd.elemwise_add(a, a, axis=1)
    with pytest.raises(mx.base.MXNetError, match="'sum' has no parameter 'foo'"):
        mx.nd.sum(a, foo=1)


def test_zeros_like_and_ones_like_ignore_keyword_arguments_as_mxnet():
    # MXNet registers them without a parameter parser: dtype= is accepted and has no effect
    # (GluonCV's CenterNet decoder passes it)
    x = mx.nd.array([[1.0, 2.0]])
    assert mx.nd.zeros_like(x, dtype="int64").dtype == np.float32
    np.testing.assert_array_equal(mx.nd.ones_like(x, dtype="int64").asnumpy(), [[1, 1]])
    sym = mx.sym.zeros_like(mx.sym.var("x"), dtype="int64")
    assert sym.infer_type(x=np.float32)[1] == [np.float32]
