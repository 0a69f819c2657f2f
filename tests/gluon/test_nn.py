"""gluon.nn layers: shapes, parameter names and values against numpy, and the same
results hybridized."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon import nn


def _both(layer, *inputs):
    """The layer's output imperatively and hybridized (which must agree)."""
    layer.initialize(mx.init.Xavier())
    first = layer(*inputs).asnumpy()
    layer.hybridize()
    second = layer(*inputs).asnumpy()
    np.testing.assert_allclose(second, first, rtol=1e-5, atol=1e-6)
    return first


def test_dense_matches_numpy():
    layer = nn.Dense(3, in_units=4, activation="relu")
    x = np.random.uniform(-1, 1, (2, 4)).astype(np.float32)
    out = _both(layer, mx.nd.array(x))
    w, b = layer.weight.data().asnumpy(), layer.bias.data().asnumpy()
    np.testing.assert_allclose(out, np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-6)
    assert repr(layer) == "Dense(4 -> 3, Activation(relu))"
    keep = nn.Dense(2, flatten=False, in_units=3)
    keep.initialize()
    assert keep(mx.nd.ones((2, 5, 3))).shape == (2, 5, 2)


@pytest.mark.parametrize("layer, shape, out_shape, weight_shape", [
    (lambda: nn.Conv1D(4, 3), (2, 3, 10), (2, 4, 8), (4, 3, 3)),
    (lambda: nn.Conv2D(4, (3, 3), padding=1, strides=2), (2, 3, 8, 8), (2, 4, 4, 4),
     (4, 3, 3, 3)),
    (lambda: nn.Conv3D(2, 2), (1, 1, 4, 4, 4), (1, 2, 3, 3, 3), (2, 1, 2, 2, 2)),
    (lambda: nn.Conv1DTranspose(4, 3), (2, 3, 10), (2, 4, 12), (3, 4, 3)),
    (lambda: nn.Conv2DTranspose(4, 3, strides=2, output_padding=1), (2, 3, 4, 4),
     (2, 4, 10, 10), (3, 4, 3, 3)),
    (lambda: nn.Conv3DTranspose(2, 2), (1, 1, 3, 3, 3), (1, 2, 4, 4, 4), (1, 2, 2, 2, 2)),
])
def test_convolutions_infer_weights(layer, shape, out_shape, weight_shape):
    block = layer()
    out = _both(block, mx.nd.random.uniform(shape=shape))
    assert out.shape == out_shape
    assert block.weight.shape == weight_shape
    assert block.weight.name.startswith("conv")


@pytest.mark.parametrize("layer, shape, out_shape", [
    (nn.MaxPool1D, (2, 3, 8), (2, 3, 4)),
    (nn.MaxPool2D, (2, 3, 8, 8), (2, 3, 4, 4)),
    (nn.MaxPool3D, (1, 1, 4, 4, 4), (1, 1, 2, 2, 2)),
    (nn.AvgPool1D, (2, 3, 8), (2, 3, 4)),
    (nn.AvgPool2D, (2, 3, 8, 8), (2, 3, 4, 4)),
    (nn.AvgPool3D, (1, 1, 4, 4, 4), (1, 1, 2, 2, 2)),
    (nn.GlobalMaxPool1D, (2, 3, 8), (2, 3, 1)),
    (nn.GlobalMaxPool2D, (2, 3, 8, 8), (2, 3, 1, 1)),
    (nn.GlobalMaxPool3D, (1, 1, 4, 4, 4), (1, 1, 1, 1, 1)),
    (nn.GlobalAvgPool1D, (2, 3, 8), (2, 3, 1)),
    (nn.GlobalAvgPool2D, (2, 3, 8, 8), (2, 3, 1, 1)),
    (nn.GlobalAvgPool3D, (1, 1, 4, 4, 4), (1, 1, 1, 1, 1)),
])
def test_pooling_shapes(layer, shape, out_shape):
    x = np.random.uniform(size=shape).astype(np.float32)
    out = _both(layer(), mx.nd.array(x))
    assert out.shape == out_shape
    if "Global" in layer.__name__:
        reduce = tuple(range(2, len(shape)))
        expected = x.max(axis=reduce, keepdims=True) if "Max" in layer.__name__ \
            else x.mean(axis=reduce, keepdims=True)
        np.testing.assert_allclose(out, expected, rtol=1e-5)


@pytest.mark.parametrize("first, last, shape", [
    (lambda: nn.Conv2D(4, (3, 2), strides=(2, 1), padding=1, groups=2, in_channels=2),
     lambda: nn.Conv2D(4, (3, 2), strides=(2, 1), padding=1, groups=2, in_channels=2,
                       layout="NHWC"), (2, 2, 7, 6)),
    (lambda: nn.Conv3D(3, 2, in_channels=2),
     lambda: nn.Conv3D(3, 2, in_channels=2, layout="NDHWC"), (1, 2, 4, 3, 3)),
    (lambda: nn.MaxPool1D(3, 2, 1), lambda: nn.MaxPool1D(3, 2, 1, layout="NWC"), (2, 3, 9)),
    (lambda: nn.AvgPool2D(2, padding=1), lambda: nn.AvgPool2D(2, padding=1, layout="NHWC"),
     (2, 3, 5, 4)),
    (lambda: nn.GlobalMaxPool3D(), lambda: nn.GlobalMaxPool3D(layout="NDHWC"), (1, 2, 3, 3, 2)),
])
def test_channel_last_layers_match_channel_first(first, last, shape):
    x = np.random.uniform(-1, 1, shape).astype(np.float32)
    moved = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    a, b = first(), last()
    expected = _both(a, mx.nd.array(x))
    if a.params.keys():  # the same weights, moved the way the layout moves them
        b.initialize()
        for pa, pb in zip(a.collect_params().values(), b.collect_params().values()):
            value = pa.data().asnumpy()
            pb.set_data(mx.nd.array(np.moveaxis(value, 1, -1) if value.ndim > 2 else value))
    else:
        b.initialize()
    xb = mx.nd.array(moved)
    xb.attach_grad()
    with mx.autograd.record():
        out = b(xb)
    out.backward()
    np.testing.assert_allclose(out.asnumpy(), np.moveaxis(expected, 1, -1), rtol=1e-5, atol=1e-5)
    xa = mx.nd.array(x)
    xa.attach_grad()
    with mx.autograd.record():
        ya = a(xa)
    ya.backward()
    np.testing.assert_allclose(xb.grad.asnumpy(), np.moveaxis(xa.grad.asnumpy(), 1, -1),
                               rtol=1e-5, atol=1e-5)


def test_batchnorm_updates_running_stats_in_training_only():
    layer = nn.BatchNorm(in_channels=2, momentum=0.5)
    layer.initialize()
    x = mx.nd.array(np.arange(8, dtype=np.float32).reshape(2, 2, 2))
    layer(x)
    np.testing.assert_array_equal(layer.running_mean.data().asnumpy(), [0, 0])
    with mx.autograd.record():
        y = layer(x)
    # the channel means are 2.5 and 4.5, momentum 0.5
    np.testing.assert_allclose(layer.running_mean.data().asnumpy(), [1.25, 2.25])
    np.testing.assert_allclose(y.asnumpy().mean(axis=(0, 2)), [0, 0], atol=1e-5)
    assert sorted(layer.params.keys())[-1].endswith("running_var")


def test_activations_match_numpy():
    x = np.linspace(-2, 2, 9, dtype=np.float32).reshape(1, 9)
    nd = mx.nd.array(x)
    np.testing.assert_allclose(_both(nn.LeakyReLU(0.1), nd), np.where(x > 0, x, 0.1 * x),
                               rtol=1e-6)
    np.testing.assert_allclose(_both(nn.ELU(), nd), np.where(x > 0, x, np.expm1(x)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_both(nn.Swish(), nd), x / (1 + np.exp(-x)), rtol=1e-5)
    np.testing.assert_allclose(_both(nn.PReLU(), nd), np.where(x > 0, x, 0.25 * x),
                               rtol=1e-6)
    assert _both(nn.SELU(), nd).shape == (1, 9)
    assert _both(nn.GELU(), nd).shape == (1, 9)
    assert nn.Activation("relu").prefix.startswith("relu")
    with pytest.raises(AssertionError, match="no less than 0"):
        nn.LeakyReLU(-1)


def test_dropout_embedding_flatten_lambda():
    x = mx.nd.ones((2, 3, 4))
    np.testing.assert_array_equal(_both(nn.Dropout(0.5), x), x.asnumpy())  # not training
    emb = nn.Embedding(10, 3)
    out = _both(emb, mx.nd.array([[1, 2], [3, 9]]))
    np.testing.assert_allclose(out[1, 1], emb.weight.data().asnumpy()[9])
    assert _both(nn.Flatten(), x).shape == (2, 12)
    np.testing.assert_allclose(nn.Lambda("tanh")(x).asnumpy(), np.tanh(np.ones((2, 3, 4))),
                               rtol=1e-6)
    np.testing.assert_allclose(_both(nn.HybridLambda(lambda F, v: F.relu(v - 2)), x), 0)
    with pytest.raises(AssertionError, match="not found"):
        nn.Lambda("no_such_function")


def test_sequential_slicing_and_concatenate():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4), nn.Dense(3), nn.Dense(2))
    assert len(net) == 3 and isinstance(net[1], nn.Dense)
    assert len(net[1:]) == 2
    cat = nn.HybridConcatenate(axis=1)
    with cat.name_scope():
        cat.add(nn.Dense(2), nn.Dense(3))
    assert _both(cat, mx.nd.ones((4, 5))).shape == (4, 5)
    seq_cat = nn.Concatenate(axis=1)
    seq_cat.add(nn.Dense(1), nn.Dense(2))
    seq_cat.initialize()
    assert seq_cat(mx.nd.ones((2, 2))).shape == (2, 3)
