"""Fixtures for the executor tests: every test that asks for ``engine_name`` runs under
each registered engine, ``plan`` runs it with memory planning on and off, and
``model`` runs it for each small network of :data:`MODELS` (built by ``models``)."""

from __future__ import annotations

import pytest

import dagnet
import dagnet as mx


@pytest.fixture(params=[True, False], ids=["planned", "unplanned"])
def plan(request, engine_name):
    """Memory planning on and off (under each engine)."""
    with dagnet.config.set(memory_plan=request.param):
        yield request.param



def mlp(act="relu"):
    data = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(data, num_hidden=6, name="fc1")
    h = mx.sym.Activation(h, act_type=act, name="act1")
    h = mx.sym.FullyConnected(h, num_hidden=5, name="fc2")
    h = mx.sym.Activation(h, act_type=act, name="act2")
    h = mx.sym.FullyConnected(h, num_hidden=3, name="fc3")
    return mx.sym.SoftmaxOutput(h, name="softmax"), {"data": (4, 7)}


def mlp_regression():
    data = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(data, num_hidden=5, name="fc1")
    h = mx.sym.Activation(h, act_type="tanh", name="act1")
    h = mx.sym.FullyConnected(h, num_hidden=2, name="fc2")
    return mx.sym.LinearRegressionOutput(h, name="lro"), {"data": (3, 4)}


def convnet():
    data = mx.sym.Variable("data")
    h = mx.sym.Convolution(data, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv1")
    h = mx.sym.Activation(h, act_type="relu", name="relu1")
    h = mx.sym.Pooling(h, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    h = mx.sym.Convolution(h, kernel=(3, 3), num_filter=3, name="conv2")
    h = mx.sym.Activation(h, act_type="tanh", name="tanh2")
    h = mx.sym.Flatten(h, name="flat")
    h = mx.sym.FullyConnected(h, num_hidden=4, name="fc")
    return mx.sym.SoftmaxOutput(h, name="softmax"), {"data": (2, 2, 8, 8)}


def batchnorm_net():
    data = mx.sym.Variable("data")
    h = mx.sym.FullyConnected(data, num_hidden=6, name="fc1")
    h = mx.sym.BatchNorm(h, fix_gamma=False, name="bn1")
    h = mx.sym.Activation(h, act_type="relu", name="relu1")
    h = mx.sym.FullyConnected(h, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(h, name="softmax"), {"data": (5, 4)}


def shared_input():
    """An entry consumed by several nodes (and twice by one)."""
    x = mx.sym.Variable("x")
    h = mx.sym.FullyConnected(x, num_hidden=4, name="fc")
    y = mx.sym.broadcast_add(h * h + mx.sym.tanh(h), mx.sym.sin(x).sum(axis=1, keepdims=True))
    return mx.sym.MakeLoss(mx.sym.sum(y), name="loss"), {"x": (3, 5)}


def two_heads():
    """A group of outputs where one output also feeds the other."""
    x = mx.sym.Variable("x")
    a = mx.sym.FullyConnected(x, num_hidden=3, name="fa")
    b = mx.sym.Activation(a, act_type="sigmoid", name="sig")
    return mx.sym.Group([a, b * 2]), {"x": (2, 4)}


MODELS = {
    "mlp": mlp,
    "mlp_regression": mlp_regression,
    "convnet": convnet,
    "batchnorm": batchnorm_net,
    "shared_input": shared_input,
    "two_heads": two_heads,
}


@pytest.fixture(params=sorted(MODELS))
def model(request):
    """The name of each network in MODELS."""
    return request.param


@pytest.fixture
def models():
    """The network builders by name: each returns (symbol, argument shapes)."""
    return MODELS
