"""mx.viz: print_summary's table, plot_network's graph, and the symbol attributes they read."""

from __future__ import annotations

import builtins
import json
import warnings

import numpy as np
import pytest

import dagnet as mx


def small_net():
    data = mx.sym.Variable("data")
    conv = mx.sym.Convolution(data, name="conv1", num_filter=4, kernel=(3, 3))
    bn = mx.sym.BatchNorm(conv, name="bn1")
    act = mx.sym.Activation(bn, name="relu1", act_type="relu")
    fc = mx.sym.FullyConnected(act, name="fc1", num_hidden=5, lr_mult=0)
    return mx.sym.FullyConnected(fc, name="fc2", num_hidden=3, no_bias=True)


def test_viz_is_visualization():
    assert mx.viz is mx.visualization
    assert mx.viz.print_summary is mx.visualization.print_summary


def test_attributes_passed_as_keywords_become_node_attributes():
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc", num_hidden=2, lr_mult=0,
                               wd_mult=0.5, __extra__="x")
    assert fc.attr("__lr_mult__") == "0"
    assert fc.attr("__wd_mult__") == "0.5"
    assert fc.attr("__extra__") == "x"
    nodes = {n["name"]: n for n in json.loads(fc.tojson())["nodes"]}
    assert nodes["fc_weight"]["attrs"]["__lr_mult__"] == "0"  # the made variables carry them
    assert "lr_mult" not in nodes["fc"]["attrs"]
    with pytest.raises(mx.base.MXNetError, match="no parameter 'lr_mul'"):
        mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, lr_mul=0)


def test_print_summary_counts_parameters(capsys):
    mx.viz.print_summary(small_net(), {"data": (2, 3, 8, 8)})
    out = capsys.readouterr().out
    rows = {line.split("(")[0]: line for line in out.splitlines() if "(" in line}
    assert "4x6x6" in rows["conv1"] and " 112 " in rows["conv1"]  # 3*4*3*3 + 4
    assert " 8 " in rows["bn1"]  # gamma and beta of 4 channels
    # as MXNet counts: an input's "channels" are its first dimension after the batch
    assert " 25 " in rows["fc1"]  # (4 + 1) * 5
    assert " 15 " in rows["fc2"] and "fc1" in rows["fc2"]  # 5 * 3, no bias
    assert "Total params: 160" in out


def test_print_summary_without_shapes(capsys):
    mx.viz.print_summary(small_net())
    out = capsys.readouterr().out
    assert "conv1(Convolution)" in out and "Total params:" in out


def test_print_summary_errors():
    with pytest.raises(TypeError, match="Symbol"):
        mx.viz.print_summary("not a symbol")


def test_plot_network_builds_a_digraph():
    graphviz = pytest.importorskip("graphviz")
    dot = mx.viz.plot_network(small_net(), shape={"data": (2, 3, 8, 8)},
                              dtype={"data": np.float32}, node_attrs={"fixedsize": "false"})
    assert isinstance(dot, graphviz.Digraph)
    source = dot.source
    assert "Convolution" in source and "3x3/1, 4" in source
    assert "fc1_weight" not in source  # weights hidden by default
    assert "4x6x6(float32)" in source
    shown = mx.viz.plot_network(small_net(), hide_weights=False).source
    assert "conv1 -> data" in shown


def test_plot_network_warns_about_repeated_names():
    pytest.importorskip("graphviz")
    net = mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc", num_hidden=4)
    net = mx.sym.FullyConnected(net, name="fc", num_hidden=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mx.viz.plot_network(net)
    assert len(caught) == 1 and "Repeated names: fc" in str(caught[0].message)


def test_plot_network_without_graphviz(monkeypatch):
    real_import = builtins.__import__

    def no_graphviz(name, *args, **kwargs):
        if name == "graphviz":
            raise ImportError("No module named 'graphviz'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_graphviz)
    with pytest.raises(mx.viz.VisualizationError, match="pip install graphviz") as info:
        mx.viz.plot_network(small_net())
    assert isinstance(info.value, mx.base.MXNetError)
