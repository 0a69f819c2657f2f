"""mx.np's bit-wise, integer and float functions on the _npi_ operators, the is* tests,
rounding to decimals, nan_to_num and polyval against numpy; MXNet's dtypes and ufunc
keyword errors; gradients against central differences."""

from __future__ import annotations

import numpy as onp
import pytest

from dagnet import autograd, np
from dagnet.base import MXNetError

RNG = onp.random.default_rng(25)


def _grads(f, *values):
    """Autograd's gradients of ``f(*arrays).sum()`` (float64) and central differences."""
    arrays = [np.array(v, dtype="float64") for v in values]
    for a in arrays:
        a.attach_grad()
    with autograd.record():
        out = f(*arrays).sum()
    out.backward()
    numeric = []
    for i, value in enumerate(values):
        grad = onp.zeros_like(value)
        for index in onp.ndindex(*value.shape):
            moved = []
            for sign in (1, -1):
                shifted = [v.copy() for v in values]
                shifted[i][index] += sign * 1e-6
                moved.append(f(*[np.array(v, dtype="float64") for v in shifted]).sum().item())
            grad[index] = (moved[0] - moved[1]) / 2e-6
        numeric.append(grad)
    return [a.grad.asnumpy() for a in arrays], numeric


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "lcm"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_integer_functions_match_numpy(name, dtype):
    a = RNG.integers(0 if dtype == "uint8" else -50, 50, (3, 4)).astype(dtype)
    b = RNG.integers(1, 50, (4,)).astype(dtype)
    result = getattr(np, name)(np.array(a), np.array(b))
    assert result.dtype == onp.dtype(dtype) and result.shape == (3, 4)
    onp.testing.assert_array_equal(result.asnumpy(), getattr(onp, name)(a, b))
    # a Python int takes the array's dtype, on either side
    left = getattr(np, name)(7, np.array(b))
    assert left.dtype == onp.dtype(dtype)
    onp.testing.assert_array_equal(left.asnumpy(), getattr(onp, name)(onp.array(7, dtype), b))
    assert getattr(np, name)(6, 4) == getattr(onp, name)(6, 4)


@pytest.mark.parametrize("name", ["bitwise_and", "lcm"])
def test_integer_functions_refuse_floats(name):
    with pytest.raises(MXNetError, match="integer"):
        getattr(np, name)(np.array([1.5]), np.array([2.0])).asnumpy()


def test_bitwise_not_and_invert():
    a = onp.array([[3, -4, 0]], dtype="int32")
    for f in (np.bitwise_not, np.invert):
        result = f(np.array(a))
        assert result.dtype == onp.int32
        onp.testing.assert_array_equal(result.asnumpy(), ~a)
    onp.testing.assert_array_equal(np.invert(np.array([1, 2], dtype="uint8")).asnumpy(),
                                   [254, 253])
    onp.testing.assert_array_equal(np.bitwise_not(np.array([True, False], dtype="bool")).asnumpy(),
                                   [False, True])
    assert np.bitwise_not(3) == -4
    with pytest.raises(MXNetError, match="integer or bool"):
        np.bitwise_not(np.array([1.0])).asnumpy()


def test_float_functions_match_numpy_and_mxnet_dtypes():
    a = RNG.uniform(-2, 2, (2, 3)).astype("float32")
    b = RNG.uniform(0.5, 2, (3,)).astype("float32")
    onp.testing.assert_allclose(np.arctan2(np.array(a), np.array(b)).asnumpy(),
                                onp.arctan2(a, b), rtol=1e-6)
    onp.testing.assert_allclose(np.copysign(np.array(a), -np.array(b)).asnumpy(),
                                onp.copysign(a, -b))
    # MXNet's ldexp takes a fractional exponent: x1 * 2**x2
    onp.testing.assert_allclose(np.ldexp(np.array(a), np.array(b)).asnumpy(),
                                a * onp.exp2(b), rtol=1e-6)
    i = np.array([[3, 4, -6]], dtype="int32")
    assert np.ldexp(i, i).dtype == onp.int32
    assert np.ldexp(i, i).asnumpy().tolist() == [[24, 64, 0]]  # -6 * 2**-6 truncates to 0
    assert np.ldexp(2, i).asnumpy().tolist() == [[16, 32, 0]]
    assert np.copysign(i, -1).asnumpy().tolist() == [[-3, -4, -6]]
    assert np.arctan2(np.array(a).astype("float64"), np.array(b)).dtype == onp.float64


@pytest.mark.parametrize("name", ["arctan2", "copysign", "ldexp"])
def test_float_function_gradients_match_central_differences(name):
    a = RNG.uniform(0.3, 1.5, (2, 3)) * RNG.choice([-1, 1], (2, 3))
    b = RNG.uniform(0.3, 1.5, (3,)) * RNG.choice([-1, 1], (3,))
    analytic, numeric = _grads(getattr(np, name), a, b)
    for got, want in zip(analytic, numeric):
        onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["add", "exp", "isnan", "lcm"])
def test_ufunc_keywords_are_refused_as_mxnet_refuses_them(name):
    args = (np.array([1, 2], dtype="int32"),) * (2 if name in ("add", "lcm") else 1)
    f = getattr(np, name)
    for legal in ({"where": False}, {"subok": False}, {"dtype": onp.int8},
                  {"casting": "safe"}, {"order": "C"}, {"order": "mxnet"}):
        with pytest.raises(NotImplementedError):
            f(*args, **legal)
    for illegal in ({"dtype": "abcdefg"}, {"casting": "mxnet"}, {"foo": 1}):
        with pytest.raises(TypeError):
            f(*args, **illegal)
    # the defaults pass
    f(*args, where=True, casting="same_kind", order="K", dtype=None, subok=True).asnumpy()


def test_is_functions_give_bool_and_want_a_bool_out():
    values = onp.array([1.0, onp.nan, onp.inf, -onp.inf, 0.0], dtype="float16")
    x = np.array(values)
    for name in ("isnan", "isinf", "isposinf", "isneginf", "isfinite"):
        result = getattr(np, name)(x)
        assert result.dtype == onp.bool_
        onp.testing.assert_array_equal(result.asnumpy(), getattr(onp, name)(values))
        out = np.zeros((5,), dtype="bool")
        assert getattr(np, name)(x, out=out) is out
        onp.testing.assert_array_equal(out.asnumpy(), getattr(onp, name)(values))
        with pytest.raises(TypeError, match="boolean"):
            getattr(np, name)(x, out=np.zeros((5,)))
        ints = getattr(np, name)(np.array([1, 2], dtype="int32"))
        assert ints.asnumpy().tolist() == [name == "isfinite"] * 2
        assert getattr(np, name)(1.0) == getattr(onp, name)(1.0)


@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 3])
@pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64"])
def test_around_rounds_halves_to_even(decimals, dtype):
    values = onp.array([[0.5, 1.5, 2.5, -0.5, 185.0, 1234.5678, -15.25, 7.0]]).astype(dtype)
    for f in (np.around, np.round, np.round_):
        result = f(np.array(values), decimals)
        assert result.dtype == onp.dtype(dtype)
        onp.testing.assert_allclose(result.asnumpy(), onp.around(values, decimals), rtol=1e-6)
    onp.testing.assert_allclose(np.array(values).round(decimals).asnumpy(),
                                onp.around(values, decimals), rtol=1e-6)
    assert np.around(np.array(2.5)).shape == ()


def test_nan_to_num():
    values = onp.array([1.0, onp.nan, onp.inf, -onp.inf], dtype="float32")
    result = np.nan_to_num(np.array(values))
    onp.testing.assert_array_equal(result.asnumpy(), onp.nan_to_num(values))
    result = np.nan_to_num(np.array(values), nan=1.0, posinf=2.0, neginf=3.0)
    onp.testing.assert_array_equal(result.asnumpy(), [1.0, 1.0, 2.0, 3.0])
    assert np.nan_to_num(np.array(values, dtype="float16")).asnumpy()[2] == 65504
    ints = np.array([234, 0, -40], dtype="int64")
    assert np.nan_to_num(ints).asnumpy().tolist() == [234, 0, -40]
    x = np.array(values)
    assert np.nan_to_num(x, copy=False) is x
    onp.testing.assert_array_equal(x.asnumpy(), onp.nan_to_num(values))
    scalar = np.array(onp.nan)
    assert np.nan_to_num(scalar, copy=False) is scalar and scalar.item() == 0.0
    # the gradient passes where the input is finite
    x = np.array(values)
    x.attach_grad()
    with autograd.record():
        y = np.nan_to_num(x) * 3
    y.backward()
    assert x.grad.asnumpy().tolist() == [3.0, 0.0, 0.0, 0.0]


def test_polyval_forward_and_gradients():
    p = RNG.uniform(-1, 1, (4,))
    x = RNG.uniform(-1, 1, (2, 3))
    onp.testing.assert_allclose(np.polyval(np.array(p), np.array(x)).asnumpy(),
                                onp.polyval(p, x).astype("float32"), rtol=1e-5)
    analytic, numeric = _grads(np.polyval, p, x)
    for got, want in zip(analytic, numeric):
        onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    ints = np.polyval(np.array([1, 2, 3], dtype="int32"), np.array([[1, 2]], dtype="int32"))
    assert ints.dtype == onp.int32 and ints.asnumpy().tolist() == [[6, 11]]
    constant = np.polyval(np.array([2.0]), np.zeros((2, 0)))
    assert constant.shape == (2, 0)
    with pytest.raises(MXNetError, match="1-d"):
        np.polyval(np.ones((2, 2)), np.ones(3))
