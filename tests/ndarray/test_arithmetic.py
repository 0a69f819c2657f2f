"""Python operators on NDArrays dispatch to the registered operators by MXNet's rules.

Expected dtypes and values were read from MXNet 1.9.1.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import dagnet as mx


@pytest.mark.parametrize("expression, op_name", [
    (lambda x, y: x + y, "broadcast_add"),
    (lambda x, y: x - y, "broadcast_sub"),
    (lambda x, y: x * y, "broadcast_mul"),
    (lambda x, y: x / y, "broadcast_div"),
    (lambda x, y: x % y, "broadcast_mod"),
    (lambda x, y: x ** y, "broadcast_power"),
    (lambda x, y: x == y, "broadcast_equal"),
    (lambda x, y: x != y, "broadcast_not_equal"),
    (lambda x, y: x > y, "broadcast_greater"),
    (lambda x, y: x >= y, "broadcast_greater_equal"),
    (lambda x, y: x < y, "broadcast_lesser"),
    (lambda x, y: x <= y, "broadcast_lesser_equal"),
    (lambda x, y: x + 2, "_plus_scalar"),
    (lambda x, y: 2 + x, "_plus_scalar"),
    (lambda x, y: x - 2, "_minus_scalar"),
    (lambda x, y: 2 - x, "_rminus_scalar"),
    (lambda x, y: 2 * x, "_mul_scalar"),
    (lambda x, y: x / 2, "_div_scalar"),
    (lambda x, y: 2 / x, "_rdiv_scalar"),
    (lambda x, y: x % 2, "_mod_scalar"),
    (lambda x, y: 2 % x, "_rmod_scalar"),
    (lambda x, y: x ** 2, "_power_scalar"),
    (lambda x, y: 2 ** x, "_rpower_scalar"),
    (lambda x, y: x == 2, "_equal_scalar"),
    (lambda x, y: x != 2, "_not_equal_scalar"),
    (lambda x, y: x > 2, "_greater_scalar"),
    (lambda x, y: 2 < x, "_greater_scalar"),
    (lambda x, y: x >= 2, "_greater_equal_scalar"),
    (lambda x, y: x < 2, "_lesser_scalar"),
    (lambda x, y: x <= 2, "_lesser_equal_scalar"),
    (lambda x, y: -x, "negative"),
    (lambda x, y: abs(x), "abs"),
    (lambda x, y: np.float32(2) * x, "_mul_scalar"),
])
def test_operator_dispatch(naive_pushes, expression, op_name):
    x = mx.nd.array([[1, 2, 3], [4, 5, 6]])
    y = mx.nd.array([[2, 2, 2]])
    naive_pushes.clear()
    result = expression(x, y)
    assert [name for name, _, _ in naive_pushes] == [op_name]
    want = expression(x.asnumpy(), y.asnumpy())
    np.testing.assert_allclose(result.asnumpy(), np.asarray(want, dtype=np.float32), rtol=1e-6)


def test_broadcasting_and_comparison_dtype():
    assert (mx.nd.ones((2, 3)) + mx.nd.ones((1, 3))).shape == (2, 3)
    a = mx.nd.array([[1, 2], [3, 4]])
    equal = a == 2
    assert equal.dtype is np.float32  # MXNet: same dtype as the input, values 0/1
    np.testing.assert_array_equal(equal.asnumpy(), [[0, 1], [0, 0]])
    ints = mx.nd.array([1, 2], dtype="int32") == 1
    assert ints.dtype is np.int32
    np.testing.assert_array_equal(ints.asnumpy(), [1, 0])


def test_integer_arithmetic_keeps_integer_dtype():
    i = mx.nd.array([1, 2, 3], dtype="int32")
    assert (i / 2).dtype is np.int32
    np.testing.assert_array_equal((i / 2).asnumpy(), [0, 1, 1])
    assert (2 ** i).dtype is np.int32
    np.testing.assert_array_equal((1 - i).asnumpy(), [0, -1, -2])
    np.testing.assert_array_equal((i % 2).asnumpy(), [1, 0, 1])
    np.testing.assert_array_equal(abs(-i).asnumpy(), [1, 2, 3])


def test_numpy_arrays_and_other_types_are_refused():
    x = mx.nd.ones((3,))
    with pytest.raises(TypeError):
        x + np.ones(3)
    with pytest.raises(TypeError):
        np.ones(3) + x
    with pytest.raises(TypeError):
        x + "a"
    assert (x == None) is False  # noqa: E711 - comparison with a non-array
    assert x != "a"
    assert hash(x) == hash(x)
    with pytest.raises(TypeError):
        x // 2  # not an MXNet 1.x operator


@pytest.mark.parametrize("augmented, plain", [
    (operator.iadd, operator.add), (operator.isub, operator.sub),
    (operator.imul, operator.mul), (operator.itruediv, operator.truediv),
    (operator.imod, operator.mod),
])
def test_inplace_operators_mutate_through_the_engine(engine_name, augmented, plain):
    x = mx.nd.array([[1, 2], [3, 4]])
    alias = x
    view = x[1]
    x = augmented(x, mx.nd.array([[2, 3]]))
    assert x is alias
    want = plain(np.array([[1, 2], [3, 4]], np.float32), np.array([[2, 3]], np.float32))
    np.testing.assert_allclose(alias.asnumpy(), want)
    np.testing.assert_allclose(view.asnumpy(), want[1])  # the view sees the write
    x = augmented(x, 2)  # scalar form
    np.testing.assert_allclose(alias.asnumpy(), plain(want, np.float32(2)))


def test_inplace_through_a_view_writes_the_parent(engine_name):
    x = mx.nd.ones((2, 3))
    row = x[1]
    row += 1
    row *= mx.nd.array([1, 2, 3])
    np.testing.assert_array_equal(x.asnumpy(), [[1, 1, 1], [2, 4, 6]])


def test_long_dependent_chain_is_ordered(engine_name):
    x = mx.nd.zeros((100,))
    y = mx.nd.ones((100,))
    for _ in range(300):
        x = x + y
    x += 1
    assert x.asnumpy().tolist() == [301.0] * 100


def test_power_is_not_inplace():
    x = mx.nd.array([2, 3])
    view = x[0:1]
    view **= 2  # MXNet 1.x has no in-place power: this rebinds the name
    np.testing.assert_array_equal(x.asnumpy(), [2, 3])
    np.testing.assert_array_equal(view.asnumpy(), [4])


@pytest.mark.parametrize("helper, lhs, rhs, expected", [
    ("maximum", "x", 2.5, [2.5, 2.5, 3]),
    ("maximum", 2.5, "x", [2.5, 2.5, 3]),
    ("maximum", "x", "y", [2, 2, 3]),
    ("minimum", "x", 2, [1, 2, 2]),
    ("subtract", 10, "x", [9, 8, 7]),
    ("greater", 2, "x", [1, 0, 0]),
    ("lesser_equal", "x", 2, [1, 1, 0]),
    ("add", "x", "y", [3, 4, 5]),
    ("power", 2, "x", [2, 4, 8]),
])
def test_two_argument_helpers(helper, lhs, rhs, expected):
    arrays = {"x": mx.nd.array([1, 2, 3]), "y": mx.nd.array([2, 2, 2])}
    result = getattr(mx.nd, helper)(arrays.get(lhs, lhs), arrays.get(rhs, rhs))
    np.testing.assert_allclose(result.asnumpy(), expected)


def test_helpers_on_two_numbers():
    assert mx.nd.maximum(1, 2) == 2
    assert mx.nd.minimum(1, 2) == 1
    assert mx.nd.equal(3, 3) == 1
    with pytest.raises(TypeError, match="expected NDArrays or numbers"):
        mx.nd.maximum("a", 1)


def test_fluent_methods_call_the_operator_of_their_name():
    x = mx.nd.array([[-1, 2], [3, -4]])
    np.testing.assert_array_equal(x.abs().asnumpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(x.transpose().asnumpy(), [[-1, 3], [2, -4]])
