"""``multi_sum_sq``: per-array sums of squares in one float32 array (MXNet 1.9.1's figures)."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.testing.op_suite import check_operator


def test_conforms():
    check_operator("multi_sum_sq", backends=["cpu"], engines=["naive"], max_examples=20)


def test_sums_each_array_into_float32():
    a = mx.nd.array([1, 2], dtype="float16")
    b = mx.nd.array([[3.0]], dtype="float16")
    out = mx.nd.multi_sum_sq(a, b, num_arrays=2)
    assert out.dtype == np.float32 and out.shape == (2,)
    np.testing.assert_array_equal(out.asnumpy(), [5, 9])
    assert mx.nd.multi_sum_sq(mx.nd.ones(3, dtype="float64"), num_arrays=1).dtype == np.float32


def test_mixed_dtypes_are_refused_with_the_fix():
    with pytest.raises(mx.DTypeError, match="one dtype"):
        mx.nd.multi_sum_sq(mx.nd.ones(2, dtype="float16"), mx.nd.ones(2), num_arrays=2)


def test_symbolic_form_infers_one_value_per_array():
    arrays = [mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c")]
    out = mx.sym.multi_sum_sq(*arrays, num_arrays=3)
    _, shapes, _ = out.infer_shape(a=(2, 3), b=(4,), c=(1,))
    assert shapes == [(3,)]
