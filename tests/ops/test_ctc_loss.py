"""``CTCLoss``: MXNet 1.9.1's values (uniform scores, both blank conventions, explicit
lengths) and its gradient."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx

EXPECTED = [18.82820702, 16.50581741]  # MXNet 1.9.1 for these inputs


@pytest.mark.parametrize("label, blank", [([[1, 0, -1, -1], [2, 1, 1, -1]], "last"),
                                          ([[1, 2, 0, 0], [3, 2, 2, 0]], "first")])
def test_ctc_loss_matches_mxnet(label, blank):
    loss = mx.nd.CTCLoss(mx.nd.ones((20, 2, 4)), mx.nd.array(label), blank_label=blank)
    np.testing.assert_allclose(loss.asnumpy(), EXPECTED, rtol=1e-5)


def test_lengths_and_gradient():
    data = mx.nd.ones((25, 2, 4))
    data.attach_grad()
    with mx.autograd.record():
        loss = mx.nd.ctc_loss(data, mx.nd.array([[2, 1, 3, 3], [1, 0, 0, 3]]),
                              mx.nd.array([20, 20]), mx.nd.array([2, 3]),
                              use_data_lengths=True, use_label_lengths=True, blank_label="last")
    loss.backward()
    np.testing.assert_allclose(loss.asnumpy(), EXPECTED, rtol=1e-5)
    grad = data.grad.asnumpy()
    # MXNet 1.9.1's gradient at steps 0 and 5
    np.testing.assert_allclose(grad[0], [[0.25, 0.25, 0.0681818, -0.5681822],
                                         [0.25, -0.0227275, 0.25, -0.4772748]], atol=1e-5)
    np.testing.assert_allclose(grad[5], [[0.25, 0.1782293, -0.2093317, -0.2188989],
                                         [0.0323436, -0.1012527, 0.25, -0.1810901]], atol=1e-5)
    np.testing.assert_array_equal(grad[20:], 0)  # past each sequence's length
    np.testing.assert_allclose(grad.sum(axis=2), 0, atol=1e-6)  # softmax: rows sum to 0
