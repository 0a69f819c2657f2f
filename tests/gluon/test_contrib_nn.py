"""gluon.contrib.nn: Concurrent branches and the PixelShuffle layers against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon import nn
from dagnet.gluon.contrib import nn as cnn


def test_hybrid_concurrent_and_identity():
    net = cnn.HybridConcurrent(axis=1)
    with net.name_scope():
        net.add(nn.Dense(3), cnn.Identity())
    net.initialize()
    x = mx.nd.ones((2, 4))
    y = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), y, rtol=1e-6)
    assert y.shape == (2, 7)
    np.testing.assert_array_equal(y[:, 3:], 1)
    assert net.prefix.startswith("hybridconcurrent")


def test_pixel_shuffle_matches_numpy():
    x = np.arange(2 * 12 * 2 * 3, dtype=np.float32).reshape(2, 12, 2, 3)
    out = cnn.PixelShuffle2D((2, 3))(mx.nd.array(x)).asnumpy()
    ref = x.reshape(2, 2, 2, 3, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 4, 9)
    np.testing.assert_array_equal(out, ref)
    x1 = np.arange(12, dtype=np.float32).reshape(1, 4, 3)
    ref1 = x1.reshape(1, 2, 2, 3).transpose(0, 1, 3, 2).reshape(1, 2, 6)
    np.testing.assert_array_equal(cnn.PixelShuffle1D(2)(mx.nd.array(x1)).asnumpy(), ref1)
    x3 = np.arange(64, dtype=np.float32).reshape(1, 8, 2, 2, 2)
    ref3 = x3.reshape(1, 1, 2, 2, 2, 2, 2, 2).transpose(0, 1, 5, 2, 6, 3, 7, 4).reshape(1, 1, 4,
                                                                                        4, 4)
    layer = cnn.PixelShuffle3D(2)
    np.testing.assert_array_equal(layer(mx.nd.array(x3)).asnumpy(), ref3)
    layer.hybridize()
    np.testing.assert_array_equal(layer(mx.nd.array(x3)).asnumpy(), ref3)


def test_sparse_embedding_has_row_sparse_weight_and_gradient():
    from dagnet.gluon.contrib.nn import SparseEmbedding

    layer = SparseEmbedding(10, 4)
    layer.initialize()
    mx.gluon.Trainer(layer.collect_params(), "sgd")  # row_sparse weights are pulled through it
    assert layer.weight.name == "sparseembedding0_weight"
    x = mx.nd.array([3, 4, 2, 3])
    with mx.autograd.record():
        y = layer(x)
    y.backward()
    assert y.shape == (4, 4)
    grad = layer.weight.grad()
    assert grad.stype == "row_sparse"
    expected = np.zeros((10, 4))
    expected[[2, 4]] = 1
    expected[3] = 2  # looked up twice
    np.testing.assert_array_equal(grad.asnumpy(), expected)
    weight = layer.weight.row_sparse_data(x)
    np.testing.assert_array_equal(y.asnumpy(), weight.asnumpy()[[3, 4, 2, 3]])


@pytest.mark.parametrize("layer_name", ["DeformableConvolution",
                                        "ModulatedDeformableConvolution"])
@pytest.mark.parametrize("hybridize", [False, True])
def test_deformable_layers_start_as_plain_convolutions(layer_name, hybridize):
    """The offset convolution starts at zero: no offsets and (v2) a mask of 2*sigmoid(0)
    = 1, so the layer equals a convolution with its weight and bias."""
    from dagnet.gluon.contrib import cnn as deformable

    layer = getattr(deformable, layer_name)(6, kernel_size=(3, 2), padding=1, strides=(1, 2),
                                     num_deformable_group=2, activation="relu")
    layer.initialize(mx.init.Uniform(0.5))  # the offset parameters keep their zeros init
    if hybridize:
        layer.hybridize()
    x = mx.nd.random.uniform(shape=(2, 4, 7, 8))
    out = layer(x)
    taps = 3 if layer_name.startswith("Modulated") else 2
    assert layer.offset_weight.shape == (taps * 3 * 2 * 2, 4, 3, 2)
    assert layer.deformable_conv_weight.shape == (6, 4, 3, 2)
    plain = mx.nd.Convolution(x, layer.deformable_conv_weight.data(),
                              layer.deformable_conv_bias.data(), kernel=(3, 2), pad=(1, 1),
                              stride=(1, 2), num_filter=6).relu()
    np.testing.assert_allclose(out.asnumpy(), plain.asnumpy(), rtol=1e-5, atol=1e-5)
    assert sorted(layer.collect_params()) == sorted(
        layer.prefix + n for n in ("offset_weight", "offset_bias", "deformable_conv_weight",
                                   "deformable_conv_bias"))


def test_deformable_layer_refuses_other_layouts():
    from dagnet.gluon.contrib import cnn as deformable

    with pytest.raises(AssertionError, match="NCHW"):
        deformable.DeformableConvolution(4, layout="NCW")
