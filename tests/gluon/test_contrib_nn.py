"""gluon.contrib.nn: Concurrent branches and the PixelShuffle layers against numpy."""

from __future__ import annotations

import numpy as np

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
