"""mx.np's creation functions against numpy: values, shapes (0-d and zero-size too) and
MXNet's dtypes (float32 by default, a numpy array's own dtype kept)."""

from __future__ import annotations

import numpy as onp
import pytest

import dagnet as mx
from dagnet import np


def test_np_and_npx_are_the_packages():
    import dagnet.numpy
    import dagnet.numpy_extension

    assert mx.np is dagnet.numpy and mx.npx is dagnet.numpy_extension


@pytest.mark.parametrize("source, dtype", [
    ([1, 2, 3], onp.float32),                       # Python lists: float32
    ([True, False], onp.float32),
    (5, onp.float32),
    (onp.array([1, 2], dtype=onp.int64), onp.int64),  # numpy arrays keep their dtype
    (onp.array([1.5], dtype=onp.float64), onp.float64),
])
def test_array_dtype_is_mxnets(source, dtype):
    a = np.array(source)
    assert isinstance(a, np.ndarray)
    assert a.dtype == onp.dtype(dtype) and isinstance(a.dtype, onp.dtype)
    onp.testing.assert_array_equal(a.asnumpy(), onp.array(source, dtype=dtype))


def test_array_of_an_array_copies_and_keeps_dtype():
    a = np.array([1, 2], dtype="int32")
    b = np.array(a)
    b[0] = 7
    assert b.dtype == onp.int32 and a.asnumpy().tolist() == [1, 2]
    assert np.asarray(a) is a


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (3,), (2, 3)])
def test_zeros_ones_full_empty_any_shape_without_np_shape(shape):
    assert not mx.util.is_np_shape()
    for made, value in [(np.zeros(shape), 0), (np.ones(shape), 1), (np.full(shape, 2.5), 2.5)]:
        assert made.shape == shape and made.dtype == onp.float32
        onp.testing.assert_array_equal(made.asnumpy(), onp.full(shape, value, onp.float32))
    assert np.empty(shape, dtype="int32").shape == shape


def test_ranges_and_eye():
    onp.testing.assert_allclose(np.arange(5).asnumpy(), onp.arange(5, dtype=onp.float32))
    assert np.arange(2, 10, 3, dtype="int32").asnumpy().tolist() == [2, 5, 8]
    onp.testing.assert_allclose(np.linspace(0, 1, 5).asnumpy(), onp.linspace(0, 1, 5))
    assert np.linspace(0, 1, 5).dtype == onp.float32
    onp.testing.assert_array_equal(np.eye(3, 4, k=1).asnumpy(), onp.eye(3, 4, k=1))
    assert np.identity(2).shape == (2, 2)


def test_like_functions_keep_shape_and_dtype():
    a = np.array([[1, 2, 3]], dtype="int32")
    for made, value in [(np.zeros_like(a), 0), (np.ones_like(a), 1),
                        (np.full_like(a, 4), 4)]:
        assert made.shape == (1, 3) and made.dtype == onp.int32
        assert (made.asnumpy() == value).all()
    assert np.zeros_like(a, dtype="float16").dtype == onp.float16


def test_repr_item_tolist_and_conversions():
    assert repr(np.array([[1, 2], [3, 4]])) == "array([[1., 2.],\n       [3., 4.]])"
    assert repr(np.array([1, 3], dtype="int32")) == "array([1, 3], dtype=int32)"
    assert repr(np.array(5)) == "array(5.)"
    assert repr(np.zeros((0, 3))) == "array([], shape=(0, 3))"
    assert np.ones((1,)).item() == 1.0 and isinstance(np.ones((1,)).item(), float)
    assert np.ones((2, 2)).tolist() == [[1.0, 1.0], [1.0, 1.0]]
    legacy = np.ones((2,)).as_nd_ndarray()
    assert type(legacy) is mx.nd.NDArray and legacy.dtype is onp.float32
    assert isinstance(np.as_np_ndarray(legacy), np.ndarray)
    assert float(np.array(2.5)) == 2.5 and int(np.array(3)) == 3


def test_missing_names_say_so():
    with pytest.raises(AttributeError, match="dagnet.numpy does not provide 'busday_count' yet"):
        np.busday_count  # noqa: B018
    with pytest.raises(mx.MXNetError):
        np.fft  # noqa: B018
    with pytest.raises(AttributeError, match="numpy_extension does not provide"):
        mx.npx.no_such_operator  # noqa: B018


def test_c_order_only_and_formatting():
    with pytest.raises(NotImplementedError, match="C-ordered"):
        np.empty((2,), order="F")
    with pytest.raises(NotImplementedError, match="C-ordered"):
        np.ones((2,)).copy(order="F")
    assert f"{np.array(onp.pi):0.3g}" == "3.14"
    assert f"{np.array([1.0, 2.0])}" == "[1. 2.]"
    with pytest.raises(TypeError, match="format"):
        f"{np.array([1.0]):30}"
    assert np.bool is bool and np.array([1, 0], dtype=np.bool).dtype == onp.bool_


def test_nd_array_as_np_ndarray_shares_memory_and_grad():
    x = mx.nd.array([1.0, 2.0])
    y = x.as_np_ndarray()
    assert isinstance(y, mx.np.ndarray) and y.shape == (2,)
    y[0] = 5.0
    assert x.asnumpy()[0] == 5.0


def test_optimizer_records_numpy_mode():
    assert mx.optimizer.SGD().allow_np_array is False
    mx.npx.set_np()
    try:
        assert mx.optimizer.SGD().allow_np_array is True
    finally:
        mx.npx.reset_np()
