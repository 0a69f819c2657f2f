"""nd/sym split_v2 and histogram take numpy's arguments; legacy shape rules for creation."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def test_split_v2_by_indices_and_sections():
    x = np.arange(24.0).reshape(2, 12)
    parts = mx.nd.split_v2(mx.nd.array(x), (3, 7), axis=1)
    for got, want in zip(parts, np.split(x, (3, 7), axis=1)):
        np.testing.assert_array_equal(got.asnumpy(), want)
    parts = mx.nd.split_v2(mx.nd.array(x), 4, axis=1)
    assert [p.shape for p in parts] == [(2, 3)] * 4
    sym = mx.sym.split_v2(mx.sym.var("x"), (3, 7), axis=1)
    assert sym.infer_shape(x=(2, 12))[1] == [(2, 3), (2, 4), (2, 5)]
    with pytest.raises(mx.MXNetError, match="indices_or_sections"):
        mx.nd.split_v2(mx.nd.array(x), "3")


def test_histogram_counts_and_edges_as_numpy():
    x = np.array([0.1, -2.4, 1.2, 3.0, 0.5])
    counts, edges = mx.nd.histogram(mx.nd.array(x), bins=4, range=(-2.5, 2.5))
    want_counts, want_edges = np.histogram(x, bins=4, range=(-2.5, 2.5))
    np.testing.assert_array_equal(counts.asnumpy(), want_counts)
    np.testing.assert_allclose(edges.asnumpy(), want_edges, rtol=1e-6)
    bins = np.array([-1.0, 0.5, 2.0, 4.5])
    counts, _ = mx.nd.histogram(mx.nd.array(x), bins=mx.nd.array(bins))
    np.testing.assert_array_equal(counts.asnumpy(), np.histogram(x, bins=bins)[0])
    with pytest.raises(ValueError, match="range"):
        mx.sym.histogram(mx.sym.var("x"), bins=3)


def test_scalar_and_zero_size_arrays_need_numpy_shape_semantics():
    with pytest.raises(mx.MXNetError, match="np_shape"):
        mx.nd.zeros(())
    with pytest.raises(mx.MXNetError, match="np_shape"):
        mx.nd.ones((2, 0))
    with mx.np_shape():
        assert mx.nd.ones(()).shape == ()
        assert mx.nd.zeros((2, 0)).shape == (2, 0)
        joined = mx.nd.Concat(mx.nd.ones((0, 3)), mx.nd.ones((2, 3)), dim=0)
        assert joined.shape == (2, 3)


def test_partial_shapes_read_under_the_switch():
    x = mx.sym.var("x")
    y = mx.sym.dot(x, mx.sym.var("w"))
    assert y.infer_shape_partial(x=(0, 3, 4), w=(4, 5))[1] == [(0, 3, 5)]
    assert mx.sym.sin(x).infer_shape_partial()[1] == [()]
    with mx.np_shape():
        assert y.infer_shape_partial(x=(-1, 3, 4), w=(4, 5))[1] == [(-1, 3, 5)]
        assert mx.sym.sin(x).infer_shape_partial()[1] == [None]
    t = mx.sym.ones(shape=(2, 3)) + mx.sym.transpose(mx.sym.ones(shape=(-1, -1)))
    assert t.infer_shape_partial()[1] == [(2, 3)]
