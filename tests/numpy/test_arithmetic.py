"""Operators and element-wise functions of mx.np against numpy: broadcasting, MXNet's
dtype rules, bool comparisons, and results that are mx.np arrays."""

from __future__ import annotations

import operator

import numpy as onp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dagnet import np

_BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
           operator.floordiv, operator.mod]
_SHAPES = [((2, 3), (3,)), ((2, 1), (1, 4)), ((), (3,)), ((4,), ()), ((0, 3), (3,))]


@pytest.mark.parametrize("op", _BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("lshape, rshape", _SHAPES)
def test_binary_operators_broadcast_as_numpy(op, lshape, rshape):
    rng = onp.random.default_rng(0)
    a = rng.uniform(1, 3, lshape).astype(onp.float32)
    b = rng.uniform(1, 3, rshape).astype(onp.float32)
    result = op(np.array(a), np.array(b))
    assert isinstance(result, np.ndarray) and result.dtype == onp.float32
    assert result.shape == op(a, b).shape
    onp.testing.assert_allclose(result.asnumpy(), op(a, b), rtol=1e-5)


@given(st.lists(st.floats(-5, 5, width=32), min_size=1, max_size=6),
       st.floats(0.5, 4, width=32))
def test_scalar_on_either_side(values, scalar):
    a = onp.array(values, dtype=onp.float32)
    x = np.array(a)
    for op in (operator.add, operator.sub, operator.mul, operator.truediv):
        onp.testing.assert_allclose(op(x, scalar).asnumpy(), op(a, onp.float32(scalar)),
                                    rtol=1e-5, atol=1e-6)
        onp.testing.assert_allclose(op(scalar, x + 10).asnumpy(),
                                    op(onp.float32(scalar), a + 10), rtol=1e-5)


def test_comparisons_give_bool_arrays():
    a = np.array([1, 2, 3])
    for op, expected in [(operator.eq, [False, True, False]), (operator.ne, [True, False, True]),
                         (operator.gt, [False, False, True]), (operator.ge, [False, True, True]),
                         (operator.lt, [True, False, False]),
                         (operator.le, [True, True, False])]:
        result = op(a, 2)
        assert result.dtype == onp.bool_ and result.asnumpy().tolist() == expected
    assert (2 < a).asnumpy().tolist() == [False, False, True]
    assert (a == np.array([1, 0, 3])).asnumpy().tolist() == [True, False, True]


def test_mxnet_dtype_rules():
    i = np.array([1, 2, 3], dtype="int32")
    f = np.array([1, 1, 1])
    assert (i + f).dtype == onp.float32                           # int with float: the float
    assert (i * 2.5).dtype == onp.int32                           # a scalar takes the array's
    assert (i / 2).dtype == onp.float32 and (i / 2).asnumpy().tolist() == [0.5, 1, 1.5]
    assert (i + i).dtype == onp.int32
    b = i > 1
    assert (b + b).dtype == onp.bool_ and (b * 2).dtype == onp.int64
    assert (np.array([1], dtype="int8") + np.array([1], dtype="int64")).dtype == onp.int64
    assert (i // 2).asnumpy().tolist() == [0, 1, 1] and (i // 2).dtype == onp.int32


def test_unary_functions_and_dunders():
    a = onp.array([0.5, 1.0, 2.0], dtype=onp.float32)
    x = np.array(a)
    for name in ["exp", "log", "sqrt", "abs", "tanh", "sin", "cos", "square", "floor",
                 "negative", "log1p", "arctan", "sign"]:
        result = getattr(np, name)(x)
        assert isinstance(result, np.ndarray)
        onp.testing.assert_allclose(result.asnumpy(), getattr(onp, name)(a), rtol=1e-5)
    onp.testing.assert_allclose((-x).asnumpy(), -a)
    onp.testing.assert_allclose(abs(-x).asnumpy(), a)
    assert np.exp(0.0) == 1.0  # a scalar in, numpy's scalar out


def test_binary_functions_and_out():
    a, b = np.array([1.0, 5.0]), np.array([3.0, 2.0])
    assert np.maximum(a, b).asnumpy().tolist() == [3.0, 5.0]
    assert np.minimum(a, 2).asnumpy().tolist() == [1.0, 2.0]
    assert np.power(b, 2).asnumpy().tolist() == [9.0, 4.0]
    out = np.zeros((2,))
    assert np.add(a, b, out=out) is out and out.asnumpy().tolist() == [4.0, 7.0]
    assert np.add(1, 2) == 3


def test_in_place_operators_write_the_array():
    x = np.zeros((2,))
    same = x
    x += 1
    x *= 3
    assert x is same and x.asnumpy().tolist() == [3.0, 3.0]


def test_broadcast_error_is_an_mxnet_error():
    from dagnet import MXNetError

    with pytest.raises(MXNetError):
        (np.zeros((2, 3)) + np.zeros((4,))).asnumpy()


def test_products_match_numpy():
    rng = onp.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4)).astype(onp.float32)
    b = rng.standard_normal((3, 4, 5)).astype(onp.float32)
    m = rng.standard_normal((4, 2)).astype(onp.float32)
    v = rng.standard_normal((4,)).astype(onp.float32)
    cases = [
        (np.tensordot(np.array(a), np.array(b), axes=2), onp.tensordot(a, b, axes=2)),
        (np.tensordot(np.array(a), np.array(b), axes=([1], [0])),
         onp.tensordot(a, b, axes=([1], [0]))),
        (np.dot(np.array(a), np.array(m)), onp.dot(a, m)),
        (np.dot(np.array(a), np.array(v)), onp.dot(a, v)),
        (np.dot(np.array(v), np.array(v)), onp.dot(v, v)),
        (np.matmul(np.array(a), np.array(m)), onp.matmul(a, m)),
        (np.array(v) @ np.array(m), v @ m),
        (np.matmul(np.array(a), np.array(v)), onp.matmul(a, v)),
        (np.outer(np.array(v), np.array(v)), onp.outer(v, v)),
    ]
    for got, want in cases:
        assert got.shape == want.shape
        onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-5)
