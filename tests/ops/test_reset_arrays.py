"""``reset_arrays`` has no outputs for the conformance suite to compare: its effect is on
its inputs, checked here on every backend and engine."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.operator import get_op
from dagnet.testing.op_suite import run_kernel


def test_every_input_is_zeroed_in_place(dagnet_backend, dagnet_engine):
    op = get_op("reset_arrays")
    arrays = [np.arange(1, 7, dtype=np.float32).reshape(2, 3),
              np.full((4,), 3.5, np.float16), np.ones((1, 2, 1), np.float64)]
    attrs = op.parse_params({"num_arrays": len(arrays)})
    outputs, inputs = run_kernel(op, attrs, arrays, backend=dagnet_backend, engine=dagnet_engine)
    assert outputs == []
    for before, after in zip(arrays, inputs):
        assert after.dtype == before.dtype and after.shape == before.shape
        assert not after.any()


def test_frontend_returns_nothing_and_checks_the_count():
    a, b = mx.nd.ones((2, 3)), mx.nd.ones((4,), dtype="float16")
    assert mx.nd.reset_arrays(a, b, num_arrays=2) == []
    assert not a.asnumpy().any() and not b.asnumpy().any()
    with pytest.raises(mx.base.MXNetError, match="expects 2 input"):
        mx.nd.reset_arrays(a, num_arrays=2)
