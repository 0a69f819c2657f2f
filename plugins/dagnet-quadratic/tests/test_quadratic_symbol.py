"""The design document's unit test of ``quadratic`` through the symbolic front end:
forward, backward and a numeric gradient check on a bound symbol, for every dtype
and 1 to 5 dimensions (``mx.sym.contrib.quadratic`` there is ``mx.sym.quadratic``)."""

from __future__ import annotations

import numpy as np

import dagnet as mx
from dagnet.test_utils import (
    assert_almost_equal,
    check_numeric_gradient,
    check_symbolic_backward,
    check_symbolic_forward,
    rand_shape_nd,
)


def test_quadratic_function():
    def f(x, a, b, c):
        return a * x**2 + b * x + c

    a = np.random.random_sample()
    b = np.random.random_sample()
    c = np.random.random_sample()
    data = mx.symbol.Variable("data")
    quad_sym = mx.sym.quadratic(data=data, a=a, b=b, c=c)
    for dtype in [np.float16, np.float32, np.float64]:
        for ndim in range(1, 6):
            shape = rand_shape_nd(ndim, 5)
            data_np = np.random.randn(*shape).astype(dtype)
            expected = f(data_np, a, b, c)
            backward_expected = 2 * a * data_np + b
            tol = 1e-2 if dtype is np.float16 else 1e-5

            output = mx.nd.quadratic(mx.nd.array(data_np), a=a, b=b, c=c)
            assert_almost_equal(output.asnumpy(), expected, rtol=tol, atol=tol)
            check_symbolic_forward(quad_sym, [data_np], [expected], rtol=tol, atol=tol)
            check_symbolic_backward(quad_sym, [data_np], [np.ones(expected.shape)],
                                    [backward_expected], rtol=tol, atol=tol)
            check_numeric_gradient(quad_sym, [data_np], atol=0.001)
