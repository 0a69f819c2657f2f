"""The graph pass ``nchw16c_layout``: which nodes join the blocked layout, and that a
network bound with it computes what it computes without (outputs, gradients, moving
statistics), in training and inference, for every write mode.

Whether a convolution joins is oneDNN's decision (it picks NCHW16c on AVX-512 machines):
that decision is tested against the CPU's instruction sets, and the rest runs with the
decision made to say yes, so that the rewrite is tested on whatever CPU runs the tests."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

import dagnet as mx
from dagnet_ops.nn import _onednn
from dagnet_ops.nn._onednn import _convolution

pytestmark = pytest.mark.skipif(_onednn.library() is None,
                                reason=f"the pass needs oneDNN: {_onednn.unavailable_reason()}")


@pytest.fixture(autouse=True)
def onednn_picks_nchw16c(monkeypatch):
    """oneDNN's layout decision made to pick NCHW16c for every convolution, as it does on
    AVX-512 machines (its kernels run NCHW16c data on any CPU)."""
    monkeypatch.setattr(_convolution, "picked_block", lambda lib, problem, threads: 16)


def test_onednn_picks_nchw16c_exactly_on_avx512_machines(monkeypatch, cpu_flags):
    monkeypatch.undo()  # oneDNN's own answer
    flags = cpu_flags
    lib = _onednn.library()
    picks = _onednn.takes_blocked(lib, (2, 16, 6, 6), (32, 16, 3, 3), (1, 1), (1, 1), (1, 1),
                                  1, 1)
    assert picks == ("avx512f" in flags)
    # and never where the structure rules it out, whatever the CPU
    assert not _onednn.takes_blocked(lib, (2, 12, 6, 6), (32, 12, 3, 3), (1, 1), (1, 1),
                                     (1, 1), 1, 1)


def _unit(data, channels, name):
    """A pre-activation residual unit as MXNet's resnet example writes it."""
    bn1 = mx.sym.BatchNorm(data, fix_gamma=False, name=f"{name}_bn1")
    act1 = mx.sym.Activation(bn1, act_type="relu", name=f"{name}_relu1")
    conv1 = mx.sym.Convolution(act1, num_filter=channels, kernel=(3, 3), pad=(1, 1),
                               no_bias=True, name=f"{name}_conv1")
    bn2 = mx.sym.BatchNorm(conv1, fix_gamma=True, name=f"{name}_bn2")
    act2 = mx.sym.Activation(bn2, act_type="relu", name=f"{name}_relu2")
    conv2 = mx.sym.Convolution(act2, num_filter=channels, kernel=(3, 3), pad=(1, 1),
                               name=f"{name}_conv2")
    shortcut = mx.sym.Convolution(act1, num_filter=channels, kernel=(1, 1), no_bias=True,
                                  name=f"{name}_sc")
    return conv2 + shortcut


def _network():
    body = _unit(mx.sym.Variable("data"), 32, "unit1")
    body = _unit(body, 32, "unit2")
    pool = mx.sym.Pooling(body, kernel=(1, 1), global_pool=True, pool_type="avg", name="pool")
    fc = mx.sym.FullyConnected(mx.sym.flatten(pool), num_hidden=5, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def _bind(symbol, passes, grad_req="write", **shapes):
    with mx.config.set(graph_passes=passes):
        ex = symbol.simple_bind(mx.cpu(), grad_req=grad_req, **shapes)
    rng = np.random.default_rng(0)
    for array in ex.arg_dict.values():
        array[:] = rng.standard_normal(array.shape).astype(np.float32) * 0.3
    if "softmax_label" in ex.arg_dict:
        label = ex.arg_dict["softmax_label"]
        label[:] = np.arange(label.shape[0]) % 5
    for name, array in ex.aux_dict.items():
        array[:] = 1.0 if name.endswith("var") else 0.0
    return ex


def _ops(ex):
    return Counter(n["op"] for n in json.loads(ex.get_optimized_symbol().tojson())["nodes"])


def _step(ex, is_train):
    outputs = [o.asnumpy() for o in ex.forward(is_train=is_train)]
    if is_train:
        ex.backward()
    grads = {k: g.asnumpy() for k, g in ex.grad_dict.items() if g is not None}
    aux = {k: a.asnumpy() for k, a in ex.aux_dict.items()}
    return outputs, grads, aux


def _close(got, want, rtol):
    """Within ``rtol`` of the largest value, or float32 rounding (a bias gradient that
    BatchNorm makes zero is rounding alone)."""
    np.testing.assert_allclose(got, want, rtol=0, atol=max(rtol * np.abs(want).max(), 1e-6))


def test_a_residual_network_runs_its_convolutions_on_the_blocked_layout():
    ex = _bind(_network(), True, data=(2, 16, 6, 6))
    ops = _ops(ex)
    assert ops["_Convolution_NCHW16c"] == 6 and ops["Convolution"] == 0
    assert ops["_BatchNorm_NCHW16c"] == 3  # the first unit's bn1 reads the plain data
    # one layout change into the chain (the first unit's relu output), one out of it
    assert ops["_NCHW_to_NCHW16c"] == 1 and ops["_NCHW16c_to_NCHW"] == 1
    assert [o.shape for o in ex.outputs] == [(2, 5)]


@pytest.mark.parametrize("grad_req", ["write", "add"])
@pytest.mark.parametrize("is_train", [True, False])
def test_the_rewritten_network_computes_what_the_bound_one_does(grad_req, is_train):
    shapes = {"data": (2, 16, 6, 6)}
    plain, blocked = (_bind(_network(), on, grad_req, **shapes) for on in (False, True))
    for _ in range(2):  # twice: "add" accumulates, moving statistics move
        want, got = _step(plain, is_train), _step(blocked, is_train)
    for got_part, want_part in zip(got, want):
        items = zip(got_part, want_part) if isinstance(got_part, list) else \
            ((got_part[k], want_part[k]) for k in want_part)
        for g, w in items:
            _close(g, w, 1e-4)


def test_the_data_gradient_comes_back_plain():
    symbol = mx.sym.Convolution(mx.sym.Variable("data"), num_filter=16, kernel=(3, 3),
                                pad=(1, 1), name="conv")
    symbol = mx.sym.Activation(mx.sym.BatchNorm(symbol, name="bn"), act_type="relu")
    plain, blocked = (_bind(symbol, on, data=(2, 16, 5, 5)) for on in (False, True))
    assert _ops(blocked)["_Convolution_NCHW16c"] == 1
    head = np.random.default_rng(1).standard_normal((2, 16, 5, 5)).astype(np.float32)
    for ex in (plain, blocked):
        ex.forward(is_train=True)
        ex.backward(mx.nd.array(head))
    assert blocked.grad_dict["data"].shape == (2, 16, 5, 5)
    _close(blocked.grad_dict["data"].asnumpy(), plain.grad_dict["data"].asnumpy(), 1e-4)
    _close(blocked.outputs[0].asnumpy(), plain.outputs[0].asnumpy(), 1e-5)


def test_an_output_of_the_chain_is_given_plain():
    conv = mx.sym.Convolution(mx.sym.Variable("data"), num_filter=32, kernel=(1, 1),
                              name="conv")
    bn = mx.sym.BatchNorm(conv, name="bn")
    ex = _bind(mx.sym.Group([bn, conv]), True, data=(1, 16, 3, 3))
    assert _ops(ex)["_Convolution_NCHW16c"] == 1
    assert [o.shape for o in ex.forward()] == [(1, 32, 3, 3), (1, 32, 3, 3)]
    assert list(ex.output_dict) == ["bn_output", "conv_output"]


@pytest.mark.parametrize("axis", [1, -3])
def test_batchnorm_over_the_channels_joins_whichever_way_the_axis_is_written(axis):
    conv = mx.sym.Convolution(mx.sym.Variable("data"), num_filter=16, kernel=(3, 3),
                              pad=(1, 1), name="conv")
    symbol = mx.sym.BatchNorm(conv, axis=axis, name="bn")
    plain, blocked = (_bind(symbol, on, data=(2, 16, 4, 4)) for on in (False, True))
    assert _ops(blocked)["_BatchNorm_NCHW16c"] == 1
    want, got = (ex.forward(is_train=True)[0].asnumpy() for ex in (plain, blocked))
    _close(got, want, 1e-5)


def test_a_convolution_standing_alone_keeps_its_kernels():
    conv = mx.sym.Convolution(mx.sym.Variable("data"), num_filter=16, kernel=(3, 3),
                              name="conv")
    ex = _bind(mx.sym.FullyConnected(conv, num_hidden=3), True, data=(1, 16, 4, 4))
    assert _ops(ex)["Convolution"] == 1 and _ops(ex)["_Convolution_NCHW16c"] == 0


@pytest.mark.parametrize("why, settings, shape", [
    ("channels not a multiple of 16", {}, (1, 12, 4, 4)),
    ("oneDNN off", {"cpu_onednn": False}, (1, 16, 4, 4)),
])
def test_nothing_joins(why, settings, shape):
    conv = mx.sym.Convolution(mx.sym.Variable("data"), num_filter=16, kernel=(3, 3),
                              name="conv")
    with mx.config.set(**settings):
        ex = _bind(mx.sym.BatchNorm(conv), True, data=shape)
    assert _ops(ex)["_Convolution_NCHW16c"] == 0, why


def test_reshape_binds_the_new_shapes_through_the_pass():
    ex = _bind(_network(), True, data=(2, 16, 6, 6))
    smaller = ex.reshape(data=(1, 16, 6, 6), softmax_label=(1,))
    assert _ops(smaller)["_Convolution_NCHW16c"] == 6
    assert smaller.forward(is_train=True)[0].shape == (1, 5)
    smaller.backward()


def test_a_hybridized_gluon_network_matches_the_imperative_one():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(16, 3, padding=1, in_channels=16),
            mx.gluon.nn.BatchNorm(in_channels=16), mx.gluon.nn.Activation("relu"),
            mx.gluon.nn.Conv2D(16, 3, padding=1, in_channels=16))
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.default_rng(2).standard_normal((2, 16, 5, 5)))
    results = []
    for hybrid in (False, True):
        if hybrid:
            net.hybridize()
        with mx.autograd.record():
            y = net(x)
        y.backward()
        results.append((y.asnumpy(), net[0].weight.grad().asnumpy()))
    for got, want in zip(results[1], results[0]):
        _close(got, want, 1e-4)


@pytest.mark.parametrize("wanted", ["data", "weight", "both"])
def test_the_blocked_convolution_gives_each_gradient_alone(wanted):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 16, 5, 5)).astype(np.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    dy = rng.standard_normal((2, 32, 5, 5)).astype(np.float32)
    grads = {}
    for blocked in (False, True):
        data = mx.nd.array(x)
        weight = mx.nd.array(w)
        for name, array in (("data", data), ("weight", weight)):
            if wanted in (name, "both"):
                array.attach_grad()
        with mx.autograd.record():
            if blocked:
                y = mx.nd._NCHW16c_to_NCHW(mx.nd._Convolution_NCHW16c(
                    mx.nd._NCHW_to_NCHW16c(data), weight, kernel=(3, 3), pad=(1, 1),
                    num_filter=32, no_bias=True))
            else:
                y = mx.nd.Convolution(data, weight, kernel=(3, 3), pad=(1, 1), num_filter=32,
                                      no_bias=True)
        y.backward(mx.nd.array(dy))
        grads[blocked] = [a.grad.asnumpy() if a.grad is not None else None
                          for a in (data, weight)]
    for got, want in zip(grads[True], grads[False]):
        assert (got is None) == (want is None)
        if want is not None:
            _close(got, want, 1e-5)


def test_a_relu_after_the_blocked_batchnorm_overwrites_its_output():
    # the blocked BatchNorm's gradient reads its mean and var, not its output
    plain, blocked = (_bind(_network(), on, data=(2, 16, 6, 6)).memory_stats()
                      for on in (False, True))
    assert blocked["inplace"] > plain["inplace"]
