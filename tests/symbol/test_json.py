"""Symbol JSON: dagnet's own round trip is exact, files written by MXNet 1.9.1 load with
the arguments, outputs, auxiliary states, internals, attributes, shapes and dtypes MXNet
reported (``data/expected.json``, written by ``data/make_fixtures.py``), dagnet writes
them back in MXNet's layout, and broken files fail with errors that say what is wrong."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pytest

import dagnet as mx
from dagnet.symbol import SymbolFormatError

DATA = Path(__file__).parent / "data"
EXPECTED = json.loads((DATA / "expected.json").read_text())


def test_fixtures_cover_every_file():
    assert sorted(p.stem for p in DATA.glob("*.json") if p.stem != "expected") == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_mxnet_file_loads_as_mxnet_reported(name):
    expected = EXPECTED[name]
    sym = mx.sym.load(str(DATA / f"{name}.json"))
    assert sym.list_arguments() == expected["arguments"]
    assert sym.list_outputs() == expected["outputs"]
    assert sym.list_auxiliary_states() == expected["auxiliary_states"]
    assert sym.get_internals().list_outputs() == expected["internals"]
    assert sym.attr_dict() == expected["attr_dict"]
    shapes = sym.infer_shape(**expected["shapes_given"])
    assert [[list(s) for s in part] for part in shapes] == [
        expected["arg_shapes"], expected["out_shapes"], expected["aux_shapes"]]
    types = sym.infer_type(**expected["types_given"])
    assert [[np.dtype(t).name for t in part] for part in types] == [
        expected["arg_types"], expected["out_types"], expected["aux_types"]]


@pytest.mark.parametrize("name", ["mlp", "arith_multi"])
def test_tojson_of_mxnet_file_is_byte_identical(name):
    text = (DATA / f"{name}.json").read_text()
    assert mx.sym.load_json(text).tojson() == text


def test_tojson_of_mxnet_conv_net_matches_but_for_mkldnn_workspace():
    # MXNet built with MKL-DNN gives max pooling a hidden workspace output, which only
    # shows in node_row_ptr; everything else is written identically
    text = (DATA / "lenet_bn.json").read_text()
    ours, theirs = json.loads(mx.sym.load_json(text).tojson()), json.loads(text)
    ours.pop("node_row_ptr"), theirs.pop("node_row_ptr")
    assert ours == theirs


def test_old_format_hidden_keys_become_dunder_keys():
    sym = mx.sym.load(str(DATA / "old_format.json"))
    assert sym.attr_dict()["data"] == {"__ctx_group__": "stage1", "ctx_group": "stage1",
                                       "__lr_mult__": "0.2", "lr_mult": "0.2"}
    again = json.loads(sym.tojson())
    assert again["attrs"] == {"mxnet_version": ["int", 10901]}
    assert again["nodes"][0]["attrs"] == {"__ctx_group__": "stage1", "__lr_mult__": "0.2"}


def build_net():
    x = mx.sym.Variable("data", shape=(0, 3, 8, 8), init=mx.init.Xavier(), lr_mult=0.1)
    with mx.AttrScope(ctx_group="g1", __note__="hi"):
        net = mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, name="c")
        net = mx.sym.BatchNorm(net, name="bn", output_mean_var=True)
    return mx.sym.Group([mx.sym.reshape(net[0], shape=(0, -1)), net[1],
                         (2 ** net[2] - 1) % 3, mx.sym.topk(net[2], k=1)])


def test_dagnet_round_trip_is_exact(tmp_path):
    net = build_net()
    text = net.tojson()
    assert mx.sym.load_json(text).tojson() == text
    net.save(str(tmp_path / "net.json"))
    loaded = mx.sym.load(str(tmp_path / "net.json"))
    assert loaded.tojson() == text
    assert loaded.attr_dict() == net.attr_dict()
    assert loaded.infer_shape(data=(2, 3, 8, 8)) == net.infer_shape(data=(2, 3, 8, 8)) == (
        [(2, 3, 8, 8), (4, 3, 3, 3), (4,), (4,), (4,)], [(2, 144), (4,), (4,), (1,)],
        [(4,), (4,)])
    assert pickle.loads(pickle.dumps(net)).tojson() == text


def test_json_layout_and_versions():
    graph = json.loads(build_net().tojson())
    bn = next(n for n in graph["nodes"] if n["name"] == "bn")
    # the moving statistics are mutated by BatchNorm: nnvm's version 1
    assert [entry[2] for entry in bn["inputs"]] == [0, 0, 0, 1, 1]
    assert graph["arg_nodes"] == [i for i, n in enumerate(graph["nodes"]) if n["op"] == "null"]
    assert graph["node_row_ptr"][-1] == sum(
        {"BatchNorm": 3, "topk": 1}.get(n["op"], 1) for n in graph["nodes"])


def base_graph():
    fc = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=3, name="fc")
    return json.loads(fc.tojson())


def load_changed(change):
    graph = base_graph()
    change(graph)
    return mx.sym.load_json(json.dumps(graph))


def test_unknown_operator_names_operator_and_node():
    def change(g):
        g["nodes"][3]["op"] = "FancyOp"
    with pytest.raises(SymbolFormatError, match="node 'fc' uses operator 'FancyOp'"):
        load_changed(change)


def test_newer_format_is_refused():
    def change(g):
        g["attrs"]["mxnet_version"] = ["int", 20000]
    with pytest.raises(SymbolFormatError, match="MXNet 2.0.0, a newer format"):
        load_changed(change)


@pytest.mark.parametrize("text, match", [
    ('{"nodes": [', "could not be parsed"),
    ("[1, 2]", "must be an object with 'nodes' and 'heads'"),
    ('{"nodes": [], "heads": []}', "no heads"),
    ('{"nodes": [3], "heads": [[0, 0, 0]]}', "node 0 is 3"),
])
def test_malformed_json(text, match):
    with pytest.raises(SymbolFormatError, match=match) as info:
        mx.sym.load_json(text)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("change, match", [
    (lambda g: g["nodes"][3].update(inputs=g["nodes"][3]["inputs"][:2]),
     r"node 'fc' \(operator 'FullyConnected'\) has 2 inputs; the operator takes 3"),
    (lambda g: g["nodes"][3]["attrs"].update(no_bias="True"),
     "has 3 inputs; the operator takes 2"),
    (lambda g: g["nodes"][3]["attrs"].update(num_hidden="abc"), "node 'fc'.*num_hidden"),
    (lambda g: g.update(heads=[[9, 0, 0]]), "heads refers to node 9, which does not exist"),
    (lambda g: g.update(heads=[[3, 5, 0]]), "output 5 of node 'fc', which has 1 output"),
    (lambda g: g["nodes"][3]["inputs"].__setitem__(0, [7, 0, 0]), "refers to node 7"),
    (lambda g: g["nodes"][0].update(inputs=[[3, 0, 0]]),
     "node 'x' refers to node 3, which does not come before it"),
    (lambda g: g["attrs"].update(mxnet_version=["int", "x"]), "unreadable mxnet_version"),
])
def test_inconsistent_json(change, match):
    with pytest.raises(SymbolFormatError, match=match):
        load_changed(change)


def test_unknown_operator_keys_are_kept():
    # MXNet parameters that dagnet's operator does not declare survive a round trip
    def change(g):
        g["nodes"][3]["attrs"]["workspace"] = "512"
    sym = load_changed(change)
    assert sym.attr("workspace") == "512"
    assert '"workspace": "512"' in sym.tojson()


def test_subgraphs_on_an_operator_that_holds_none_are_refused():
    graph = {"nodes": [{"op": "null", "name": "x", "inputs": []},
                       {"op": "relu", "name": "r", "inputs": [[0, 0, 0]],
                        "subgraphs": [{"nodes": [], "heads": []}]}],
             "arg_nodes": [0], "heads": [[1, 0, 0]]}
    with pytest.raises(SymbolFormatError, match="node 'r' has 'subgraphs', but operator"):
        mx.sym.load_json(json.dumps(graph))
