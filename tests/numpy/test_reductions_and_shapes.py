"""Reductions (NumPy's shapes: a full reduction is 0-d; MXNet's dtypes) and shape
functions of mx.np against numpy, with NumPy's reshape rules and errors."""

from __future__ import annotations

import numpy as onp
import pytest

from dagnet import MXNetError, np

_A = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4) / 7 - 1


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod", "std", "var"])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(name, axis, keepdims):
    got = getattr(np, name)(np.array(_A), axis=axis, keepdims=keepdims)
    want = getattr(onp, name)(_A, axis=axis, keepdims=keepdims)
    assert isinstance(got, np.ndarray) and got.shape == want.shape
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5)
    method = getattr(np.array(_A), name)(axis=axis, keepdims=keepdims)
    onp.testing.assert_allclose(method.asnumpy(), want, rtol=1e-4, atol=1e-5)


def test_reduction_dtypes_are_mxnets():
    i = np.array([1, 2, 3], dtype="int32")
    assert i.sum().dtype == onp.int32 and i.sum().shape == ()
    assert i.mean().dtype == onp.float32 and i.mean().item() == 2.0
    b = i > 1
    assert b.sum().dtype == onp.int64 and b.sum().item() == 2
    assert np.var(np.array([1.0, 2.0, 3.0, 4.0]), ddof=1).item() == pytest.approx(5 / 3)
    assert np.zeros((0, 3)).sum(axis=0).shape == (3,)


def test_arg_reductions_give_int64_indices():
    a = np.array([[1, 5], [3, 2]])
    assert np.argmax(a).dtype == onp.int64 and np.argmax(a).item() == 1
    assert np.argmax(a, axis=0).asnumpy().tolist() == [1, 0]
    assert a.argmin(axis=1).asnumpy().tolist() == [0, 1]
    assert np.all(a > 0).item() and not np.any(a > 5).item()
    assert np.any(a > 4, axis=1).asnumpy().tolist() == [True, False]


def test_reshape_follows_numpy_and_raises_mxnet_errors():
    a = np.ones((10, 10))
    assert a.reshape((-1,)).shape == (100,)
    assert np.reshape(a, (4, -1, 5)).shape == (4, 5, 5)
    assert a.reshape(2, 50).shape == (2, 50)
    assert np.zeros((0, 3)).reshape(3, 0).shape == (3, 0)
    assert np.ones((1,)).reshape(()).shape == ()
    for bad in [(1,), (-1, 3), (-1, -1), (-2, 50)]:
        with pytest.raises(MXNetError, match="reshape"):
            np.reshape(a, bad)
    with pytest.raises(MXNetError, match="cannot reshape array of size 100 into shape"):
        a.reshape((1,))


def test_shape_functions_match_numpy():
    x = np.array(_A)
    cases = [
        (x.T, _A.T), (np.transpose(x, (1, 0, 2)), _A.transpose(1, 0, 2)),
        (x.transpose(2, 0, 1), _A.transpose(2, 0, 1)),
        (np.expand_dims(x, 1), onp.expand_dims(_A, 1)),
        (np.squeeze(np.ones((1, 2, 1))), onp.ones((2,))),
        (np.swapaxes(x, 0, 2), onp.swapaxes(_A, 0, 2)),
        (np.moveaxis(x, 0, -1), onp.moveaxis(_A, 0, -1)),
        (np.ravel(x), _A.ravel()), (x.flatten(), _A.flatten()),
        (np.broadcast_to(np.array([1.0, 2.0]), (3, 2)), onp.broadcast_to([1.0, 2.0], (3, 2))),
        (np.concatenate([x, x], axis=1), onp.concatenate([_A, _A], axis=1)),
        (np.concatenate([x, x], axis=None), onp.concatenate([_A, _A], axis=None)),
        (np.stack([x, x], axis=1), onp.stack([_A, _A], axis=1)),
        (np.where(x > 0, x, 0.0), onp.where(_A > 0, _A, 0.0)),
        (np.clip(x, -0.5, 0.5), onp.clip(_A, -0.5, 0.5)),
        (np.clip(x, None, 0.5), onp.clip(_A, None, 0.5)),
        (np.repeat(np.array([1.0, 2.0]), 2), onp.repeat([1.0, 2.0], 2)),
        (np.tile(np.array([1.0, 2.0]), 2), onp.tile([1.0, 2.0], 2)),
        (np.flip(x, 1), onp.flip(_A, 1)),
        (np.take(x, np.array([2, 0]), axis=1), onp.take(_A, [2, 0], axis=1)),
    ]
    for got, want in cases:
        assert isinstance(got, np.ndarray) and got.shape == want.shape
        onp.testing.assert_allclose(got.asnumpy(), want.astype(onp.float32), rtol=1e-6)


def test_split_as_numpy():
    x = np.array(_A)
    for parts, want in [(np.split(x, 3, axis=1), onp.split(_A, 3, axis=1)),
                        (np.split(x, [1, 3], axis=2), onp.split(_A, [1, 3], axis=2)),
                        (np.array_split(x, 3, axis=2), onp.array_split(_A, 3, axis=2))]:
        assert len(parts) == len(want)
        for got, expected in zip(parts, want):
            onp.testing.assert_array_equal(got.asnumpy(), expected)
    with pytest.raises(ValueError, match="equal division"):
        np.split(x, 5, axis=2)
    with pytest.raises(MXNetError, match="zero-dimensional"):
        np.concatenate([np.ones(()), np.ones(())])
