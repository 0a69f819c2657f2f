"""OperatorProperty + Operator classes turned into Op records: arguments and
auxiliary states, backward dependencies, in-place options, resources, and the
operator created once per parameter set and device."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet
from dagnet._errors import OperatorError, ShapeError
from dagnet.context import Context
from dagnet.engine import RunContext
from dagnet.operator import (
    REQUIRED,
    Field,
    Gradient,
    NoGradient,
    OpContext,
    Operator,
    OperatorProperty,
    OpReqType,
    Params,
    assign,
    get_op,
    op_from_property,
    shape_is_known,
)
from dagnet.resource import ResourceKind

W, A = OpReqType.WRITE, OpReqType.ADD


# -- a FullyConnected-like operator: partial shape inference, a parameter-dependent layout --------
class FCParam(Params):
    num_hidden = Field(int, 4, "output width", low=1)
    no_bias = Field(bool, False, "no bias term")


class FCOperator(Operator):
    def __init__(self, attrs):
        self.attrs = attrs
        self.seen = []

    def forward(self, ctx, in_data, req, out_data, aux):
        assert ctx.requested and aux == []
        x, w = in_data[0], in_data[1]
        y = x @ w.T + (0 if self.attrs.no_bias else in_data[2])
        assign(out_data[0], req[0], y)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        self.seen.append([a is None for a in out_data])
        (g,), x, w = out_grad, in_data[0], in_data[1]
        assign(in_grad[0], req[0], g @ w)
        assign(in_grad[1], req[1], g.T @ x)
        if not self.attrs.no_bias:
            assign(in_grad[2], req[2], g.sum(axis=0))


class FCProperty(OperatorProperty):
    """y = x @ weight.T + bias."""

    params = FCParam
    name = "fc_t"
    created = []

    def list_arguments(self):
        return ["data", "weight"] if self.attrs.no_bias else ["data", "weight", "bias"]

    def infer_shape(self, in_shapes):
        data = in_shapes[0]
        if not shape_is_known(data):
            return None
        n = self.attrs.num_hidden
        args = [data, (n, data[1])] + ([] if self.attrs.no_bias else [(n,)])
        return args, [(data[0], n)], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0], in_data[1]]  # out_data[0] may be freed

    def forward_resource(self, in_shapes=None):
        return ["temp_space"]

    def create_operator(self, ctx):
        operator = FCOperator(self.attrs)
        FCProperty.created.append((self.attrs, ctx, operator))
        return operator


def test_fully_connected_like_record(call):
    fwd, bwd = op_from_property(FCProperty)
    attrs = fwd.parse_params({"num_hidden": 3})
    assert fwd.name == "fc_t" and fwd.description == "y = x @ weight.T + bias."
    assert fwd.list_inputs(attrs) == ["data", "weight", "bias"] and fwd.mutated_inputs(attrs) == []
    assert fwd.gradient == Gradient("_backward_fc_t", ("out_grad", "in_data"))
    no_bias = fwd.parse_params({"num_hidden": 3, "no_bias": True})
    assert fwd.n_inputs(no_bias) == 2 and bwd.n_outputs(no_bias) == 2 and bwd.n_outputs(attrs) == 3
    # partial inference fills the weight and bias shapes from the data shape
    assert fwd.shapes(attrs, [(5, 2), None, None]) == ([(5, 2), (3, 2), (3,)], [(5, 3)])
    assert fwd.shapes(attrs, [None, None, None]) == ([None, None, None], [None])
    with pytest.raises(ShapeError, match=r"operator 'fc_t', input 'weight'"):
        fwd.shapes(attrs, [(5, 2), (3, 9), None])
    assert [r.kind for r in fwd.resource_requests(attrs)] == [ResourceKind.TEMP_SPACE]
    assert bwd.list_inputs(attrs) == ["output_grad", "data", "weight", "bias"]

    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((5, 2)), rng.standard_normal((3, 2)), rng.standard_normal(3)
    (y,) = call(fwd, attrs, [x, w, b], requested=["temp"])
    np.testing.assert_allclose(y, x @ w.T + b)
    g = rng.standard_normal((5, 3))
    zeros = [np.zeros_like(x), np.zeros_like(w), np.zeros_like(b)]
    grads = call(bwd, attrs, [g, x, w, b], outputs=zeros)
    np.testing.assert_allclose(grads[0], g @ w)
    np.testing.assert_allclose(grads[1], g.T @ x)
    np.testing.assert_allclose(grads[2], g.sum(0))
    operator = FCProperty.created[-1][2]
    assert operator.seen == [[True]]  # out_data was not declared, so the operator gets None


def test_operator_created_once_per_params_and_device():
    FCProperty.created.clear()
    fwd, bwd = op_from_property(FCProperty, "fc_cache_t")
    attrs = fwd.parse_params({"num_hidden": 2})
    x, w, b = np.ones((1, 2)), np.ones((2, 2)), np.ones(2)

    def run(op, attrs, inputs, outputs, device):
        ctx = OpContext(True, RunContext(device), ["temp"], np)
        op.kernel_for("cpu")(attrs, ctx, inputs, [W] * len(outputs), outputs)

    for _ in range(3):
        run(fwd, attrs, [x, w, b], [np.zeros((1, 2))], Context("cpu", 0))
    run(
        bwd,
        attrs,
        [np.ones((1, 2)), x, w, b],
        [np.zeros((1, 2)), np.zeros((2, 2)), np.zeros(2)],
        Context("cpu", 0),
    )
    assert len(FCProperty.created) == 1  # forward and backward share the operator
    run(fwd, attrs, [x, w, b], [np.zeros((1, 2))], Context("cpu", 1))
    run(
        fwd,
        fwd.parse_params({"num_hidden": 2, "no_bias": False}),
        [x, w, b],
        [np.zeros((1, 2))],
        Context("cpu", 1),
    )  # an equal parameter set is the same key
    other = fwd.parse_params({"num_hidden": 2, "no_bias": True})
    run(fwd, other, [x, w], [np.zeros((1, 2))], Context("cpu", 0))
    assert [(a.no_bias, str(c)) for a, c, _ in FCProperty.created] == [
        (False, "cpu(0)"),
        (False, "cpu(1)"),
        (True, "cpu(0)"),
    ]


# -- a BatchNorm-like operator: auxiliary states become mutated inputs ----------------------------
class BNOperator(Operator):
    def forward(self, ctx, in_data, req, out_data, aux):
        (x,), (moving_mean,) = in_data, aux
        mean = x.mean(axis=0)
        if ctx.is_train:
            moving_mean[...] = 0.5 * moving_mean + 0.5 * mean
        assign(out_data[0], req[0], x - mean)
        assign(out_data[1], req[1], mean)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        assert len(aux) == 1 and aux[0] is not None and out_data == [None, None]
        g = out_grad[0]
        assign(in_grad[0], req[0], g - g.mean(axis=0))


class BNProperty(OperatorProperty):
    def list_outputs(self):
        return ["output", "mean"]

    def num_visible_outputs(self):
        return 1

    def list_auxiliary_states(self):
        return ["moving_mean"]

    def infer_shape(self, in_shapes):
        (data,) = in_shapes
        if data is None:
            return None
        return [data], [data, data[1:]], [data[1:]]

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0]]  # the auxiliary state still comes along (with in_data)

    def backward_inplace_option(self, out_grad, in_data, out_data, in_grad):
        return [(out_grad[0], in_grad[0])]

    def create_operator(self, ctx):
        return BNOperator()


def test_auxiliary_states_are_mutated_inputs_after_the_arguments(call):
    fwd, bwd = op_from_property(BNProperty, "bn_t")
    attrs = fwd.parse_params({})
    assert fwd.list_inputs(attrs) == ["data", "moving_mean"] and fwd.mutated_inputs(attrs) == [1]
    assert fwd.list_arguments(attrs) == ["data"] and fwd.list_auxiliary_states(attrs) == [
        "moving_mean"
    ]
    assert fwd.n_outputs(attrs) == 2 and fwd.n_visible_outputs(attrs) == 1
    assert fwd.shapes(attrs, [(4, 3), None]) == ([(4, 3), (3,)], [(4, 3), (3,)])
    assert fwd.gradient.uses == ("out_grad", "in_data")
    assert bwd.list_inputs(attrs) == ["output_grad", "data", "moving_mean"]
    assert bwd.inplace_pairs(attrs) == [(0, 0)] and bwd.list_outputs(attrs) == ["data_grad"]

    x, moving = np.arange(12.0).reshape(4, 3), np.zeros(3)
    out, mean = np.zeros((4, 3)), np.zeros(3)
    fwd.kernel_for("cpu")(attrs, OpContext(True, None, [], np), [x, moving], [W, W], [out, mean])
    np.testing.assert_allclose(moving, 0.5 * x.mean(0))
    np.testing.assert_allclose(out, x - x.mean(0))
    g = np.ones((4, 3))
    (grad,) = call(bwd, attrs, [g, x, moving], outputs=[g], req=[OpReqType.INPLACE])  # in place
    np.testing.assert_allclose(grad, 0)


# -- a quadratic property, in-place options and the default dependency ----------------------------
class QuadraticParam(Params):
    a = Field(float, 0.0, "")
    b = Field(float, 0.0, "")
    c = Field(float, 0.0, "")


class QuadraticOperator(Operator):
    def __init__(self, attrs):
        self.attrs = attrs

    def forward(self, ctx, in_data, req, out_data, aux):
        x, p = in_data[0], self.attrs
        assign(out_data[0], req[0], x * (p.a * x + p.b) + p.c)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        p = self.attrs
        assign(in_grad[0], req[0], out_grad[0] * (2 * p.a * in_data[0] + p.b))


class DefaultQuadratic(OperatorProperty):
    params = QuadraticParam

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])]

    def create_operator(self, ctx):
        return QuadraticOperator(self.attrs)


def test_defaults_elementwise_inference_and_full_dependency(call):
    fwd, bwd = op_from_property(DefaultQuadratic, "quad_default_t")
    attrs = fwd.parse_params({"a": 1, "b": 2, "c": 3})
    assert fwd.list_inputs(attrs) == ["data"] and fwd.list_outputs(attrs) == ["output"]
    assert fwd.gradient.uses == ("out_grad", "in_data", "out_data")  # MXNet's default: everything
    assert bwd.list_inputs(attrs) == ["output_grad", "data", "output"]
    assert fwd.inplace_pairs(attrs) == [(0, 0)]
    assert fwd.shapes(attrs, [(2, 0)]) == ([(2, 0)], [(2, 0)])
    assert fwd.dtypes(attrs, [np.float16]) == ([np.float16], [np.float16])
    x = np.array([[1.0, 2], [3, 4]])
    np.testing.assert_array_equal(call(fwd, attrs, [x])[0], [[6, 11], [18, 27]])
    y = x.copy()
    call(fwd, attrs, [y], outputs=[y], req=[OpReqType.INPLACE])
    np.testing.assert_array_equal(y, [[6, 11], [18, 27]])


def test_no_gradient_makes_one_op():
    class Floor(DefaultQuadratic):
        no_gradient = "piecewise constant"

    (op,) = op_from_property(Floor, "floor_t")
    assert op.gradient == NoGradient("piecewise constant")


# -- declarations that depend on parameters -------------------------------------------------------
class DepParam(Params):
    need_output = Field(bool, False, "")


class ParamDependent(OperatorProperty):
    params = DepParam

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0]] + (list(out_data) if self.attrs.need_output else [])

    def create_operator(self, ctx):
        return Operator()


def test_dependency_is_read_with_defaults_and_checked_per_parameter_set():
    fwd, bwd = op_from_property(ParamDependent, "dep_t")
    assert fwd.gradient.uses == ("out_grad",)
    with pytest.raises(
        OperatorError,
        match=r"'dep_t'.*needs \['out_data', 'out_grad'\].*"
        r"backward_uses=\('out_grad', 'out_data'\)",
    ):
        fwd.n_inputs(fwd.parse_params({"need_output": True}))
    fwd, bwd = op_from_property(ParamDependent, "dep2_t", backward_uses=("out_data", "out_grad"))
    assert fwd.gradient.uses == ("out_grad", "out_data")
    assert bwd.n_inputs(fwd.parse_params({"need_output": True})) == 2


def test_required_parameters_fall_back_to_declaring_everything():
    class VarParam(Params):
        num_args = Field(int, REQUIRED, "")

    class Variadic(OperatorProperty):
        params = VarParam

        def list_arguments(self):
            return [f"arg{i}" for i in range(self.attrs.num_args)]

        def declare_backward_dependency(self, out_grad, in_data, out_data):
            return [out_grad[0]]

        def create_operator(self, ctx):
            return Operator()

    fwd, bwd = op_from_property(Variadic, "variadic_t")
    assert fwd.gradient.uses == ("out_grad", "in_data", "out_data")
    attrs = fwd.parse_params({"num_args": 3})
    assert fwd.n_inputs(attrs) == 3 and bwd.n_inputs(attrs) == 1 + 3 + 1


# -- mistakes -------------------------------------------------------------------------------------
def test_unfinished_operator_and_property_raise_operator_errors(call):
    class Bare(OperatorProperty):
        pass

    fwd, bwd = op_from_property(Bare, "bare_t")
    with pytest.raises(OperatorError, match="Bare does not implement create_operator"):
        call(fwd, fwd.parse_params({}), [np.ones(2)])

    class ForwardOnly(OperatorProperty):
        def create_operator(self, ctx):
            return Operator()

    fwd, bwd = op_from_property(ForwardOnly, "forward_only_t")
    with pytest.raises(OperatorError, match="Operator does not implement forward"):
        call(fwd, fwd.parse_params({}), [np.ones(2)])
    with pytest.raises(OperatorError, match="Operator does not implement backward"):
        call(bwd, fwd.parse_params({}), [np.ones(2)] * 3, outputs=[np.ones(2)])

    class NotAnOperator(OperatorProperty):
        def create_operator(self, ctx):
            return object()

    fwd, _ = op_from_property(NotAnOperator, "not_op_t")
    with pytest.raises(
        OperatorError, match=r"'not_op_t' \(NotAnOperator\): create_operator\(\) returned"
    ):
        call(fwd, fwd.parse_params({}), [np.ones(2)])


@pytest.mark.parametrize(
    "method, body, pattern",
    [
        ("declare_backward_dependency", lambda self, og, ind, outd: [99], "returned \\[99\\]"),
        (
            "forward_inplace_option",
            lambda self, ind, outd: [(outd[0], ind[0])],
            "forward_inplace_option",
        ),
        (
            "backward_inplace_option",
            lambda self, og, ind, outd, ing: [(outd[0], ing[0])],
            "does not receive out_data",
        ),
        (
            "infer_shape",
            lambda self, shapes: (shapes, [], []),
            r"infer_shape\(\) returned 0 out entries",
        ),
        ("infer_shape", lambda self, shapes: 3, r"infer_shape\(\) must return \(in, out, aux\)"),
        ("list_outputs", lambda self: ["a", "b"], "num_outputs"),
        ("forward_resource", lambda self, shapes=None: [7], "forward_resource"),
    ],
)
def test_property_mistakes_name_the_op(method, body, pattern):
    class Broken(OperatorProperty):
        def declare_backward_dependency(self, out_grad, in_data, out_data):
            return [out_grad[0]]

        def num_outputs(self):
            return 1

        def create_operator(self, ctx):
            return Operator()

    setattr(Broken, method, body)
    with pytest.raises(OperatorError, match=pattern) as info:
        fwd, bwd = op_from_property(Broken, "broken_t")
        attrs = fwd.parse_params({})
        fwd.shapes(attrs, [(2,)])
        bwd.inplace_pairs(attrs)
    assert "'broken_t'" in str(info.value) and isinstance(info.value, dagnet.DagnetError)


def test_name_and_class_are_checked():
    with pytest.raises(OperatorError, match="give the operator a name"):
        op_from_property(DefaultQuadratic)
    with pytest.raises(OperatorError, match="takes an OperatorProperty subclass"):
        op_from_property(QuadraticOperator, "x")


def test_registered_property_ops_are_found(register):
    register(*op_from_property(DefaultQuadratic, "quad_prop_reg_t"))
    assert get_op("_backward_quad_prop_reg_t").forward_op == "quad_prop_reg_t"
