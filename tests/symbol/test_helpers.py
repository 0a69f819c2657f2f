"""``mx.sym``'s two-argument helpers and constant constructors, as MXNet 1.x has them."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def _run(symbol, **values):
    executor = symbol.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in values.items()})
    return executor.forward()[0].asnumpy()


X = np.array([1.0, -2.0, 3.0], dtype=np.float32)
Y = np.array([0.5, 4.0, -1.0], dtype=np.float32)


@pytest.mark.parametrize("helper, reference", [
    (mx.sym.maximum, np.maximum), (mx.sym.minimum, np.minimum),
    (mx.sym.pow, np.power), (mx.sym.power, np.power), (mx.sym.hypot, np.hypot),
])
def test_symbols_and_numbers_on_either_side(helper, reference):
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    base = np.abs(X)  # pow of a negative base to a fractional power is nan in both
    np.testing.assert_allclose(_run(helper(x, y), x=base, y=Y), reference(base, Y), rtol=1e-5)
    np.testing.assert_allclose(_run(helper(x, 2), x=base), reference(base, 2), rtol=1e-5)
    np.testing.assert_allclose(_run(helper(2, x), x=base), reference(2, base), rtol=1e-5)
    assert helper(2, 3) == reference(2, 3)


def test_operand_kinds_name_the_helper():
    with pytest.raises(TypeError, match="maximum: expected Symbols or numbers, got str"):
        mx.sym.maximum("x", mx.sym.Variable("x"))


def test_helper_gradients_flow():
    x = mx.sym.Variable("x")
    executor = mx.sym.maximum(x, 0).simple_bind(mx.cpu(), x=(3,))
    executor.forward(is_train=True, x=mx.nd.array(X))
    executor.backward(mx.nd.ones((3,)))
    np.testing.assert_array_equal(executor.grad_dict["x"].asnumpy(), [1, 0, 1])


def test_constant_constructors():
    np.testing.assert_array_equal(_run(mx.sym.zeros((2, 3))), np.zeros((2, 3)))
    ones = _run(mx.sym.ones((2,), dtype="int32"))
    assert ones.dtype == np.int32 and ones.tolist() == [1, 1]
    np.testing.assert_array_equal(_run(mx.sym.full((2,), 7)), [7, 7])
    np.testing.assert_array_equal(_run(mx.sym.arange(1, 7, 2, repeat=2)), [1, 1, 3, 3, 5, 5])
    np.testing.assert_array_equal(_run(mx.sym.eye(3, k=1)), np.eye(3, k=1))
    assert _run(mx.sym.zeros((1,))).dtype == np.float32
