"""The subgraph backends ``default`` / ``default_v2`` and the ``_CachedOp`` nodes they make:
a partitioned graph computes what the graph did, forward, backward and auxiliary states,
on every engine; it keeps the graph's inputs and has the nodes and names MXNet 1.9.1 gives
it; ``_CachedOp`` is a symbol operator of its own; hybridized blocks partition too."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dagnet as mx
from dagnet.executor import GraphPassError


def _diamond():
    data = mx.sym.var("data")
    e = mx.sym.exp(data)
    return mx.sym.cos(e) + mx.sym.sin(e)


def _normalized():
    return mx.sym.BatchNorm(mx.sym.BatchNorm(_diamond(), name="bn0"), name="bn1")


def _conv_of_sin():
    w = mx.sym.var("w", shape=(1, 0, 2, 2))  # the 0 is inferred back through sin
    return mx.sym.Convolution(mx.sym.var("data"), weight=mx.sym.sin(w), kernel=(2, 2),
                              num_filter=1, no_bias=True)


def _twice(data):
    return data + data


def _long_way_round():
    s = mx.sym.sin(mx.sym.var("data"))
    c = s
    for _ in range(4):
        c = mx.sym.cos(c)
    return s + c


def _mlp():
    h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=5), "relu")
    return mx.sym.FullyConnected(h, num_hidden=2)


SHAPE = {"data": (2, 3, 4, 4)}
CASES = {
    "cycle cut": (_diamond, SHAPE, ["exp", "sin", "elemwise_add"]),
    "other side": (_diamond, SHAPE, ["exp", "cos", "_Plus"]),
    "with aux states": (_normalized, SHAPE, ["exp", "sin", "_plus", "BatchNorm"]),
    "aux states apart": (_normalized, SHAPE, ["BatchNorm"]),
    "an output thrice": (lambda: mx.sym.Group([mx.sym.exp(mx.sym.var("data"))] * 3), SHAPE,
                         ["exp"]),
    "an input twice": (lambda: _twice(mx.sym.var("data")), SHAPE, ["elemwise_add"]),
    "shape inferred back": (_conv_of_sin, {"data": (3, 3, 5, 5)}, ["sin"]),
    "conv only": (_conv_of_sin, {"data": (3, 3, 5, 5)}, ["Convolution"]),
    "conv and sin": (_conv_of_sin, {"data": (3, 3, 5, 5)}, ["Convolution", "sin"]),
    "long cycle": (_long_way_round, {"data": (4,)}, ["sin", "elemwise_add"]),
    "dense layers": (_mlp, {"data": (3, 6)}, ["FullyConnected"]),
}


def _run(symbol, shapes, values, head_grads=None):
    ex = symbol.simple_bind(mx.cpu(), **shapes)
    for name, value in values.items():
        (ex.arg_dict[name] if name in ex.arg_dict else ex.aux_dict[name])[:] = value
    outputs = [o.asnumpy() for o in ex.forward(is_train=True)]
    if head_grads is None:
        return ex, outputs
    ex.backward([mx.nd.array(h) for h in head_grads])
    return outputs, {k: v.asnumpy() for k, v in ex.grad_dict.items()}, \
        {k: v.asnumpy() for k, v in ex.aux_dict.items()}


@pytest.mark.parametrize("backend", ["default", "default_v2"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_partitioned_graph_computes_what_the_graph_did(case, backend, engine_name):
    make, shapes, op_names = CASES[case]
    symbol = make()
    partitioned = symbol.optimize_for(backend, op_names=op_names)
    assert "_CachedOp" in partitioned.tojson()
    for what in ("list_inputs", "list_arguments", "list_auxiliary_states"):
        assert getattr(partitioned, what)() == getattr(symbol, what)()
    rng = np.random.default_rng(0)
    ex, outputs = _run(symbol, shapes, {})
    values = {name: rng.uniform(0.5, 1.5, array.shape)
              for name, array in {**ex.arg_dict, **ex.aux_dict}.items()}
    head_grads = [rng.uniform(-1, 1, o.shape) for o in outputs]
    want = _run(symbol, shapes, values, head_grads)
    got = _run(partitioned, shapes, values, head_grads)
    for expected, actual in zip(want, got):  # outputs, gradients, auxiliary states
        if isinstance(expected, dict):
            assert expected.keys() == actual.keys()
            expected, actual = list(expected.values()), list(actual.values())
        for e, a in zip(expected, actual):
            np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


def test_nodes_and_names_are_mxnets():
    with mx.name.NameManager():  # names counted from 0, as in a fresh MXNet process
        symbol = _normalized()
    partitioned = symbol.optimize_for("default", op_names=["exp", "sin", "elemwise_add",
                                                           "BatchNorm"])
    nodes = json.loads(partitioned.tojson())["nodes"]
    cached = [n for n in nodes if n["op"] == "_CachedOp"]
    # as MXNet 1.9.1 partitions it: exp and sin first (the sum would close a cycle through
    # cos), then the sum and both BatchNorms, reading cos and the first node's sin output
    assert [n["name"] for n in cached] == ["_CachedOp0", "_CachedOp1"]
    first, second = (n["subgraphs"][0] for n in cached)
    assert [(n["op"], n["name"]) for n in first["nodes"]] == [
        ("null", "data0"), ("exp", "exp0"), ("sin", "sin0")]
    assert first["heads"] == [[1, 0, 0], [2, 0, 0]]
    assert [n["name"] for n in second["nodes"]][:3] == [
        "cos0_output0", "_CachedOp0_sin0_output0", "_plus0"]
    assert "bn0_moving_mean0" in [n["name"] for n in second["nodes"]]
    by_index = [n["name"] for n in nodes]
    assert [by_index[i] for i, _, _ in cached[1]["inputs"]] == [
        "cos0", "_CachedOp0", "bn0_gamma", "bn0_beta", "bn0_moving_mean", "bn0_moving_var",
        "bn1_gamma", "bn1_beta", "bn1_moving_mean", "bn1_moving_var"]
    assert partitioned.list_outputs() == ["_CachedOp1_bn1_output"]


def test_dedup_subgraph_gives_a_repeated_entry_one_input():
    twice = _twice(mx.sym.var("data"))

    def inputs(**options):
        node = json.loads(twice.optimize_for("default", op_names=["elemwise_add"],
                                             **options).tojson())["nodes"][-1]
        return [n["name"] for n in node["subgraphs"][0]["nodes"] if n["op"] == "null"]

    assert inputs() == ["data0", "data1"]
    assert inputs(dedup_subgraph=True) == ["data0"]
    assert inputs(dedup_subgraph="True") == ["data0"]  # as MXNet's string options say it


def test_no_op_names_is_an_error_saying_how_to_give_them():
    with pytest.raises(GraphPassError, match=r"op_names.*set_backend_options"):
        _diamond().optimize_for("default")


def test_an_empty_list_or_unmatched_names_partition_nothing():
    diamond = _diamond()
    for op_names in ([], ["Pooling", "no_such_op"]):
        assert diamond.optimize_for("default", op_names=op_names).tojson() == diamond.tojson()


def test_cached_op_runs_the_symbol_given_as_json_text():
    with mx.name.NameManager():  # automatic names counted from 0, whatever ran before
        a, b = mx.sym.var("a"), mx.sym.var("b")
        inner = a * b
        node = mx.sym._internal._CachedOp(mx.sym.var("a"), mx.sym.var("b"),
                                          subgraph=inner.tojson())
    assert node.list_arguments() == ["a", "b"]
    assert node.list_outputs() == ["_cachedop0__mul0_output"]
    values = {"a": np.arange(4.0).reshape(2, 2), "b": np.full((2, 2), 3.0)}
    outputs, grads, _ = _run(node * 2, {"a": (2, 2), "b": (2, 2)}, values, [np.ones((2, 2))])
    np.testing.assert_allclose(outputs[0], values["a"] * 6)
    np.testing.assert_allclose(grads["a"], np.full((2, 2), 6.0))
    np.testing.assert_allclose(grads["b"], values["a"] * 2)


def test_cached_op_keeps_the_subgraphs_auxiliary_states_auxiliary():
    inner = mx.sym.BatchNorm(mx.sym.var("data"), name="bn")
    node = mx.sym._internal._CachedOp(*[mx.sym.var(n) for n in inner.list_inputs()],
                                      subgraph=inner.tojson())
    assert node.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]


@pytest.mark.parametrize("params, error", [
    ({}, "neither"),
    ({"subgraph": "{}", "subgraphs": "[]"}, "both"),
    ({"subgraphs": "[]"}, "holds 0 graphs"),
])
def test_cached_op_needs_one_subgraph(params, error):
    with pytest.raises(mx.MXNetError, match=error):
        mx.sym._internal._CachedOp(mx.sym.var("a"), **params)


def test_a_partitioned_graph_as_mxnet_writes_it_loads_and_runs():
    # written by hand in the layout MXNet 1.9.1 saves optimize_for('default') results in:
    # the subgraph under the node's "subgraphs", no attributes
    subgraph = {"nodes": [{"op": "null", "name": "x0", "inputs": []},
                          {"op": "exp", "name": "exp0", "inputs": [[0, 0, 0]]},
                          {"op": "sin", "name": "sin0", "inputs": [[1, 0, 0]]}],
                "arg_nodes": [0], "node_row_ptr": [0, 1, 2, 3], "heads": [[2, 0, 0]]}
    graph = {"nodes": [{"op": "null", "name": "x", "inputs": []},
                       {"op": "_CachedOp", "name": "_CachedOp0", "inputs": [[0, 0, 0]],
                        "subgraphs": [subgraph]}],
             "arg_nodes": [0], "node_row_ptr": [0, 1, 2], "heads": [[1, 0, 0]],
             "attrs": {"mxnet_version": ["int", 10901]}}
    loaded = mx.sym.load_json(json.dumps(graph))
    assert loaded.list_outputs() == ["_CachedOp0_sin0_output"]
    x = np.linspace(-1, 1, 6)
    np.testing.assert_allclose(loaded.eval(x=mx.nd.array(x))[0].asnumpy(),
                               np.sin(np.exp(x)), rtol=1e-6)
    again = mx.sym.load_json(loaded.tojson())
    assert json.loads(again.tojson())["nodes"][1]["subgraphs"][0]["heads"] == [[2, 0, 0]]


def _dense_net():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(8, activation="relu"), mx.gluon.nn.Dense(3))
    net.initialize(mx.init.Uniform(0.5))
    return net


def test_hybridize_with_the_default_backend(tmp_path):
    net = _dense_net()
    x = mx.nd.random.uniform(shape=(4, 5))
    plain = net(x).asnumpy()
    net.hybridize(backend="default", op_names=["FullyConnected"])
    np.testing.assert_allclose(net(x).asnumpy(), plain, rtol=1e-6)
    net.export(str(tmp_path / "net"))
    saved = json.loads((tmp_path / "net-symbol.json").read_text())
    assert [n["name"] for n in saved["nodes"] if n["op"] == "_CachedOp"] == [
        "_CachedOp0", "_CachedOp1"]
    block = mx.gluon.SymbolBlock.imports(str(tmp_path / "net-symbol.json"), ["data"],
                                         str(tmp_path / "net-0000.params"))
    np.testing.assert_allclose(block(x).asnumpy(), plain, rtol=1e-6)


def test_block_optimize_for_partitions_without_running():
    net = _dense_net()
    x = mx.nd.random.uniform(shape=(4, 5))
    plain = net(x).asnumpy()
    net.optimize_for(x, backend="default_v2", op_names=["FullyConnected", "Activation"])
    graph = net._cached_graph[1]
    assert [n["op"] for n in json.loads(graph.tojson())["nodes"] if n["op"] != "null"] == [
        "_CachedOp"]  # both layers and the relu between them
    np.testing.assert_allclose(net(x).asnumpy(), plain, rtol=1e-6)
    with pytest.raises(mx.MXNetError, match="Must specify"):
        net.optimize_for(x)
