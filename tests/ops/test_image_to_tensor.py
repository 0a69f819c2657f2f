"""mx.nd.image.to_tensor (_image_to_tensor): values and errors as MXNet 1.9.1 gives them,
and its gradient in closed form (the conformance suite checks forward only: the output is
float32 whatever the input, too coarse for central differences)."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def test_to_tensor_matches_mxnet():
    x = mx.nd.array([[[0, 255]], [[128, 64]]], dtype="uint8")  # (H=2, W=1, C=2)
    out = mx.nd.image.to_tensor(x)
    assert out.dtype == np.float32 and out.shape == (2, 2, 1)
    np.testing.assert_allclose(out.asnumpy(), [[[0.0], [0.5019608]], [[1.0], [0.2509804]]],
                               rtol=1e-6)
    batch = mx.nd.image.to_tensor(mx.nd.stack(x, x))
    assert batch.shape == (2, 2, 2, 1)
    assert mx.nd.image.to_tensor(x.astype("float64")).dtype == np.float32


def test_to_tensor_in_a_symbol():
    sym = mx.sym.image.to_tensor(mx.sym.var("img"))
    _, shapes, _ = sym.infer_shape(img=(4, 5, 3))
    assert shapes == [(3, 4, 5)]
    assert sym.infer_type(img=np.uint8)[1] == [np.float32]


def test_gradient_is_the_head_gradient_back_in_channel_last_order_over_255():
    x = mx.nd.array(np.arange(12.0).reshape(1, 2, 2, 3))
    x.attach_grad()
    head = mx.nd.array(np.arange(12.0).reshape(1, 3, 2, 2))
    with mx.autograd.record():
        y = mx.nd.image.to_tensor(x)
    y.backward(head)
    np.testing.assert_allclose(x.grad.asnumpy(),
                               np.transpose(head.asnumpy(), (0, 2, 3, 1)) / 255.0, rtol=1e-6)


def test_an_image_must_be_3_or_4_dimensional():
    with pytest.raises(mx.base.MXNetError, match=r"\(height, width, channels\)"):
        mx.nd.image.to_tensor(mx.nd.ones((2, 2)))
