"""mx.nd.CachedOp: a symbol called on NDArrays, outside and inside autograd.record()."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dagnet as mx


def _fc():
    x = mx.sym.Variable("x")
    return mx.sym.FullyConnected(x, num_hidden=3, name="fc") * 2


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [mx.nd.array(rng.uniform(-1, 1, shape)) for shape in [(4, 5), (3, 5), (3,)]]


def test_call_matches_the_executor_and_follows_new_values():
    sym = _fc()
    assert mx.nd.CachedOp is mx.executor.CachedOp
    op = mx.nd.CachedOp(sym)
    x, w, b = _inputs()
    want = 2 * (x.asnumpy() @ w.asnumpy().T + b.asnumpy())
    first = op(x, w, b)
    np.testing.assert_allclose(first.asnumpy(), want, rtol=1e-5)
    b[:] = b + 1
    second = op(x, w, b)
    np.testing.assert_allclose(second.asnumpy(), want + 2, rtol=1e-5)
    np.testing.assert_allclose(first.asnumpy(), want, rtol=1e-5)  # not overwritten
    out = mx.nd.zeros((4, 3))
    assert op(x, w, b, out=out) is out
    np.testing.assert_allclose(out.asnumpy(), want + 2, rtol=1e-5)


def test_gradients_match_plain_autograd():
    sym = _fc()
    op = mx.nd.CachedOp(sym)
    x, w, b = _inputs(1)
    w.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        y = (op(x, w, b) * op(x, w, b)).sum()
    y.backward()
    got_w, got_b = w.grad.asnumpy().copy(), b.grad.asnumpy().copy()
    with mx.autograd.record():
        z = mx.nd.FullyConnected(x, w, b, num_hidden=3) * 2
        y = (z * z).sum()
    y.backward()
    np.testing.assert_allclose(got_w, w.grad.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(got_b, b.grad.asnumpy(), rtol=1e-5)


def test_a_recorded_call_is_one_cachedop_node_in_get_symbol():
    x, w, b = _inputs(2)
    w.attach_grad()
    with mx.autograd.record():
        y = mx.nd.CachedOp(_fc())(x, w, b)
    nodes = json.loads(mx.autograd.get_symbol(y).tojson())["nodes"]
    assert [node["op"] for node in nodes] == ["null", "null", "null", "_CachedOp"]


def test_retained_graph_backs_up_twice_and_new_shapes_bind_again():
    op = mx.nd.CachedOp(_fc())
    x, w, b = _inputs(2)
    w.attach_grad(grad_req="add")
    with mx.autograd.record():
        y = op(x, w, b).sum()
    y.backward(retain_graph=True)
    once = w.grad.asnumpy().copy()
    y.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), 2 * once, rtol=1e-5)
    x2 = mx.nd.ones((7, 5))
    x2.attach_grad()
    with mx.autograd.record():
        y = op(x2, w, b).sum()
    y.backward()
    np.testing.assert_allclose(x2.grad.asnumpy(), np.tile(2 * w.asnumpy().sum(0), (7, 1)),
                               rtol=1e-5)


def test_auxiliary_states_are_inputs_and_updated_in_training():
    data = mx.sym.Variable("data")
    sym = mx.sym.BatchNorm(data, name="bn", fix_gamma=False, momentum=0.5)
    assert sym.list_inputs() == ["data", "bn_gamma", "bn_beta", "bn_moving_mean",
                                 "bn_moving_var"]
    op = mx.nd.CachedOp(sym)
    x = mx.nd.array(np.arange(8.0).reshape(4, 2))
    gamma, beta = mx.nd.ones((2,)), mx.nd.zeros((2,))
    mean, var = mx.nd.zeros((2,)), mx.nd.ones((2,))
    op(x, gamma, beta, mean, var)  # inference: statistics untouched
    np.testing.assert_array_equal(mean.asnumpy(), [0, 0])
    with mx.autograd.train_mode():
        op(x, gamma, beta, mean, var)
    np.testing.assert_allclose(mean.asnumpy(), 0.5 * x.asnumpy().mean(0), rtol=1e-5)


def test_bad_calls_are_named():
    op = mx.nd.CachedOp(_fc())
    with pytest.raises(mx.executor.CachedOpError, match="expected 3 input arrays"):
        op(mx.nd.ones((2, 5)))
    with pytest.raises(mx.executor.CachedOpError, match="must be an NDArray"):
        op(np.ones((2, 5)), mx.nd.ones((3, 5)), mx.nd.ones((3,)))
    with pytest.raises(mx.executor.CachedOpError, match="unknown flag 'bogus'"):
        mx.nd.CachedOp(_fc(), flags=[("bogus", 1)])
    assert mx.nd.CachedOp(_fc(), flags=[("static_alloc", "true")]).flags == {
        "static_alloc": True}
