"""Indexing, reshaping, copying and casting a recorded array go through operators."""

from __future__ import annotations

import numpy as np
import pytest

from dagnet import autograd, nd

VALUES = np.arange(24.0).reshape(2, 3, 4)


def _gradient_of(index_fn, values=VALUES):
    x = nd.array(values, dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        y = index_fn(x)
        expected_values = index_fn(values) if not isinstance(index_fn(values), float) else None
        head = np.arange(1.0, y.size + 1).reshape(y.shape)
        if expected_values is not None:
            np.testing.assert_array_equal(y.asnumpy(), np.asarray(expected_values).reshape(
                y.shape))
    y.backward(nd.array(head, dtype=np.float64))
    return x.grad.asnumpy(), head


@pytest.mark.parametrize("key", [
    np.s_[1], np.s_[0:1], np.s_[:, 1:3], np.s_[..., ::-2], np.s_[1, :, 2], np.s_[:, None, 1],
    np.s_[-1, -2:], np.s_[:],
], ids=str)
def test_basic_indexing_is_differentiable(engine, key):
    grad, head = _gradient_of(lambda a: a[key])
    expected = np.zeros_like(VALUES)
    expected[key] += head.reshape(np.zeros_like(VALUES)[key].shape)
    np.testing.assert_array_equal(grad, expected)


def test_array_indexing_is_differentiable(engine):
    grad, head = _gradient_of(lambda a: a[nd.array([1, 0, 1])] if isinstance(a, nd.NDArray)
                              else a[[1, 0, 1]])
    expected = np.zeros_like(VALUES)
    np.add.at(expected, [1, 0, 1], head)
    np.testing.assert_array_equal(grad, expected)


def test_tuple_of_arrays_indexing_is_differentiable(engine):
    rows, cols = [0, 1, 1], [2, 0, 2]
    grad, head = _gradient_of(lambda a: a[rows, cols])
    expected = np.zeros_like(VALUES)
    np.add.at(expected, (rows, cols), head)
    np.testing.assert_array_equal(grad, expected)


@pytest.mark.parametrize("key", [([0, 1], slice(1, None)), (1, [2, 0]),
                                 (slice(None), [0, 2], slice(1, 3)),
                                 ([1, 0], slice(None), None, [3, 1]), (Ellipsis, [1])])
def test_array_index_mixed_with_slices_and_integers_is_differentiable(key):
    x = nd.array(VALUES, dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        y = x[key]
    np.testing.assert_array_equal(y.asnumpy(), VALUES[key])
    head = np.arange(1.0, y.size + 1).reshape(y.shape)
    y.backward(nd.array(head, dtype=np.float64))
    expected = np.zeros_like(VALUES)
    np.add.at(expected, key, head)  # repeated positions add up
    np.testing.assert_array_equal(x.grad.asnumpy(), expected)


def test_copying_a_recorded_array_into_another_is_refused_as_mxnet_does():
    x, y = nd.zeros((2, 3)), nd.ones((2, 3))
    y.attach_grad()
    with autograd.record():
        for write in (lambda: x.__setitem__(0, y[0]), lambda: x.__setitem__([1], y[:1])):
            with pytest.raises(autograd.AutogradError, match="Inplace operations"):
                write()


def test_reshape_copy_and_astype_are_differentiable(engine):
    x = nd.array(VALUES, dtype=np.float64)
    x.attach_grad()
    with autograd.record():
        y = (x.reshape((4, -1)).copy() * 3).astype(np.float32).reshape((-1,)).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(VALUES.shape, 3.0))


def test_views_outside_record_still_share_memory():
    x = nd.array(VALUES)
    x.attach_grad()
    view = x[0:1]
    view[:] = -1
    assert x.asnumpy()[0].sum() == -12
