"""Graph passes registered by plugins: what a pass sees, that the executor runs what it
returns behind the bound symbol's interface, and the errors when a pass breaks."""

from __future__ import annotations

import types

import numpy as np
import pytest

import dagnet as mx
from dagnet import plugins
from dagnet.executor import BoundGraph, GraphPassError


@pytest.fixture
def add_pass():
    """``add_pass(rewrite)`` registers a plugin with the graph pass ``test_pass``; the
    plugins are discovered afresh after the test."""

    def add(rewrite):
        @mx.hookimpl
        def dagnet_register_graph_passes(passes):
            passes.add("test_pass", rewrite)

        plugins.register(types.SimpleNamespace(
            dagnet_register_graph_passes=dagnet_register_graph_passes), name="test-passes")

    yield add
    plugins.reset()


def _net():
    h = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=3, name="fc")
    return mx.sym.Activation(h, act_type="relu", name="act")


def _to_sigmoid(graph):
    rewritten = dict(graph.json)
    rewritten["nodes"] = [dict(n, attrs={"act_type": "sigmoid"}) if n["op"] == "Activation"
                          else n for n in graph.json["nodes"]]
    return rewritten


def _run(ex, data):
    ex.arg_dict["data"][:] = data
    ex.arg_dict["fc_weight"][:] = np.eye(3, 4)
    ex.arg_dict["fc_bias"][:] = 0
    return ex.forward()[0].asnumpy()


def test_the_executor_runs_the_rewritten_graph_behind_the_same_names(add_pass):
    add_pass(_to_sigmoid)
    ex = _net().simple_bind(mx.cpu(), data=(2, 4))
    data = np.array([[-1.0, 0.0, 2.0, 5.0], [3.0, -2.0, 0.5, 1.0]], np.float32)
    np.testing.assert_allclose(_run(ex, data), 1 / (1 + np.exp(-data[:, :3])), rtol=1e-6)
    assert list(ex.output_dict) == ["act_output"]
    assert sorted(ex.arg_dict) == ["data", "fc_bias", "fc_weight"]
    assert "sigmoid" in ex.get_optimized_symbol().tojson()


def test_config_graph_passes_off_binds_the_graph_unchanged(add_pass):
    add_pass(_to_sigmoid)
    with mx.config.set(graph_passes=False):
        ex = _net().simple_bind(mx.cpu(), data=(2, 4))
    data = np.array([[-1.0, 0.0, 2.0, 5.0]] * 2, np.float32)
    np.testing.assert_allclose(_run(ex, data), np.maximum(data[:, :3], 0))


def test_a_pass_sees_json_shapes_dtypes_and_the_device(add_pass):
    seen = []
    add_pass(lambda graph: seen.append(graph))
    _net().simple_bind(mx.cpu(), data=(2, 4))
    (graph,) = seen
    assert isinstance(graph, BoundGraph) and graph.ctx == mx.cpu()
    by_name = {n["name"]: i for i, n in enumerate(graph.json["nodes"])}
    assert graph.shapes[by_name["fc_weight"]] == [(3, 4)]
    assert graph.shapes[by_name["act"]] == [(2, 3)]
    assert graph.dtypes[by_name["fc"]] == [np.dtype(np.float32)]


def test_a_pass_that_raises_is_named_with_how_to_turn_passes_off(add_pass):
    def broken(graph):
        raise KeyError("nodes")

    add_pass(broken)
    with pytest.raises(GraphPassError, match=r"'test_pass'.*KeyError.*DAGNET_GRAPH_PASSES=0"):
        _net().simple_bind(mx.cpu(), data=(2, 4))


def test_a_pass_may_not_change_the_arguments(add_pass):
    def rename(graph):
        rewritten = dict(graph.json)
        rewritten["nodes"] = [dict(n, name="x") if n["name"] == "data" else n
                              for n in graph.json["nodes"]]
        return rewritten

    add_pass(rename)
    with pytest.raises(GraphPassError, match=r"list_arguments\(\).*'data'.*'x'"):
        _net().simple_bind(mx.cpu(), data=(2, 4))


def test_a_pass_may_not_change_an_output_shape(add_pass):
    def flatten_more(graph):
        rewritten = dict(graph.json)
        nodes = [dict(n) for n in graph.json["nodes"]]
        nodes.append({"op": "sum", "name": "total", "attrs": {"axis": "1"},
                      "inputs": [graph.json["heads"][0]]})
        rewritten.update(nodes=nodes, heads=[[len(nodes) - 1, 0, 0]])
        return rewritten

    add_pass(flatten_more)
    with pytest.raises(GraphPassError, match=r"output 0 from shape \(2, 3\).*to \(2,\)"):
        _net().simple_bind(mx.cpu(), data=(2, 4))


def test_a_pass_that_returns_json_that_does_not_load(add_pass):
    add_pass(lambda graph: {"nodes": [{"op": "no_such_op", "name": "x", "inputs": []}],
                            "heads": [[0, 0, 0]]})
    with pytest.raises(GraphPassError, match="does not load"):
        _net().simple_bind(mx.cpu(), data=(2, 4))


def _sigmoid_for_inference(graph):
    return None if graph.for_training else _to_sigmoid(graph)


def _bound_for_inference():
    """``_net()`` bound without gradients, with the installed passes but ``test_pass`` off
    (the built-in inference passes would fuse its layers first)."""
    arrays = {"data": mx.nd.array([[-1.0, 0.0, 2.0, 5.0]]), "fc_weight": mx.nd.array(np.eye(3, 4)),
              "fc_bias": mx.nd.zeros(3)}
    others = {*(n for n in plugins.graph_passes() if n != "test_pass"),
              *mx.executor.disabled_graph_passes()}
    with mx.config.set(disabled_graph_passes=",".join(sorted(others))):
        return _net().bind(mx.cpu(), arrays)


def test_a_pass_sees_whether_the_graph_is_bound_for_training(add_pass):
    seen = []
    add_pass(lambda graph: seen.append(graph.for_training))
    _net().simple_bind(mx.cpu(), data=(2, 4))
    _net().simple_bind(mx.cpu(), data=(2, 4), grad_req="null")
    _bound_for_inference()
    _net().simple_bind(mx.cpu(), data=(2, 4), grad_req={"fc_weight": "write"})
    assert seen == [True, False, False, True]


def test_an_inference_executor_runs_training_mode_passes_on_the_training_graph(
        add_pass, engine_name):
    add_pass(_sigmoid_for_inference)
    ex = _bound_for_inference()
    data = np.array([[-1.0, 0.0, 2.0]])
    outputs = ex.outputs
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), 1 / (1 + np.exp(-data)), rtol=1e-6)
    assert ex.forward(is_train=True) is outputs
    np.testing.assert_allclose(outputs[0].asnumpy(), np.maximum(data, 0))
    ex.backward(out_grads=[mx.nd.ones((1, 3))])  # nothing to compute: no gradients
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), 1 / (1 + np.exp(-data)), rtol=1e-6)
    assert "sigmoid" in ex.get_optimized_symbol().tojson()


def test_passes_switched_off_by_name_in_config_or_environment(add_pass, monkeypatch):
    add_pass(_to_sigmoid)
    with mx.config.set(disabled_graph_passes="other, test_pass"):
        assert "sigmoid" not in _net().simple_bind(mx.cpu(), data=(2, 4)) \
            .get_optimized_symbol().tojson()
    monkeypatch.setenv("DAGNET_DISABLED_GRAPH_PASSES", "test_pass")
    assert "sigmoid" not in _net().simple_bind(mx.cpu(), data=(2, 4)) \
        .get_optimized_symbol().tojson()
    monkeypatch.setenv("DAGNET_DISABLED_GRAPH_PASSES", "other")
    assert "sigmoid" in _net().simple_bind(mx.cpu(), data=(2, 4)) \
        .get_optimized_symbol().tojson()
