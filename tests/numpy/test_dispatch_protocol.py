"""NumPy's ``__array_function__`` / ``__array_ufunc__`` on ``mx.np`` arrays, the
``numpy_dispatch_protocol`` lists, and ``numpy_op_signature``'s name mapping."""

from __future__ import annotations

import numpy as onp
import pytest

import dagnet as mx
from dagnet.numpy_dispatch_protocol import (
    _NUMPY_ARRAY_FUNCTION_LIST,
    _NUMPY_ARRAY_UFUNC_LIST,
    _implements,
    with_array_function_protocol,
)
from dagnet.numpy_op_signature import OperatorFunctionNotFound, _get_builtin_op


def _resolve(module, dotted):
    for part in dotted.split("."):
        module = getattr(module, part)
    return module


@pytest.mark.parametrize("name", _NUMPY_ARRAY_FUNCTION_LIST)
def test_listed_functions_exist_on_both_sides(name):
    assert callable(_resolve(onp, name)) and callable(_resolve(mx.np, name))


@pytest.mark.parametrize("name", _NUMPY_ARRAY_UFUNC_LIST)
def test_listed_ufuncs_are_numpy_ufuncs(name):
    assert isinstance(getattr(onp, name), onp.ufunc) and callable(getattr(mx.np, name))


def test_function_dispatches_to_mx_np():
    x = onp.arange(6.0).reshape(2, 3)
    a = mx.np.array(x)
    out = onp.sum(a, axis=0)
    assert isinstance(out, mx.np.ndarray)
    onp.testing.assert_allclose(out.asnumpy(), x.sum(axis=0))
    joined = onp.concatenate([a, a], axis=1)
    assert isinstance(joined, mx.np.ndarray) and joined.shape == (2, 6)


def test_ufunc_dispatches_and_keeps_gradients():
    a = mx.np.array([1.0, 2.0])
    a.attach_grad()
    with mx.autograd.record():
        y = onp.exp(a) * 2
    y.backward()
    assert isinstance(y, mx.np.ndarray)
    onp.testing.assert_allclose(a.grad.asnumpy(), 2 * onp.exp([1.0, 2.0]), rtol=1e-6)


def test_unlisted_function_falls_back_to_numpy():
    a = mx.np.array([[3.0, 1.0], [2.0, 5.0]])
    out = onp.cumsum(a)
    assert isinstance(out, mx.np.ndarray)
    onp.testing.assert_allclose(out.asnumpy(), [3.0, 4.0, 6.0, 11.0])
    with mx.autograd.record(), pytest.raises(ValueError, match="cumsum"):
        onp.cumsum(a)


def test_implements_registers_a_function():
    calls = []

    @_implements(onp.nanmean)
    def nanmean(a, *args, **kwargs):
        calls.append(a)
        return mx.np.mean(a)

    onp.nanmean(mx.np.ones((2,)))
    assert len(calls) == 1


def test_protocol_decorator_names_the_failure():
    @with_array_function_protocol
    def broken():
        raise KeyError("boom")

    with pytest.raises(RuntimeError, match="broken"):
        broken()


def test_builtin_op_names_map_to_functions():
    assert _get_builtin_op("_np_sum") is mx.np.sum
    assert _get_builtin_op("_np__random_normal") is mx.np.random.normal
    assert _get_builtin_op("_npx_relu") is mx.npx.relu
    assert _get_builtin_op("dot") is None
    with pytest.raises(OperatorFunctionNotFound, match="frobnicate"):
        _get_builtin_op("_np_frobnicate")
