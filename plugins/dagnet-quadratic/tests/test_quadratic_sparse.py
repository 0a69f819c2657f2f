"""The plugin's csr implementation of ``quadratic``."""

import numpy as np

import dagnet as mx


def test_csr_input_stays_csr_with_zero_constant():
    dense = np.array([[0, 1.5], [-2, 0]], dtype=np.float32)
    csr = mx.nd.array(dense).tostype("csr")
    out = mx.nd.quadratic(csr, a=1.0, b=-1.0)
    assert out.stype == "csr"
    np.testing.assert_allclose(out.asnumpy(), dense ** 2 - dense)
    dense_out = mx.nd.quadratic(csr, a=1.0, b=-1.0, c=2.0)
    assert dense_out.stype == "default"
    np.testing.assert_allclose(dense_out.asnumpy(), dense ** 2 - dense + 2)
