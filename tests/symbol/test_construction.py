"""Making symbols: variables, automatic names, arithmetic, grouping, indexing,
multi-output operators, internals, children, composition, copies.  Expected values are
what MXNet 1.9.1 gives for the same calls."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest

import dagnet as mx
from dagnet import DagnetError


def mlp():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=4, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=2, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="sm")


# -- automatic names -----------------------------------------------------------------------
def test_operator_gets_lower_case_name_and_input_variables():
    fc = mx.sym.FullyConnected(mx.sym.Variable("a"), num_hidden=10)
    assert fc.name == "fullyconnected0"
    assert fc.list_arguments() == ["a", "fullyconnected0_weight", "fullyconnected0_bias"]
    assert fc.list_outputs() == ["fullyconnected0_output"]
    assert mx.sym.FullyConnected(mx.sym.Variable("a"), num_hidden=3).name == "fullyconnected1"


def test_missing_data_input_becomes_a_variable_too():
    fc = mx.sym.FullyConnected(num_hidden=3, name="fcx")
    assert fc.list_arguments() == ["fcx_data", "fcx_weight", "fcx_bias"]


def test_no_bias_drops_the_bias_input():
    fc = mx.sym.FullyConnected(data=mx.sym.Variable("a"), num_hidden=3, no_bias=True)
    assert fc.list_arguments() == ["a", "fullyconnected0_weight"]


def test_alias_and_canonical_name_share_a_lower_case_counter():
    a = mx.sym.Variable("a")
    assert mx.sym.reshape(a, shape=(2,)).name == "reshape0"
    assert mx.sym.Reshape(a, shape=(2,)).name == "reshape1"
    assert mx.sym.Activation(a, act_type="relu").name == "activation0"
    assert mx.sym.relu(a).name == "relu0"


@pytest.mark.parametrize("make, name", [
    (lambda a, b: a + b, "_plus0"), (lambda a, b: a - b, "_minus0"),
    (lambda a, b: a * b, "_mul0"), (lambda a, b: a / b, "_div0"),
    (lambda a, b: a % b, "_mod0"), (lambda a, b: a ** b, "_power0"),
    (lambda a, b: a + 1, "_plusscalar0"), (lambda a, b: 1 + a, "_plusscalar0"),
    (lambda a, b: a - 1, "_minusscalar0"), (lambda a, b: 1 - a, "_rminusscalar0"),
    (lambda a, b: a * 2, "_mulscalar0"), (lambda a, b: 2 * a, "_mulscalar0"),
    (lambda a, b: a / 2, "_divscalar0"), (lambda a, b: 1 / a, "_rdivscalar0"),
    (lambda a, b: a % 2, "_modscalar0"), (lambda a, b: 3 % a, "_rmodscalar0"),
    (lambda a, b: a ** 2, "_powerscalar0"), (lambda a, b: 2 ** a, "_rpower_scalar0"),
    (lambda a, b: -a, "_mulscalar0"), (lambda a, b: abs(a), "abs0"),
    (lambda a, b: a == b, "_equal0"), (lambda a, b: a != b, "_not_equal0"),
    (lambda a, b: a > b, "_greater0"), (lambda a, b: a >= b, "_greater_equal0"),
    (lambda a, b: a < b, "_lesser0"), (lambda a, b: a <= b, "_lesser_equal0"),
    (lambda a, b: a == 1, "_equal_scalar0"), (lambda a, b: a != 1, "_not_equal_scalar0"),
    (lambda a, b: a > 1, "_greater_scalar0"), (lambda a, b: a >= 1, "_greater_equal_scalar0"),
    (lambda a, b: a < 1, "_lesser_scalar0"), (lambda a, b: a <= 1, "_lesser_equal_scalar0"),
    (lambda a, b: 1 > a, "_lesser_scalar0"), (lambda a, b: 1 < a, "_greater_scalar0"),
])
def test_arithmetic_names_follow_mxnet(make, name):
    assert make(mx.sym.Variable("a"), mx.sym.Variable("b")).name == name


def test_arithmetic_operators_and_scalars():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    assert (-a).list_attr() == {"scalar": "-1.0"}
    assert (a + 1.5).list_attr() == {"scalar": "1.5"}
    assert (a + b).list_arguments() == ["a", "b"]
    assert (1 - a).list_arguments() == ["a"]
    assert (a + np.float32(2)).list_attr() == {"scalar": "2.0"}
    json = (a + b).tojson()
    assert '"op": "elemwise_add"' in json
    assert '"op": "_rminus_scalar"' in (1 - a).tojson()
    with pytest.raises(TypeError, match="str is not supported"):
        a + "x"


def test_symbol_has_no_truth_value():
    a = mx.sym.Variable("a")
    with pytest.raises(NotImplementedError, match="truth value"):
        bool(a)
    with pytest.raises(DagnetError):
        bool(a == a)


def test_name_manager_scopes_counters():
    x = mx.sym.Variable("x")
    mx.sym.FullyConnected(x, num_hidden=2)
    with mx.name.NameManager():
        first = mx.sym.FullyConnected(x, num_hidden=2)
        second = mx.sym.FullyConnected(first, num_hidden=2)
    assert (first.name, second.name) == ("fullyconnected0", "fullyconnected1")
    assert mx.sym.FullyConnected(x, num_hidden=2).name == "fullyconnected1"


def test_name_manager_get():
    manager = mx.name.NameManager()
    assert manager.get(None, "foo") == "foo0"
    assert manager.get(None, "foo") == "foo1"
    assert manager.get("given", "foo") == "given"
    assert manager.get(None, "Bar") == "Bar0"
    prefix = mx.name.Prefix("p_")
    assert (prefix.get(None, "foo"), prefix.get("given", "foo")) == ("p_foo0", "p_given")


def test_prefix_names_operators_but_not_variables():
    x = mx.sym.Variable("x")
    with mx.name.Prefix("net_"):
        p1 = mx.sym.FullyConnected(x, num_hidden=2)
        p2 = mx.sym.FullyConnected(p1, num_hidden=2, name="out")
        variable = mx.sym.Variable("pv")
        plus = x + 1
    assert (p1.name, p2.name, variable.name, plus.name) == (
        "net_fullyconnected0", "net_out", "pv", "net__plusscalar0")
    assert p2.list_arguments() == ["x", "net_fullyconnected0_weight", "net_fullyconnected0_bias",
                                   "net_out_weight", "net_out_bias"]


def test_nested_prefix_uses_the_innermost():
    with mx.name.Prefix("outer_"), mx.name.Prefix("inner_"):
        assert mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=2).name == (
            "inner_fullyconnected0")


# -- variables ---------------------------------------------------------------------------------
def test_variable_attributes():
    v = mx.sym.Variable("x", shape=(2, 3), dtype="float32", lr_mult=2, wd_mult=0.5,
                        init=mx.init.Xavier(), attr={"foo": "bar"}, __ctx__="x")
    assert v.list_attr() == {
        "__init__": '["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 3}]',
        "__dtype__": "0", "__wd_mult__": "0.5", "wd_mult": "0.5", "__ctx__": "x",
        "__lr_mult__": "2", "lr_mult": "2", "__shape__": "(2, 3)", "foo": "bar"}
    assert v.name == "x" and v.list_arguments() == ["x"] and v.list_outputs() == ["x"]


@pytest.mark.parametrize("kwargs, attrs", [
    ({"init": "zeros"}, {"__init__": "zeros"}),
    ({"dtype": "float64"}, {"__dtype__": "1"}),
    ({"dtype": np.int32}, {"__dtype__": "4"}),
    ({"dtype": np.float16}, {"__dtype__": "2"}),
    ({"stype": "default"}, {"__storage_type__": "0"}),
    ({"stype": "row_sparse"}, {"__storage_type__": "1"}),
    ({"stype": "csr"}, {"__storage_type__": "2"}),
    ({"shape": 3}, {"__shape__": "3"}),
    ({"__foo__": 3}, {"__foo__": "3"}),
    ({"attr": {"lr_mult": "0.1"}}, {"__lr_mult__": "0.1", "lr_mult": "0.1"}),
])
def test_variable_keyword_attributes(kwargs, attrs):
    assert mx.sym.var("x", **kwargs).list_attr() == attrs


def test_variable_errors():
    with pytest.raises(ValueError, match="double underscores") as info:
        mx.sym.Variable("x", foo=1)
    assert isinstance(info.value, DagnetError)
    with pytest.raises(TypeError, match="name must be a str"):
        mx.sym.Variable(1)
    with pytest.raises(ValueError, match="not a string"):
        mx.sym.Variable("x", attr={"a": 1})
    with pytest.raises(ValueError, match="stype"):
        mx.sym.Variable("x", stype="coo")


# -- groups, indexing, multi-output operators -------------------------------------------------
def test_group_and_indexing():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    fc = mx.sym.FullyConnected(a, num_hidden=3, name="fc")
    group = mx.sym.Group([a, b, fc])
    assert group.list_outputs() == ["a", "b", "fc_output"]
    assert group.name is None and len(group) == 3
    assert group[2].name == "fc" and group["b"].name == "b"
    assert group[1:].list_outputs() == ["b", "fc_output"]
    assert group[-1].name == "fc"  # MXNet rejects negative indices; dagnet counts from the end
    assert [s.name for s in group] == ["a", "b", "fc"]
    assert mx.sym.Group([group, a]).list_outputs() == ["a", "b", "fc_output", "a"]
    with pytest.raises(IndexError, match="out of range"):
        group[3]
    with pytest.raises(TypeError, match="index must be"):
        group[1.0]
    with pytest.raises(ValueError, match="no output 'zz'"):
        group["zz"]
    with pytest.raises(ValueError, match="2 outputs named 'a'"):
        mx.sym.Group([a, a])["a"]
    for bad in ([], [a, 1]):
        with pytest.raises(TypeError, match="list of Symbols"):
            mx.sym.Group(bad)


def test_split_outputs():
    x = mx.sym.Variable("x")
    assert mx.sym.split(x, num_outputs=3).list_outputs() == [
        "split0_output0", "split0_output1", "split0_output2"]
    sp = mx.sym.SliceChannel(x, num_outputs=3, name="sp")
    assert len(sp) == 3 and [s.list_outputs() for s in sp] == [
        ["sp_output0"], ["sp_output1"], ["sp_output2"]]
    assert sp["sp_output1"].list_outputs() == ["sp_output1"]
    assert sp[1].name == "sp" and sp[1].list_attr() == {"num_outputs": "3"}
    assert sp.get_internals().list_outputs() == ["x", "sp_output0", "sp_output1", "sp_output2"]
    assert (sp[1] + 1).get_children().list_outputs() == ["sp_output1"]


def test_topk_outputs_depend_on_ret_typ():
    x = mx.sym.Variable("x")
    assert mx.sym.topk(x, k=2, ret_typ="both").list_outputs() == [
        "topk0_output0", "topk0_output1"]
    assert mx.sym.topk(x, k=2).list_outputs() == ["topk1_output"]


def test_batch_norm_hidden_outputs_and_auxiliary_states():
    bn = mx.sym.BatchNorm(mx.sym.Variable("x"), name="bn")
    assert bn.list_arguments() == ["x", "bn_gamma", "bn_beta"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert bn.list_inputs() == ["x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"]
    assert bn.list_outputs() == ["bn_output"]
    assert bn.get_internals().list_outputs() == [
        "x", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var", "bn_output"]
    with_stats = mx.sym.BatchNorm(mx.sym.Variable("x"), name="bn", output_mean_var=True)
    assert with_stats.list_outputs() == ["bn_output", "bn_mean", "bn_var"]


def test_variadic_operator_counts_its_inputs():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    cat = mx.sym.Concat(a, b, dim=1)
    assert cat.list_attr() == {"dim": "1", "num_args": "2"} and cat.name == "concat0"
    assert mx.sym.concat(a, b, dim=1).name == "concat1"
    with pytest.raises(ValueError, match="num_args"):
        mx.sym.Concat(dim=0)


# -- internals and children -------------------------------------------------------------------
def test_internals_in_graph_order_and_picked_by_name():
    internals = mlp().get_internals()
    assert internals.list_outputs() == [
        "data", "fc1_weight", "fc1_bias", "fc1_output", "relu1_output", "fc2_weight",
        "fc2_bias", "fc2_output", "sm_label", "sm_output"]
    assert internals["fc1_output"].list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    assert internals["relu1_output"].name == "relu1"
    assert internals["fc1_weight"].name == "fc1_weight"
    assert internals[3].name == "fc1"
    assert internals.get_internals().list_outputs() == internals.list_outputs()
    # a picked internal output is a symbol like any other: it composes further
    head = mx.sym.FullyConnected(internals["relu1_output"], num_hidden=3, name="head")
    assert head.list_arguments() == ["data", "fc1_weight", "fc1_bias", "head_weight",
                                     "head_bias"]


def test_children():
    net = mlp()
    assert net.get_children().list_outputs() == ["fc2_output", "sm_label"]
    assert net.get_internals()["fc2_output"].get_children().list_outputs() == [
        "relu1_output", "fc2_weight", "fc2_bias"]
    assert mx.sym.Variable("x").get_children() is None
    fc1 = net.get_internals()["fc1_output"]
    assert mx.sym.Group([net, fc1]).get_children().list_outputs() == [
        "fc2_output", "sm_label", "data", "fc1_weight", "fc1_bias"]


# -- composition ------------------------------------------------------------------------------
def test_compose_by_name_keeps_the_original():
    net = mlp()
    composed = net(data=mx.sym.Variable("data2"))
    assert composed.list_arguments() == ["data2", "fc1_weight", "fc1_bias", "fc2_weight",
                                         "fc2_bias", "sm_label"]
    assert net.list_arguments()[0] == "data"
    renamed = net(data=mx.sym.Variable("data2"), name="new")
    assert renamed.name == "new" and renamed.list_outputs() == ["new_output"]


def test_compose_with_a_network():
    inner = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=5, name="inner")
    outer = mlp()(data=inner)
    assert outer.list_arguments() == ["x", "inner_weight", "inner_bias", "fc1_weight",
                                      "fc1_bias", "fc2_weight", "fc2_bias", "sm_label"]
    assert outer.infer_shape(x=(2, 7))[1] == [(2, 2)]


def test_compose_positionally_in_argument_order():
    # MXNet only composes an operator's own symbol positionally; dagnet any symbol
    composed = mlp()(mx.sym.Variable("d"), mx.sym.Variable("W"))
    assert composed.list_arguments()[:3] == ["d", "W", "fc1_bias"]


def test_compose_errors():
    net, other = mlp(), mx.sym.Variable("d")
    with pytest.raises(ValueError, match="no variable 'nope'"):
        net(nope=other)
    with pytest.raises(TypeError, match="not both"):
        net(other, data=other)
    with pytest.raises(TypeError, match="must be a Symbol"):
        net(data=1)
    with pytest.raises(DagnetError, match="2 outputs"):
        net(data=mx.sym.Group([other, other]))
    with pytest.raises(TypeError, match="10 symbols for 6 arguments"):
        net(*[other] * 10)


def test_operator_call_errors():
    x = mx.sym.Variable("x")
    with pytest.raises(ValueError, match="no parameter 'foo'"):
        mx.sym.FullyConnected(x, num_hidden=3, foo=2)
    with pytest.raises(ValueError, match="num_hidden"):
        mx.sym.FullyConnected(x)
    with pytest.raises(TypeError, match="no input 'nodata'"):
        mx.sym.FullyConnected(x, nodata=x, num_hidden=3)
    with pytest.raises(DagnetError, match="2 outputs"):
        mx.sym.FullyConnected(mx.sym.Group([x, x]), num_hidden=3)
    with pytest.raises(TypeError, match="both positionally and by name"):
        mx.sym.FullyConnected(x, data=x, num_hidden=3)


def test_parameters_positionally_after_inputs():
    x, w, b = (mx.sym.Variable(n) for n in "xwb")
    assert mx.sym.FullyConnected(x, w, b, 5).list_attr() == {"num_hidden": "5"}


# -- fluent methods, text, copies -------------------------------------------------------------
def test_fluent_methods():
    a = mx.sym.Variable("a")
    assert a.reshape((2, 3)).list_attr() == {"shape": "(2, 3)"}
    assert a.reshape(shape=(2, 3)).name == "reshape1"
    assert a.sum(axis=1).list_attr() == {"axis": "1"}
    assert "reshape" in dir(a) and "sum" in dir(a)
    with pytest.raises(AttributeError):
        _ = a.no_such_method


def test_astype_is_a_cast():
    cast = mx.sym.Variable("a").astype("int32", name="c")
    node = json.loads(cast.tojson())["nodes"][-1]
    assert (node["op"], node["name"], node["attrs"]) == ("Cast", "c", {"dtype": "int32"})
    assert cast.infer_type(a=np.float32)[1] == [np.int32]


def test_repr_and_debug_str():
    fc = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=3, name="fc")
    assert repr(fc) == str(fc) == "<Symbol fc>"
    assert repr(mx.sym.Group([fc, fc])) == "<Symbol group [fc_output, fc_output]>"
    assert fc.debug_str() == (
        "Symbol Outputs:\n\toutput[0]=fc(0)\nVariable:x\nVariable:fc_weight\nVariable:fc_bias\n"
        "--------------------\nOp:FullyConnected, Name=fc\nInputs:\n\targ[0]=x(0) version=0\n"
        "\targ[1]=fc_weight(0) version=0\n\targ[2]=fc_bias(0) version=0\nAttrs:\n"
        "\tnum_hidden=3\n")
    plus = mx.sym.Variable("x") * 2 + mx.sym.Variable("y")
    assert plus.debug_str() == (
        "Symbol Outputs:\n\toutput[0]=_plus0(0)\nVariable:x\n--------------------\n"
        "Op:_mul_scalar, Name=_mulscalar0\nInputs:\n\targ[0]=x(0) version=0\nAttrs:\n"
        "\tscalar=2\nVariable:y\n--------------------\nOp:elemwise_add, Name=_plus0\n"
        "Inputs:\n\targ[0]=_mulscalar0(0)\n\targ[1]=y(0) version=0\n")


def test_copies_and_pickle_are_independent_graphs():
    net = mlp()
    for other in (copy.deepcopy(net), copy.copy(net), pickle.loads(pickle.dumps(net))):
        assert other.tojson() == net.tojson()
        other.get_internals()["fc1_output"]._set_attr(__mark__="1")
        assert "__mark__" not in net.attr_dict()["fc1"]
