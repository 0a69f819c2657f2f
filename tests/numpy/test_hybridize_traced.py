"""Hybridizing a Gluon block in NumPy mode: the graph is traced from an imperative run
(``dagnet.autograd.Tracer``), and gives what the imperative block gives, gradients too."""

from __future__ import annotations

import warnings

import numpy as onp
import pytest

import dagnet as mx
from dagnet import autograd, np
from dagnet.autograd import Tracer
from dagnet.gluon import HybridBlock, nn


@pytest.fixture(autouse=True)
def numpy_mode():
    mx.npx.set_np()
    yield
    mx.npx.reset_np()


class _Net(HybridBlock):
    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.dense = nn.Dense(3, in_units=4)
            self.norm = nn.BatchNorm(in_channels=3)

    def hybrid_forward(self, F, a, b):
        hidden = F.np.tensordot(a, b, 1) + F.np.ones((4,)) + np.array([1.0, 2.0, 3.0, 4.0])
        hidden = hidden.reshape((-1, 4))[1:]
        return self.norm(self.dense(F.npx.relu(hidden))).sum(axis=1)


def _run(net, a, b, train):
    a, b = a.copy(), b.copy()
    a.attach_grad()
    b.attach_grad()
    with autograd.record(train_mode=train):
        out = net(a, b)
    out.backward()
    return out.asnumpy(), a.grad.asnumpy(), b.grad.asnumpy()


@pytest.mark.parametrize("train", [True, False])
def test_traced_graph_matches_imperative(engine_name, train):
    net = _Net()
    net.initialize(mx.init.Xavier())
    a = np.random.uniform(size=(3, 5))
    b = np.random.uniform(size=(5, 4))
    expected = _run(net, a, b, train)
    stats = net.norm.running_mean.data().asnumpy()
    net.hybridize()
    got = _run(net, a, b, train)
    assert net._cached_op is not None
    for want, have in zip(expected, got):
        onp.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-6)
    if train:  # the trace put the running statistics back: one update per call
        after_one = net.norm.running_mean.data().asnumpy()
        assert not onp.allclose(after_one, stats)
        net2 = _Net()
        net2.initialize(mx.init.Xavier())
        for p, q in zip(net.collect_params().values(), net2.collect_params().values()):
            q.set_data(p.data())
        net2.norm.running_mean.set_data(np.array(stats))
        _run(net2, a, b, train)
        onp.testing.assert_allclose(net2.norm.running_mean.data().asnumpy(), after_one,
                                    rtol=1e-6)


def test_new_shapes_trace_again_and_inputs_stay():
    class Shift(HybridBlock):
        def hybrid_forward(self, F, x):
            x += 1  # on a traced copy: the caller's array does not change
            return x.reshape((x.shape[0], -1)) * 2

    net = Shift()
    net.hybridize()
    for shape in [(2, 3), (4, 1, 2), (2, 3)]:
        x = np.ones(shape)
        out = net(x)
        assert out.shape == (shape[0], int(onp.prod(shape[1:])))
        onp.testing.assert_allclose(out.asnumpy(), 4.0)
        onp.testing.assert_allclose(x.asnumpy(), 1.0)
    assert len(net._traces) == 2


def test_value_dependent_code_runs_imperatively_with_a_warning():
    class Branch(HybridBlock):
        def hybrid_forward(self, F, x):
            return x * 2 if x.sum().item() > 0 else x * 3

    net = Branch()
    net.hybridize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = net(np.ones((2,)))
    assert any("runs imperatively" in str(w.message) and "host" in str(w.message)
               for w in caught)
    onp.testing.assert_allclose(out.asnumpy(), 2.0)
    onp.testing.assert_allclose(net(-np.ones((2,))).asnumpy(), -3.0)


def test_tracer_records_operators_and_constants():
    x = mx.nd.array([1.0, 2.0, 3.0])
    with Tracer() as tracer:
        tracer.variable("x", x)
        y = (x * 2).sum() + mx.nd.array([5.0])
        graph = tracer.symbol([y])
    assert tracer.problem is None
    assert graph.list_arguments() == ["x", "_trace_constant0"]
    onp.testing.assert_allclose(tracer.constants["_trace_constant0"].asnumpy(), [5.0])
    assert "_ag" not in x.__dict__  # the tags come off when the trace ends
    ex = graph.bind(mx.cpu(), {"x": mx.nd.array([1.0, 1.0, 1.0]),
                               "_trace_constant0": tracer.constants["_trace_constant0"]})
    onp.testing.assert_allclose(ex.forward()[0].asnumpy(), [11.0])


def test_tracer_refuses_a_view_written_without_recording():
    x = mx.nd.array([1.0, 2.0, 3.0])
    with Tracer() as tracer:
        tracer.variable("x", x)
        (x + x.detach()).sum()
    assert tracer.problem is not None and "sharing memory" in tracer.problem


def test_tracer_refuses_a_write_into_part_of_a_traced_array():
    x = mx.nd.array([1.0, 2.0, 3.0])
    with Tracer() as tracer:
        tracer.variable("x", x)
        y = x * 2
        y[1:] = 0
    assert tracer.problem is not None and "part of it" in tracer.problem
