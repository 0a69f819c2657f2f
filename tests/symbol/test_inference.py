"""Shape and type inference with MXNet's conventions: 0 is an unknown dimension,
inference runs both ways to a fixed point, incomplete results are ``(None, None, None)``
with a warning, partial results use ``()`` for nothing known, contradictions raise
:class:`dagnet.ShapeError` / :class:`dagnet.DTypeError` naming the node.  Every expected
value below is what MXNet 1.9.1 returned for the same symbol (where dagnet knows more than
MXNet, the test says so)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dagnet as mx
from dagnet import DTypeError, ShapeError

F32, F64, F16, I32 = np.float32, np.float64, np.float16, np.int32


def mlp():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=128, name="fc1")
    net = mx.sym.Activation(net, act_type="relu", name="relu1")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def conv_net():
    net = mx.sym.Convolution(mx.sym.Variable("data"), kernel=(5, 5), num_filter=20,
                             name="conv1")
    net = mx.sym.BatchNorm(net, name="bn1")
    net = mx.sym.Activation(net, act_type="tanh", name="act1")
    net = mx.sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2), name="pool1")
    net = mx.sym.Convolution(net, kernel=(3, 3), num_filter=8, pad=(1, 1), stride=(2, 2),
                             name="conv2")
    net = mx.sym.Pooling(net, pool_type="avg", kernel=(2, 2), stride=(1, 1), name="pool2")
    net = mx.sym.Dropout(net, p=0.5, name="drop")
    net = mx.sym.Flatten(net, name="flat")
    net = mx.sym.FullyConnected(net, num_hidden=10, name="fc")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def no_warnings(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args, **kwargs)


# -- both ways, to a fixed point --------------------------------------------------------------
def test_both_way_inference_completes_every_shape():
    a, b, c = (mx.sym.Variable(n) for n in "abc")
    d = a * b + b * c
    assert no_warnings(d.infer_shape, a=(2, 0), c=(0, 3)) == (
        [(2, 3), (2, 3), (2, 3)], [(2, 3)], [])


def test_incomplete_shapes_warn_and_return_none():
    a, b, c = (mx.sym.Variable(n) for n in "abc")
    d = a * b + b * c
    with pytest.warns(UserWarning, match=r"a: \(2, 0\), b: \(2, 0\), c: \(2, 0\)"):
        assert d.infer_shape(a=(2, 0)) == (None, None, None)
    with pytest.warns(UserWarning, match=r"a: \(\), b: \(\), c: \(\)"):
        assert d.infer_shape() == (None, None, None)
    assert d.infer_shape_partial(a=(2, 0)) == ([(2, 0)] * 3, [(2, 0)], [])
    assert d.infer_shape_partial() == ([(), (), ()], [()], [])


def test_an_empty_output_of_known_inputs_is_a_size_not_an_unknown():
    # split_v2 at (0, 2, 4) makes an empty first section: MXNet infers and binds it
    x = mx.sym.var("x")
    parts = mx.sym.split_v2(x, indices_or_sections=(0, 2, 4), axis=2)
    sections = [(4, 5, 0, 7), (4, 5, 2, 7), (4, 5, 2, 7), (4, 5, 2, 7)]
    assert no_warnings(parts.infer_shape, x=(4, 5, 6, 7)) == ([(4, 5, 6, 7)], sections, [])
    assert no_warnings((parts[0] * 2).infer_shape, x=(4, 5, 6, 7))[1] == [(4, 5, 0, 7)]
    outputs = parts.bind(mx.cpu(), {"x": mx.nd.ones((4, 5, 6, 7))}).forward()
    assert [o.shape for o in outputs] == sections
    # a 0 given for an argument is still an unknown dimension
    with pytest.warns(UserWarning, match=r"x: \(4, 0\)"):
        assert (x * 2).infer_shape(x=(4, 0)) == (None, None, None)


def test_shapes_positionally_and_as_lists():
    # MXNet accepts neither lists nor positional shapes mixed with names; dagnet does
    d = mx.sym.Variable("a") + mx.sym.Variable("b")
    assert d.infer_shape((2, 3), (2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    assert d.infer_shape([2, 3], b=[2, 3]) == ([(2, 3), (2, 3)], [(2, 3)], [])


def test_inference_argument_errors():
    d = mx.sym.Variable("a") * mx.sym.Variable("b")
    with pytest.raises(KeyError, match="no argument 'zz'; its arguments are a, b"):
        d.infer_shape(zz=(2, 3))
    with pytest.raises(ValueError, match="no argument 'zz'"):
        d.infer_type(zz="float32")
    with pytest.raises(TypeError, match="3 positional values for 2 arguments"):
        d.infer_shape((1,), (1,), (1,))
    with pytest.raises(ShapeError, match="tuple of ints"):
        d.infer_shape(a="x")
    with pytest.raises(DTypeError, match="numpy dtype"):
        d.infer_type(a="no_such_type")


# -- contradictions ---------------------------------------------------------------------------
def test_elementwise_contradiction_names_node_operator_argument_and_shapes():
    a, b, c = (mx.sym.Variable(n) for n in "abc")
    with pytest.raises(ShapeError) as info:
        (a * b + b * c).infer_shape(a=(2, 3), b=(3, 3))
    text = str(info.value)
    for part in ("'_mul0'", "elemwise_mul", "'rhs'", "(3, 3)", "(2, 3)"):
        assert part in text


def test_contradiction_raises_even_while_other_shapes_are_unknown():
    with pytest.raises(ShapeError) as info:
        mlp().infer_shape(data=(32, 784), fc1_weight=(100, 784))
    for part in ("'fc1'", "FullyConnected", "'weight'", "(100, 784)", "(128, 784)"):
        assert part in str(info.value)
    with pytest.raises(ShapeError, match="'fc1'"):
        mlp().infer_shape_partial(data=(32, 784), fc1_weight=(128, 700))


def test_unknown_dimensions_do_not_contradict_a_known_result():
    """A 0 (unknown) dimension on one side of sum or where is not a mismatch."""
    a, b, c = (mx.sym.Variable(n) for n in "abc")
    args, outs, _ = (mx.sym.sum(a, axis=1) + b).infer_shape_partial(a=(0, 3), b=(2,))
    assert args == [(0, 3), (2,)] and outs == [(2,)]
    args, outs, _ = mx.sym.where(c, a, b).infer_shape_partial(c=(0, 3), a=(2, 0))
    assert args == [(2, 3), (2, 3), (2, 3)] and outs == [(2, 3)]
    with pytest.raises(ShapeError, match=r"1-D of length 2"):
        mx.sym.where(c, a, b).infer_shape_partial(c=(5,), a=(2, 3))
    with pytest.raises(ShapeError, match=r"rhs. has shape \(2,\) but \(4,\)"):
        (mx.sym.sum(a, axis=1) + b).infer_shape_partial(a=(4, 3), b=(2,))


def test_type_contradiction():
    with pytest.raises(DTypeError) as info:
        mlp().infer_type(data="float32", fc1_weight="float64")
    for part in ("'fc1'", "FullyConnected", "weight=float64", "float32"):
        assert part in str(info.value)


@pytest.mark.parametrize("make, shapes, node", [
    (lambda x, y: mx.sym.Concat(x, y, dim=1, name="cc"), {"x": (2, 3, 4), "y": (3, 5, 4)}, "cc"),
    (lambda x, y: mx.sym.broadcast_mul(x, y, name="bm"), {"x": (2, 3), "y": (4, 3)}, "bm"),
    (lambda x, y: mx.sym.split(x, num_outputs=3, axis=1, name="sp")[0] + y,
     {"x": (2, 5, 4)}, "sp"),
    (lambda x, y: x + y, {"x": (2, 3), "y": (3, 2)}, "_plus0"),
])
def test_contradictions_name_the_node(make, shapes, node):
    sym = make(mx.sym.Variable("x"), mx.sym.Variable("y"))
    with pytest.raises(ShapeError, match=f"node '{node}'"):
        sym.infer_shape(**shapes)


def test_reshape_that_does_not_divide_is_an_error():
    # MXNet 1.9.1 answers (7, 3) here, silently dropping 3 of the 24 elements
    with pytest.raises(ShapeError, match="node 'rs'"):
        mx.sym.reshape(mx.sym.Variable("x"), shape=(7, -1), name="rs").infer_shape(x=(2, 3, 4))


# -- networks -----------------------------------------------------------------------------------
def test_mlp():
    assert mlp().infer_shape(data=(32, 784)) == (
        [(32, 784), (128, 784), (128,), (10, 128), (10,), (32,)], [(32, 10)], [])
    assert mlp().infer_shape(data=(32, 1, 28, 28))[0][1] == (128, 784)


def test_mlp_backward_from_the_label():
    # MXNet leaves the biases unknown; their shapes follow from num_hidden alone
    assert mlp().infer_shape_partial(softmax_label=(32,)) == (
        [(), (), (128,), (), (10,), (32,)], [()], [])


def test_conv_net_with_batch_norm():
    net = conv_net()
    assert net.list_arguments() == ["data", "conv1_weight", "conv1_bias", "bn1_gamma",
                                    "bn1_beta", "conv2_weight", "conv2_bias", "fc_weight",
                                    "fc_bias", "softmax_label"]
    assert net.list_auxiliary_states() == ["bn1_moving_mean", "bn1_moving_var"]
    assert net.infer_shape(data=(8, 1, 28, 28)) == (
        [(8, 1, 28, 28), (20, 1, 5, 5), (20,), (20,), (20,), (8, 20, 3, 3), (8,), (10, 200),
         (10,), (8,)], [(8, 10)], [(20,), (20,)])
    assert net.infer_type(data="float32") == ([F32] * 10, [F32], [F32, F32])


@pytest.mark.parametrize("make, shapes, expected", [
    (lambda x: mx.sym.Pooling(x, global_pool=True, kernel=(1, 1), pool_type="avg"),
     {"data": (2, 3, 7, 7)}, ([(2, 3, 7, 7)], [(2, 3, 1, 1)], [])),
    (lambda x: mx.sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pooling_convention="full"),
     {"data": (2, 3, 8, 8)}, ([(2, 3, 8, 8)], [(2, 3, 4, 4)], [])),
    (lambda x: mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, no_bias=True,
                                  dilate=(2, 2)),
     {"data": (2, 3, 9, 9)}, ([(2, 3, 9, 9), (4, 3, 3, 3)], [(2, 4, 5, 5)], [])),
    (lambda x: mx.sym.Convolution(x, kernel=(3,), num_filter=4),
     {"data": (2, 3, 9)}, ([(2, 3, 9), (4, 3, 3), (4,)], [(2, 4, 7)], [])),
    (lambda x: mx.sym.Convolution(x, kernel=(3, 3), num_filter=4, num_group=2),
     {"data": (2, 4, 9, 9)}, ([(2, 4, 9, 9), (4, 2, 3, 3), (4,)], [(2, 4, 7, 7)], [])),
    (lambda x: mx.sym.Deconvolution(x, kernel=(3, 3), num_filter=4, stride=(2, 2)),
     {"data": (2, 3, 5, 5)}, ([(2, 3, 5, 5), (3, 4, 3, 3)], [(2, 4, 11, 11)], [])),
    (lambda x: mx.sym.FullyConnected(x, num_hidden=5, flatten=False),
     {"data": (2, 3, 7)}, ([(2, 3, 7), (5, 7), (5,)], [(2, 3, 5)], [])),
    (lambda x: mx.sym.BatchNorm(x, output_mean_var=True),
     {"data": (2, 3, 4, 4)}, ([(2, 3, 4, 4), (3,), (3,)], [(2, 3, 4, 4), (3,), (3,)],
                              [(3,), (3,)])),
    (lambda x: mx.sym.LeakyReLU(x, act_type="prelu"),
     {"data": (2, 3, 4, 4)}, ([(2, 3, 4, 4), (3,)], [(2, 3, 4, 4)], [])),
    (lambda x: mx.sym.Embedding(x, input_dim=10, output_dim=4),
     {"data": (2, 3)}, ([(2, 3), (10, 4)], [(2, 3, 4)], [])),
    (lambda x: mx.sym.sum(x, axis=1, keepdims=True),
     {"data": (2, 3, 4)}, ([(2, 3, 4)], [(2, 1, 4)], [])),
    (lambda x: mx.sym.transpose(x, axes=(2, 0, 1)),
     {"data": (2, 3, 4)}, ([(2, 3, 4)], [(4, 2, 3)], [])),
    (lambda x: mx.sym.split(x, num_outputs=3, axis=1),
     {"data": (2, 6, 4)}, ([(2, 6, 4)], [(2, 2, 4)] * 3, [])),
    (lambda x: mx.sym.split(x, num_outputs=3, axis=1, squeeze_axis=True),
     {"data": (2, 3, 4)}, ([(2, 3, 4)], [(2, 4)] * 3, [])),
    (lambda x: mx.sym.topk(x, k=2, ret_typ="both"),
     {"data": (3, 5)}, ([(3, 5)], [(3, 2), (3, 2)], [])),
    (lambda x: mx.sym.topk(x, k=2, axis=0), {"data": (3, 5)}, ([(3, 5)], [(2, 5)], [])),
    (lambda x: mx.sym.topk(x, k=2, ret_typ="mask"), {"data": (3, 5)}, ([(3, 5)], [(3, 5)], [])),
    (lambda x: (2 - x) / 3 * x ** 2, {"data": (4,)}, ([(4,)], [(4,)], [])),
])
def test_operator_shapes(make, shapes, expected):
    assert make(mx.sym.Variable("data")).infer_shape(**shapes) == expected


@pytest.mark.parametrize("spec, reverse, data, out", [
    ((0, -1), False, (2, 3, 4), (2, 12)),
    ((-2,), False, (2, 3, 4), (2, 3, 4)),
    ((-3, 4), False, (2, 3, 4), (6, 4)),
    ((-4, 1, 2, -2), False, (2, 3, 4), (1, 2, 3, 4)),
    ((-4, -1, 2, -2), False, (4, 3, 4), (2, 2, 3, 4)),
    ((-1, 0), True, (10, 5, 4), (50, 4)),
])
def test_reshape_special_codes(spec, reverse, data, out):
    sym = mx.sym.reshape(mx.sym.Variable("x"), shape=spec, reverse=reverse)
    assert sym.infer_shape(x=data) == ([data], [out], [])


def test_concat_and_broadcast():
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    assert mx.sym.Concat(x, y, dim=1).infer_shape(x=(2, 3, 4), y=(2, 5, 4)) == (
        [(2, 3, 4), (2, 5, 4)], [(2, 8, 4)], [])
    assert mx.sym.Concat(x, y, dim=0).infer_shape(x=(2, 3), y=(4, 3))[1] == [(6, 3)]
    assert mx.sym.Concat(x, y, dim=1).infer_shape_partial(x=(2, 0, 4), y=(2, 5, 4)) == (
        [(2, 0, 4), (2, 5, 4)], [(2, 0, 4)], [])
    # MXNet claims (2, 3, 4) for the output here, though y's middle size is unknown
    assert mx.sym.Concat(x, y, dim=1).infer_shape_partial(x=(2, 3, 4)) == (
        [(2, 3, 4), (2, 0, 4)], [(2, 0, 4)], [])
    assert mx.sym.broadcast_add(x, y).infer_shape(x=(2, 1, 4), y=(1, 3, 1)) == (
        [(2, 1, 4), (1, 3, 1)], [(2, 3, 4)], [])
    assert mx.sym.broadcast_add(x, y).infer_shape(x=(3, 4), y=(2, 3, 4))[1] == [(2, 3, 4)]
    assert mx.sym.broadcast_add(x, y).infer_shape_partial(x=(2, 1, 4)) == (
        [(2, 1, 4), ()], [()], [])


def test_shape_attributes():
    v = mx.sym.Variable("v", shape=(4, 5))
    w = mx.sym.Variable("w", shape=(0, 5))
    assert (v + w).infer_shape() == ([(4, 5), (4, 5)], [(4, 5)], [])
    assert (v + w).infer_shape(v=(3, 5)) == ([(3, 5), (3, 5)], [(3, 5)], [])  # given wins
    fc = mx.sym.FullyConnected(mx.sym.Variable("q", shape=(3, 7)), num_hidden=2, name="f")
    assert fc.infer_shape() == ([(3, 7), (2, 7), (2,)], [(3, 2)], [])


def test_groups_and_internals():
    fc1 = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=128, name="fc1")
    fc2 = mx.sym.FullyConnected(fc1, num_hidden=10, name="fc2")
    assert mx.sym.Group([fc1, fc2]).infer_shape(data=(5, 7)) == (
        [(5, 7), (128, 7), (128,), (10, 128), (10,)], [(5, 128), (5, 10)], [])
    assert mlp().get_internals().infer_shape(data=(5, 7))[1] == [
        (5, 7), (128, 7), (128,), (5, 128), (5, 128), (10, 128), (10,), (5, 10), (5,), (5, 10)]


# -- types ----------------------------------------------------------------------------------------
def test_mlp_types():
    assert mlp().infer_type(data="float32") == ([F32] * 6, [F32], [])
    assert mlp().infer_type(data=np.float64) == ([F64] * 6, [F64], [])
    assert mlp().infer_type(data="float16") == ([F16] * 6, [F16], [])
    assert mlp().infer_type_partial() == ([None] * 6, [None], [])
    with pytest.warns(UserWarning, match="data, fc1_weight"):
        assert mlp().infer_type() == (None, None, None)


@pytest.mark.parametrize("make, types, expected", [
    (lambda x, y: mx.sym.topk(x, k=2, ret_typ="both"), {"x": "float32"}, ([F32], [F32, F32], [])),
    (lambda x, y: mx.sym.topk(x, k=2, ret_typ="both", dtype="int32"), {"x": "float32"},
     ([F32], [F32, I32], [])),
    (lambda x, y: mx.sym.topk(x, k=2, axis=0), {"x": "float64"}, ([F64], [F32], [])),
    (lambda x, y: x > y, {"x": "float32"}, ([F32, F32], [F32], [])),
    (lambda x, y: x > 1, {"x": "int32"}, ([I32], [I32], [])),
    (lambda x, y: x + 1.5, {"x": "int32"}, ([I32], [I32], [])),
    (lambda x, y: mx.sym.Cast(x, dtype="float16"), {"x": "float32"}, ([F32], [F16], [])),
])
def test_operator_types(make, types, expected):
    assert make(mx.sym.Variable("x"), mx.sym.Variable("y")).infer_type(**types) == expected


def test_dtype_attributes():
    half = mx.sym.Variable("v", dtype="float16") + mx.sym.Variable("w")
    assert half.infer_type() == ([F16, F16], [F16], [])
    assert (mx.sym.Variable("v", dtype="float64") * 2).infer_type() == ([F64], [F64], [])
