"""Symbol attributes: ``attr``, ``list_attr``, ``attr_dict``, ``_set_attr``,
``mx.AttrScope`` and the attributes of automatically created variables, as MXNet 1.9.1
reports them (``ctx_group``, ``lr_mult`` and the other hidden keys stored as ``__key__``
and listed both ways)."""

from __future__ import annotations

import pytest

import dagnet as mx
from dagnet import DagnetError


def test_attr_finds_hidden_keys_by_either_name():
    a = mx.sym.Variable("a", lr_mult=2.0)
    assert a.attr("lr_mult") == a.attr("__lr_mult__") == "2.0"
    assert a.attr("zzz") is None
    b = mx.sym.Variable("b", __foo__="bar")
    assert b.attr("__foo__") == "bar" and b.attr("foo") is None  # only hidden keys alias


def test_operator_parameters_are_attributes():
    fc = mx.sym.FullyConnected(mx.sym.Variable("a"), num_hidden=10)
    assert fc.attr("num_hidden") == "10"
    assert fc.list_attr() == {"num_hidden": "10"}


def test_attr_scope_reaches_operators_and_their_variables():
    with mx.AttrScope(ctx_group="dev1", __foo__="bar"):
        v = mx.sym.Variable("v")
        fc = mx.sym.FullyConnected(v, num_hidden=3, name="fc")
    shared = {"__ctx_group__": "dev1", "__foo__": "bar", "ctx_group": "dev1"}
    assert v.list_attr() == shared
    assert fc.list_attr() == {**shared, "num_hidden": "3"}
    assert fc.attr("ctx_group") == "dev1" and fc.attr("foo") is None
    assert fc.attr_dict() == {name: {**shared, "num_hidden": "3"}
                              for name in ("fc", "fc_weight", "fc_bias")} | {"v": shared}
    outside = mx.sym.Variable("w")
    assert outside.list_attr() == {}


def test_nested_attr_scopes_add_up_and_given_attrs_win():
    with mx.AttrScope(ctx_group="dev1", __foo__="bar"):
        with mx.AttrScope(ctx_group="dev2", x="y"):
            w = mx.sym.Variable("w", attr={"x": "z"})
        after = mx.sym.Variable("after")
    assert w.list_attr() == {"__ctx_group__": "dev2", "ctx_group": "dev2", "__foo__": "bar",
                             "x": "z"}
    assert after.list_attr() == {"__ctx_group__": "dev1", "ctx_group": "dev1", "__foo__": "bar"}
    assert mx.AttrScope is mx.attribute.AttrScope


def test_attr_scope_values_must_be_strings():
    with pytest.raises(ValueError, match="not a string") as info:
        mx.AttrScope(a=1)
    assert isinstance(info.value, DagnetError)


def test_operator_attr_argument():
    d = mx.sym.Variable("d")
    fc = mx.sym.FullyConnected(d, num_hidden=3, name="fc", attr={"lr_mult": "0.1",
                                                                 "ctx_group": "g"})
    expected = {"num_hidden": "3", "__ctx_group__": "g", "ctx_group": "g", "__lr_mult__": "0.1",
                "lr_mult": "0.1"}
    # nodes without attributes ("d") are left out
    assert fc.attr_dict() == {"fc": expected, "fc_weight": expected, "fc_bias": expected}


def test_plain_non_hidden_key_on_an_operator_is_refused():
    # MXNet takes such a key for an operator parameter and fails; dagnet says what to write
    with pytest.raises(ValueError, match="__foo__"):
        mx.sym.FullyConnected(mx.sym.Variable("d"), num_hidden=3, attr={"foo": "bar"})


def test_operator_attr_values_are_stored_as_strings():
    # MXNet stores str(value) for an operator's attr= (GluonCV passes an initializer);
    # an initializer is stored as its JSON, which reads back as one
    init = mx.init.Xavier(rnd_type="gaussian", factor_type="out", magnitude=2)
    conv = mx.sym.Convolution(mx.sym.Variable("d"), num_filter=2, kernel=(1, 1), name="c",
                              attr={"__init__": init, "__foo__": 1, "lr_mult": 0.5})
    assert conv.attr("__foo__") == "1" and conv.attr("lr_mult") == "0.5"
    assert conv.attr("__init__") == init.dumps()
    assert mx.sym.load_json(conv.tojson()).attr("__init__") == init.dumps()


def test_set_attr():
    s = mx.sym.Variable("s")
    s._set_attr(lr_mult="3", foo="1")
    assert s.list_attr() == {"__lr_mult__": "3", "lr_mult": "3", "foo": "1"}
    assert (s.attr("lr_mult"), s.attr("__lr_mult__"), s.attr("foo")) == ("3", "3", "1")
    with pytest.raises(ValueError, match="not a string"):
        s._set_attr(x=1)
    sp = mx.sym.split(mx.sym.Variable("x"), num_outputs=2, name="sp")
    sp._set_attr(__mark__="1")  # one node behind both outputs
    assert sp[1].attr("__mark__") == "1"
    with pytest.raises(DagnetError, match="set them on each output"):
        mx.sym.Group([s, sp[0]])._set_attr(__mark__="2")


def test_group_attributes():
    a = mx.sym.Variable("a", lr_mult=2.0)
    s = mx.sym.Variable("s", attr={"foo": "1", "lr_mult": "3"})
    group = mx.sym.Group([a, s])
    assert group.attr("lr_mult") is None
    assert group.list_attr() == {"__lr_mult__": "2.0", "lr_mult": "2.0"}  # the first output's
    assert group.attr_dict() == {"a": {"__lr_mult__": "2.0", "lr_mult": "2.0"},
                                 "s": {"foo": "1", "__lr_mult__": "3", "lr_mult": "3"}}


def test_recursive_list_attr_is_gone_as_in_mxnet():
    with pytest.raises(DeprecationWarning, match="attr_dict"):
        mx.sym.Variable("a").list_attr(recursive=True)


def test_auto_created_variables_carry_parameters_and_scope():
    with mx.AttrScope(ctx_group="g"):
        conv = mx.sym.Convolution(mx.sym.Variable("x"), kernel=(3, 3), num_filter=4, name="c")
    weight = conv.get_internals()["c_weight"]
    assert weight.list_attr() == {"kernel": "(3, 3)", "num_filter": "4", "__ctx_group__": "g",
                                  "ctx_group": "g"}


def test_scalar_and_bn_attributes():
    bn = mx.sym.BatchNorm(mx.sym.Variable("x"), fix_gamma=False, eps=1e-3, name="bn")
    assert bn.list_attr() == {"fix_gamma": "False", "eps": "0.001"}
    assert (mx.sym.Variable("x") * 2.5).list_attr() == {"scalar": "2.5"}
