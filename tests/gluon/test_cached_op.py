"""How a hybridized block shows up in a recording: small graphs are inlined (each
operator recorded on its own), larger ones are one ``_CachedOp`` node, as in MXNet."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dagnet as mx
from dagnet import autograd, gluon


def _three_dense() -> gluon.nn.HybridSequential:
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        for _ in range(3):
            net.add(gluon.nn.Dense(4))
    net.initialize(mx.init.Uniform())
    return net


def _recorded_ops(net, x) -> tuple[list[str], mx.nd.NDArray]:
    with autograd.record():
        y = net(x)
    ops = [node["op"] for node in json.loads(autograd.get_symbol(y).tojson())["nodes"]]
    return [op for op in ops if op != "null"], y


@pytest.mark.parametrize(("flags", "ops"), [
    ({"inline_limit": 3}, ["FullyConnected"] * 3),
    ({"inline_limit": 2}, ["_CachedOp"]),
    ({"inline_limit": 3, "static_alloc": True}, ["_CachedOp"]),
])
def test_a_graph_within_the_inline_limit_is_recorded_op_by_op(flags, ops):
    net = _three_dense()
    net.hybridize(**flags)
    assert _recorded_ops(net, mx.nd.ones((2, 5)))[0] == ops


def test_inlined_and_cached_calls_give_the_same_values_and_gradients():
    net = _three_dense()
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (2, 5)))
    results = []
    for limit in (3, 0):
        net.hybridize(inline_limit=limit)
        y = _recorded_ops(net, x)[1]
        y.backward()
        grads = [p.grad().asnumpy().copy() for p in net.collect_params().values()]
        results.append((y.asnumpy(), grads))
    (y_inline, g_inline), (y_cached, g_cached) = results
    np.testing.assert_allclose(y_inline, y_cached, rtol=1e-6)
    for a, b in zip(g_inline, g_cached):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_an_inlined_block_updates_batchnorm_statistics_as_the_cached_one():
    means = []
    for limit in (1, 0):
        net = gluon.nn.HybridSequential()
        net.add(gluon.nn.BatchNorm(in_channels=2))
        net.initialize()
        net.hybridize(inline_limit=limit)
        with autograd.record():
            net(mx.nd.array([[1.0, 2.0], [3.0, 6.0]]))
        means.append(net[0].running_mean.data().asnumpy())
    np.testing.assert_allclose(means[0], means[1])
    assert means[0].any()


def _values_and_grads(net, x):
    with autograd.record():
        y = net(x)
    y.backward()
    return y.asnumpy(), [p.grad().asnumpy().copy() for p in net.collect_params().values()]


def test_calls_with_the_same_data_array_read_it_in_place_as_imperative_calls_do():
    rng = np.random.RandomState(1)
    batches = [rng.uniform(-1, 1, (2, 5)).astype(np.float32) for _ in range(4)]
    net = _three_dense()
    want = [_values_and_grads(net, mx.nd.array(b)) for b in batches]
    net.hybridize(static_alloc=True, static_shape=True)
    x = mx.nd.array(batches[0])
    got = []
    for b in batches[:3]:
        x[:] = b  # the same array, new values: the executor bound to it reads them
        got.append(_values_and_grads(net, x))
    (bound,) = net._cached_op._direct.values()
    assert bound.data_arrays[0] is x and not any(net._cached_op._executors.values())
    got.append(_values_and_grads(net, mx.nd.array(batches[3])))  # another array: copied
    for (y_got, g_got), (y_want, g_want) in zip(got, want):
        np.testing.assert_allclose(y_got, y_want, rtol=1e-6)
        for a, b in zip(g_got, g_want):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
