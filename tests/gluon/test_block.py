"""Blocks: MXNet's naming, children and parameters, hooks, saving and loading, and
hybridization (the traced graph gives the imperative results and gradients)."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet import gluon
from dagnet.gluon import nn


class _Net(gluon.HybridBlock):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense0 = nn.Dense(5, in_units=4)
            self.dense1 = nn.Dense(3, activation="tanh")

    def hybrid_forward(self, F, x):
        return self.dense1(F.relu(self.dense0(x)))


def test_names_follow_mxnet():
    with mx.name.NameManager():
        net = _Net(prefix="model_")
        assert net.dense0.prefix == "model_dense0_"
        assert net.dense1.weight.name == "model_dense1_weight"
        assert net.dense1.act.prefix == "model_dense1_tanh_"
        other = nn.Dense(2)
        assert other.name == "dense0"
        seq = nn.HybridSequential()
        with seq.name_scope():
            seq.add(nn.Dense(2), nn.Dense(2))
        assert [b.prefix for b in seq] == ["hybridsequential0_dense0_",
                                          "hybridsequential0_dense1_"]
    assert sorted(net.collect_params(".*weight").keys()) == ["model_dense0_weight",
                                                            "model_dense1_weight"]


def test_hybridized_forward_and_gradients_match_imperative():
    net = _Net()
    net.initialize(mx.init.Xavier())
    x = mx.nd.random.uniform(shape=(6, 4))
    x.attach_grad()

    def run():
        with mx.autograd.record():
            y = net(x)
            loss = (y * y).sum()
        loss.backward()
        grads = {k: v.grad().asnumpy().copy() for k, v in net.collect_params().items()}
        return y.asnumpy(), grads, x.grad.asnumpy().copy()

    y0, g0, gx0 = run()
    net.hybridize(static_alloc=True, static_shape=True)
    y1, g1, gx1 = run()
    y2, g2, _ = run()  # the cached executor again
    np.testing.assert_allclose(y1, y0, rtol=1e-6)
    np.testing.assert_allclose(y2, y0, rtol=1e-6)
    np.testing.assert_allclose(gx1, gx0, rtol=1e-5, atol=1e-7)
    for name in g0:
        np.testing.assert_allclose(g1[name], g0[name], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(g2[name], g0[name], rtol=1e-5, atol=1e-7)


def test_two_recorded_calls_before_backward():
    net = nn.Dense(2, in_units=3)
    net.initialize(mx.init.One())
    net.hybridize()
    a, b = mx.nd.ones((1, 3)), mx.nd.ones((1, 3)) * 2
    with mx.autograd.record():
        loss = net(a).sum() + net(b).sum()
    loss.backward()
    np.testing.assert_allclose(net.weight.grad().asnumpy(), np.full((2, 3), 3.0))
    np.testing.assert_allclose(net.bias.grad().asnumpy(), [2.0, 2.0])


def _dense_grads(net, x, *, hybridize, grad_req="write", steps=1, extra=None):
    """Run ``steps`` recorded passes of ``net`` on ``x`` and return its parameters'
    gradients; ``extra(net, y)`` adds a term to the loss outside the block."""
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    net.collect_params().setattr("grad_req", grad_req)
    for _ in range(steps):
        with mx.autograd.record():
            y = net(x)
            loss = (y * y).sum() + (extra(net, y) if extra else 0)
        loss.backward()
    return {k[len(net.prefix):]: v.grad().asnumpy().copy()
            for k, v in net.collect_params().items()}


@pytest.mark.parametrize("grad_req,steps", [("write", 2), ("add", 2)])
def test_hybridized_gradients_go_into_parameter_grads(grad_req, steps):
    x = mx.nd.random.uniform(shape=(6, 4))
    expected = _dense_grads(_seeded_net(), x, hybridize=False, grad_req=grad_req, steps=steps)
    got = _dense_grads(_seeded_net(), x, hybridize=True, grad_req=grad_req, steps=steps)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-5, atol=1e-6)


def test_hybridized_gradient_of_a_parameter_also_used_outside_the_block_is_summed():
    x = mx.nd.random.uniform(shape=(6, 4))

    def extra(net, y):  # the first layer's weight enters the loss a second time
        return (net.dense0.weight.data() * 3).sum()

    expected = _dense_grads(_seeded_net(), x, hybridize=False, extra=extra)
    got = _dense_grads(_seeded_net(), x, hybridize=True, extra=extra)
    for name in expected:
        np.testing.assert_allclose(got[name], expected[name], rtol=1e-5, atol=1e-6)


def test_autograd_grad_through_a_hybridized_block_leaves_parameter_grads_alone():
    net = _seeded_net()
    net.hybridize(static_alloc=True)
    x = mx.nd.random.uniform(shape=(6, 4))
    _dense_grads(net, x, hybridize=True)  # training pass: gradients go into .grad
    before = {k: v.grad().asnumpy().copy() for k, v in net.collect_params().items()}
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
        loss = (y * y).sum()
    (gx,) = mx.autograd.grad([loss], [x])
    for k, v in net.collect_params().items():
        np.testing.assert_array_equal(v.grad().asnumpy(), before[k])
    with mx.autograd.record():
        y = net(x)
        loss = (y * y).sum()
    loss.backward()  # and the next training pass writes them again
    np.testing.assert_allclose(x.grad.asnumpy(), gx.asnumpy(), rtol=1e-6)


def _seeded_net():
    net = _Net()
    net.initialize(mx.init.Constant(0.1))
    net(mx.nd.zeros((1, 4)))  # finish deferred initialisation
    for k, v in sorted(net.collect_params().items()):
        rng = np.random.default_rng(len(k))
        v.set_data(mx.nd.array(rng.normal(0, 0.5, v.shape)))
    return net


def test_deferred_init_through_hybridized_call_and_symbol():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, activation="relu"), nn.Dense(2))
    net.initialize()
    net.hybridize()
    assert net(mx.nd.ones((3, 7))).shape == (3, 2)
    assert net[0].weight.shape == (4, 7)
    out = net(mx.sym.var("data"))
    assert isinstance(out, mx.sym.Symbol)
    assert "hybridsequential" in out.list_arguments()[1]


def test_input_checks():
    net = nn.Dense(2, in_units=2)
    net.initialize()
    with pytest.raises(ValueError, match="mixed NDArrays and Symbols"):
        net(mx.nd.ones((1, 2)), mx.sym.var("a"))
    with pytest.raises(ValueError, match="must also be HybridBlock"):
        nn.HybridSequential().add(nn.Sequential())
    with pytest.raises(TypeError, match="Changing attribute type"):
        net.weight = 3


def test_hooks_and_apply():
    net = _Net()
    net.initialize()
    seen = []
    handle = net.register_forward_pre_hook(lambda block, inputs: seen.append("pre"))
    net.register_forward_hook(lambda block, inputs, out: seen.append(out.shape))
    net(mx.nd.ones((2, 4)))
    handle.detach()
    net(mx.nd.ones((2, 4)))
    assert seen == ["pre", (2, 3), (2, 3)]
    names = []
    net.apply(lambda block: names.append(type(block).__name__))
    assert names == ["Dense", "Activation", "Dense", "_Net"]


def test_save_load_parameters_by_structure(tmp_path):
    net = _Net()
    net.initialize()
    net(mx.nd.ones((2, 4)))
    fname = str(tmp_path / "net.params")
    net.save_parameters(fname)
    assert sorted(mx.nd.load(fname)) == ["dense0.bias", "dense0.weight", "dense1.bias",
                                         "dense1.weight"]
    other = _Net()
    other.load_parameters(fname)
    x = mx.nd.random.uniform(shape=(2, 4))
    np.testing.assert_allclose(other(x).asnumpy(), net(x).asnumpy())
    with pytest.raises(AssertionError, match="is missing"):
        nn.Dense(1, in_units=1).load_parameters(fname)


def test_export_and_symbolblock_imports(tmp_path):
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, activation="relu"), nn.BatchNorm(), nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = mx.nd.random.uniform(shape=(3, 5))
    expected = net(x).asnumpy()
    with pytest.raises(RuntimeError, match="hybridize"):
        nn.Dense(1).export(str(tmp_path / "none"))
    sym_file, params_file = net.export(str(tmp_path / "net"), epoch=3)
    assert params_file.endswith("net-0003.params")
    saved = mx.nd.load(params_file)
    assert any(k.startswith("aux:") and k.endswith("running_mean") for k in saved)
    block = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(block(x).asnumpy(), expected, rtol=1e-5)


def test_symbolblock_over_internal_outputs():
    data = mx.sym.var("data")
    net = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    block = gluon.SymbolBlock(mx.sym.Activation(net, act_type="relu"), data)
    block.initialize()
    assert block(mx.nd.ones((2, 4))).shape == (2, 3)
    assert sorted(block.collect_params().keys()) == ["fc_bias", "fc_weight"]


def test_summary_prints_layers(capsys):
    net = _Net()
    net.initialize()
    net.summary(mx.nd.ones((2, 4)))
    out = capsys.readouterr().out
    assert "Dense-1" in out and "Total params: 43" in out
    net.hybridize()
    with pytest.raises(AssertionError, match="must not be hybridized"):
        net.summary(mx.nd.ones((2, 4)))


def test_hybridized_blocks_are_freed_without_the_cycle_collector():
    """A block's name scope does not keep it alive, nor does a shared child's scope keep
    the parent that traced it: their cached graphs (and arrays) go with the last reference."""
    import gc
    import weakref

    shared = nn.Dense(3, in_units=4)
    gc.disable()
    try:
        for _ in range(2):
            net = nn.HybridSequential()
            with net.name_scope():
                net.add(shared)
            net.initialize()
            net.hybridize()
            x = mx.nd.ones((2, 4))
            x.attach_grad()
            with mx.autograd.record():
                y = net(x)
            y.backward()
            alive = weakref.ref(net)
            del net, y
            assert alive() is None
    finally:
        gc.enable()


def test_a_name_scope_entered_for_a_temporary_holds_its_prefix():
    """``with _BlockScope(holder):`` names children after a holder nobody else keeps, on the
    thread that entered it (MXNet's thread-local block scope)."""
    import threading

    from dagnet.gluon import block

    class Holder:
        def __init__(self, prefix):
            self.prefix = prefix
            self._empty_prefix = False

    names: list[str] = []

    def spawned():
        with block._BlockScope(Holder("spawned_")):
            names.append(mx.name.NameManager.current.get(None, "hello"))

    thread = threading.Thread(target=spawned)
    thread.start()
    thread.join()
    assert names == ["spawned_hello0"]
