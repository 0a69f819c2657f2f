"""Subgraph backends: graph passes that serve a backend name, run by Symbol.optimize_for,
HybridBlock.hybridize(backend=...) and at bind through config subgraph_backend
(MXNET_SUBGRAPH_BACKEND); a third-party pass reaches users the same way as the built-in
ones, and an unknown backend says which exist."""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

import dagnet as mx
from dagnet import executor, plugins
from dagnet.executor import GraphPassError

BACKEND = "TEST_SIGMOID"


@pytest.fixture
def third_party():
    """A plugin, registered as an outside package's entry point would be, whose pass
    ``relu_to_sigmoid`` serves the backend TEST_SIGMOID and records each graph it sees;
    the plugins are discovered afresh after the test."""
    seen = []

    def relu_to_sigmoid(graph):
        seen.append(graph)
        rewritten = dict(graph.json)
        rewritten["nodes"] = [dict(n, attrs={"act_type": "sigmoid"}) if n["op"] == "Activation"
                              else n for n in graph.json["nodes"]]
        return rewritten

    @mx.hookimpl
    def dagnet_register_graph_passes(passes):
        passes.add("relu_to_sigmoid", relu_to_sigmoid, backends=(BACKEND,))

    plugins.register(types.SimpleNamespace(
        dagnet_register_graph_passes=dagnet_register_graph_passes), name="test-backends")
    yield seen
    plugins.reset()
    executor.clear_backend_options(BACKEND)
    executor.clear_backend_options(BACKEND, at_bind=True)


def _net():
    h = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    return mx.sym.Activation(h, act_type="relu", name="act")


DATA = np.array([[-1.0, 0.0, 2.0, 5.0], [3.0, -2.0, 0.5, 1.0]], np.float32)


def _run(symbol):
    ex = symbol.simple_bind(mx.cpu(), data=(2, 4))
    ex.arg_dict["data"][:] = DATA
    ex.arg_dict["fc_weight"][:] = np.eye(3, 4)
    ex.arg_dict["fc_bias"][:] = 0
    return ex, ex.forward()[0].asnumpy()


SIGMOID = 1 / (1 + np.exp(-DATA[:, :3]))
RELU = np.maximum(DATA[:, :3], 0)


def test_a_third_party_pass_is_reached_through_optimize_for(third_party):
    optimized = _net().optimize_for(BACKEND)
    assert "sigmoid" in optimized.tojson() and "sigmoid" not in _net().tojson()
    np.testing.assert_allclose(_run(optimized)[1], SIGMOID, rtol=1e-6)
    assert optimized.list_arguments() == _net().list_arguments()


def test_a_pass_serving_a_backend_does_not_run_at_a_plain_bind(third_party):
    np.testing.assert_allclose(_run(_net())[1], RELU)
    assert third_party == []


def test_without_arrays_the_pass_sees_no_shapes_with_them_it_does(third_party):
    _net().optimize_for(BACKEND)
    assert all(shape is None for shapes in third_party[-1].shapes for shape in shapes)
    args = {"data": mx.nd.array(DATA), "fc_weight": mx.nd.zeros((3, 4)),
            "fc_bias": mx.nd.zeros(3)}
    _net().optimize_for(BACKEND, args, {}, mx.cpu())
    graph = third_party[-1]
    by_name = {n["name"]: i for i, n in enumerate(graph.json["nodes"])}
    assert graph.shapes[by_name["act"]] == [(2, 3)]
    assert graph.dtypes[by_name["fc"]] == [np.float32]
    assert graph.ctx == mx.cpu()


def test_shape_dict_and_type_dict_stand_in_for_arrays(third_party):
    _net().optimize_for(BACKEND, shape_dict={"data": (5, 4)}, type_dict={"data": np.float64})
    graph = third_party[-1]
    by_name = {n["name"]: i for i, n in enumerate(graph.json["nodes"])}
    assert graph.shapes[by_name["fc_weight"]] == [(3, 4)]
    assert graph.dtypes[by_name["act"]] == [np.float64]


def test_options_are_keyword_arguments_over_the_backends_defaults(third_party):
    executor.set_backend_options(BACKEND, level=1, keep="yes")
    _net().optimize_for(BACKEND, level=2)
    assert dict(third_party[-1].options) == {"level": 2, "keep": "yes"}
    executor.clear_backend_options(BACKEND, "keep")
    assert executor.backend_options(BACKEND) == {"level": 1}
    _net().get_backend_symbol(BACKEND)
    assert dict(third_party[-1].options) == {"level": 1}


def test_subgraph_backend_config_runs_a_backend_at_bind(third_party, monkeypatch):
    executor.set_backend_options(BACKEND, at_bind=True, level=3)
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", BACKEND)
    ex, out = _run(_net())
    np.testing.assert_allclose(out, SIGMOID, rtol=1e-6)
    assert dict(third_party[-1].options) == {"level": 3}
    assert list(ex.arg_dict) == ["data", "fc_weight", "fc_bias"]
    with mx.config.set(subgraph_backend="NONE"):  # no pass at all
        np.testing.assert_allclose(_run(_net())[1], RELU)


def test_an_unknown_backend_at_bind_lists_the_known_ones(monkeypatch):
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "TensorRT")
    with pytest.raises(mx.UnknownNameError, match="unknown subgraph backend 'TensorRT'"):
        _net().simple_bind(mx.cpu(), data=(2, 4))


def test_an_unknown_backend_names_the_known_ones_and_how_to_add_one():
    with pytest.raises(mx.UnknownNameError) as caught:
        _net().optimize_for("defualt")
    message = str(caught.value)
    assert "unknown subgraph backend 'defualt'" in message
    assert "did you mean default" in message
    for known in ("default", "default_v2", "MKLDNN", "ONEDNN"):
        assert known in message
    assert "backends=(...)" in message


def test_the_built_in_cpu_passes_answer_to_mxnets_cpu_backend_names():
    registry = plugins.graph_passes()
    assert set(registry.backends_of("nchw16c_layout")) == {"MKLDNN", "ONEDNN"}
    assert registry.runs_on_bind("nchw16c_layout")
    assert not registry.runs_on_bind("default_subgraph")
    for name in ("fuse_fully_connected", "fold_batch_norm", "fuse_conv", "eliminate_identity"):
        assert set(registry.backends_of(name)) == {"MKLDNN", "ONEDNN"}
        assert registry.runs_on_bind(name)
    # as MXNet's MKLDNN backend: the dense layer and its activation become one fused node
    optimized = _net().optimize_for("MKLDNN")
    ops = [node["op"] for node in json.loads(optimized.tojson())["nodes"]]
    assert "_sg_mkldnn_fully_connected" in ops and "Activation" not in ops
    assert optimized.list_arguments() == _net().list_arguments()
    np.testing.assert_allclose(_run(optimized)[1], RELU, rtol=1e-6)


def test_optimize_for_returns_a_new_symbol_even_unchanged():
    net = _net()
    optimized = net.optimize_for("MKLDNN")
    optimized._compose(data=mx.sym.var("other"))
    assert net.list_arguments()[0] == "data"


def test_a_failing_pass_is_named_with_its_backend(third_party):
    @mx.hookimpl
    def dagnet_register_graph_passes(passes):
        passes.add("broken", lambda graph: 1 / 0, backends=("BROKEN",))

    plugins.register(types.SimpleNamespace(
        dagnet_register_graph_passes=dagnet_register_graph_passes), name="test-broken")
    with pytest.raises(GraphPassError, match=r"'broken'.*ZeroDivisionError.*'BROKEN'"):
        _net().optimize_for("BROKEN")


@pytest.mark.parametrize("args, error", [
    (("MKLDNN", [1]), "args must be a dict"),
    ((3,), "backend must be a subgraph backend's name"),
])
def test_optimize_for_argument_errors(args, error):
    with pytest.raises(TypeError, match=error):
        _net().optimize_for(*args)


def test_registration_errors():
    registry = plugins.GraphPassRegistry()
    with pytest.raises(TypeError, match="would never run"):
        registry.add("idle", lambda graph: None, on_bind=False)
    with pytest.raises(TypeError, match="tuple of non-empty strings"):
        registry.add("one", lambda graph: None, backends="MKLDNN")
    registry.add("a", lambda graph: None, backends=("X", "Y"))
    registry.add("b", lambda graph: None, backends=("Y",), on_bind=True)
    registry.add("c", lambda graph: None)
    assert registry.backends() == ["X", "Y"]
    assert [r.name for r in registry.for_backend("Y")] == ["a", "b"]
    assert [r.name for r in registry.on_bind()] == ["b", "c"]


def test_hybridize_with_a_backend_rewrites_the_traced_graph(third_party):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(3, activation="relu"))
    net.initialize(mx.init.One())
    x = mx.nd.array(DATA)
    plain = net(x).asnumpy()
    net.hybridize(backend=BACKEND, backend_opts={"level": 4})
    got = net(x).asnumpy()
    pre = DATA.sum(1, keepdims=True).repeat(3, 1)  # weights one, bias zero
    np.testing.assert_allclose(plain, np.maximum(pre, 0), rtol=1e-6)
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-pre)), rtol=1e-6)
    assert dict(third_party[-1].options) == {"level": 4}
    assert third_party[-1].shapes[0] == [(2, 4)]  # the call's arrays give the shapes
