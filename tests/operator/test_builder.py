"""The nnvm-style builder: the record it builds, the backward op it lays out, the
forward-only shape rules it lifts, and the errors ``build()`` raises."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet
from dagnet._errors import OperatorError, ShapeError
from dagnet.operator import (
    XP,
    Field,
    Gradient,
    NoGradient,
    OpBuilder,
    OpReqType,
    Params,
    ZeroGradient,
    assign,
    elemwise_shape,
    forward_shape,
    forward_type,
    get_op,
)
from dagnet.resource import ResourceKind, ResourceRequest


class QuadraticParam(Params):
    a = Field(float, 0.0, "quadratic coefficient")
    b = Field(float, 0.0, "linear coefficient")
    c = Field(float, 0.0, "constant")


def quadratic_forward(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    assign(outputs[0], req[0], x * (attrs.a * x + attrs.b) + attrs.c)


def quadratic_backward(attrs, ctx, inputs, req, outputs):
    out_grad, x = inputs
    assign(outputs[0], req[0], out_grad * (2 * attrs.a * x + attrs.b))


def quadratic_builder(name="quadratic"):
    return (OpBuilder(name)
            .describe("f(x) = a*x**2 + b*x + c")
            .set_params(QuadraticParam)
            .set_num_inputs(1)
            .set_num_outputs(1)
            .set_input_names(["data"])
            .set_infer_shape(elemwise_shape)
            .set_compute(quadratic_forward)
            .set_gradient(f"_backward_{name}", uses=("in_data", "out_grad"))
            .set_inplace([(0, 0)]))


def test_builds_the_record_the_seed_describes(call):
    op = quadratic_builder().build()
    attrs = op.parse_params({"a": 1, "b": 2, "c": 3})
    assert op.name == "quadratic" and op.params is QuadraticParam and not op.is_backward
    assert op.list_inputs(attrs) == ["data"] and op.list_outputs(attrs) == ["output"]
    assert op.gradient == Gradient(
        "_backward_quadratic", ("out_grad", "in_data")
    )  # canonical order
    assert op.inplace_pairs(attrs) == [(0, 0)]
    assert op.shapes(attrs, [(2, 0)], [(0, 3)]) == ([(2, 3)], [(2, 3)])  # two-way
    out = call(op, attrs, [np.array([[1.0, 2], [3, 4]])])
    np.testing.assert_array_equal(out[0], [[6, 11], [18, 27]])
    assert (
        "f(x) = a*x**2 + b*x + c" in op.docstring() and "a : float, default=0.0" in op.docstring()
    )


def test_backward_for_lays_out_the_backward_op(call):
    fwd = quadratic_builder().build()
    bwd = OpBuilder.backward_for(fwd).set_compute(quadratic_backward).build()
    attrs = fwd.parse_params({"a": 2.0, "b": -1.0})
    assert bwd.name == "_backward_quadratic" and bwd.is_backward and bwd.forward_op == "quadratic"
    assert bwd.params is QuadraticParam
    assert bwd.n_inputs(attrs) == 2 and bwd.n_outputs(attrs) == 1
    assert bwd.list_inputs(attrs) == ["output_grad", "data"] and bwd.list_outputs(attrs) == [
        "data_grad"
    ]
    # shapes and dtypes follow from the forward's two-way rules, from either side
    assert bwd.shapes(attrs, [(4, 5), None]) == ([(4, 5), (4, 5)], [(4, 5)])
    assert bwd.shapes(attrs, [None, None], [(4, 5)]) == ([(4, 5), (4, 5)], [(4, 5)])
    assert bwd.dtypes(attrs, [None, np.float32]) == ([np.float32, np.float32], [np.float32])
    with pytest.raises(ShapeError, match="_backward_quadratic"):
        bwd.shapes(attrs, [(4, 5), (5, 4)])
    x, head = np.array([1.0, -2.0, 0.5]), np.array([1.0, 2.0, 3.0])
    (grad,) = call(bwd, attrs, [head, x])
    np.testing.assert_allclose(grad, head * (4 * x - 1))


def test_backward_layout_with_aux_states_and_out_data():
    def bn_like(attrs, ctx, inputs, req, outputs):
        pass

    fwd = (
        OpBuilder("bn_like")
        .set_num_inputs(3)
        .set_input_names(["data", "gamma", "moving_mean"])
        .set_mutate_inputs([2])
        .set_num_outputs(2)
        .set_num_visible_outputs(1)
        .set_output_names(["output", "mean"])
        .set_infer_shape(lambda a, i, o: (i, o))
        .set_compute(bn_like)
        .set_gradient("_backward_bn_like", uses=("out_data", "out_grad", "in_data"))
        .build()
    )
    bwd = OpBuilder.backward_for(fwd).set_compute(bn_like).build()
    attrs = fwd.parse_params({})
    assert fwd.list_arguments(attrs) == ["data", "gamma"]
    assert fwd.list_auxiliary_states(attrs) == ["moving_mean"]
    assert bwd.list_inputs(attrs) == [
        "output_grad",
        "data",
        "gamma",
        "moving_mean",
        "output",
        "mean",
    ]
    assert bwd.list_outputs(attrs) == ["data_grad", "gamma_grad"]  # no gradient for aux states


def test_backward_for_needs_a_gradient():
    op = quadratic_builder().set_no_gradient("not today").build()
    with pytest.raises(OperatorError, match=r"'quadratic' declares no Gradient.*set_gradient"):
        OpBuilder.backward_for(op)


def test_compute_per_device_and_xp_fallback():
    def cpu_kernel(attrs, ctx, inputs, req, outputs):
        pass

    def gpu_kernel(attrs, ctx, inputs, req, outputs):
        pass

    op = (
        OpBuilder("two_devices")
        .set_infer_shape(elemwise_shape)
        .set_compute(cpu_kernel, device="cpu")
        .set_compute(gpu_kernel, device="gpu")
        .build()
    )
    assert op.kernel_for("cpu") is cpu_kernel and op.kernel_for("gpu") is gpu_kernel
    with pytest.raises(OperatorError, match="no kernel for device type 'tpu'"):
        op.kernel_for("tpu")
    with pytest.raises(OperatorError, match="'cpu' is already set"):
        OpBuilder("x").set_compute(cpu_kernel, device="cpu").set_compute(gpu_kernel, device="cpu")


def test_other_attributes():
    def kernel(attrs, ctx, inputs, req, outputs):
        pass

    class ConcatParam(Params):
        num_args = Field(int, 1, "number of inputs", low=1)

    op = (
        OpBuilder("concat_like")
        .set_params(ConcatParam)
        .set_num_inputs(lambda p: p.num_args)
        .set_input_names(lambda p: [f"arg{i}" for i in range(p.num_args)])
        .set_key_var_num_args("num_args")
        .set_forward_shape(lambda p, ins: (sum(s[0] for s in ins),) + ins[0][1:])
        .set_compute(kernel)
        .set_resources(["temp_space", ResourceRequest(ResourceKind.RANDOM)])
        .set_supported_req(["write", OpReqType.ADD])
        .set_zero_gradient()
        .set_aliases("concat_alias")
        .build()
    )
    attrs = op.parse_params({"num_args": 3})
    assert op.n_inputs(attrs) == 3 and op.list_inputs(attrs) == ["arg0", "arg1", "arg2"]
    assert op.shapes(attrs, [(1, 2), (2, 2), (3, 2)])[1] == [(6, 2)]
    assert [r.kind for r in op.resource_requests(attrs)] == [
        ResourceKind.TEMP_SPACE,
        ResourceKind.RANDOM,
    ]
    assert op.supported_req == {OpReqType.WRITE, OpReqType.ADD}
    assert op.gradient == ZeroGradient() and op.aliases == ("concat_alias",)
    assert op.key_var_num_args == "num_args"


# -- forward-only shape and type rules ------------------------------------------------------------
def test_forward_shape_waits_for_known_inputs_and_checks_known_outputs():
    def matmul(attrs, ins):
        (n, k), (k2, m) = ins
        if k != k2:
            raise ShapeError(f"inner dimensions {k} and {k2} differ")
        return (n, m)  # a single shape for the single output

    infer = forward_shape(matmul, "matmul_t")
    assert infer(None, [(2, 0), (3, 4)], [None]) == ([(2, 0), (3, 4)], [None])  # unchanged
    assert infer(None, [None, (3, 4)], [(2, 4)]) == ([None, (3, 4)], [(2, 4)])
    assert infer(None, [(2, 3), (3, 4)], [None]) == ([(2, 3), (3, 4)], [(2, 4)])
    assert infer(None, [(2, 3), (3, 4)], [(0, 4)]) == ([(2, 3), (3, 4)], [(2, 4)])
    with pytest.raises(
        ShapeError,
        match=r"operator 'matmul_t', output 0: the shape rule .*matmul gives \(2, 4\) for inputs "
        r"\(\(2, 3\), \(3, 4\)\), but \(2, 5\) is already known",
    ):
        infer(None, [(2, 3), (3, 4)], [(2, 5)])
    with pytest.raises(ShapeError, match="inner dimensions"):
        infer(None, [(2, 3), (4, 4)], [None])
    assert forward_shape(lambda a, ins: None)(None, [(1,)], [None]) == ([(1,)], [None])


def test_forward_shape_result_count_is_checked():
    infer = forward_shape(lambda attrs, ins: [(1,), (2,)], "two_t")
    with pytest.raises(OperatorError, match=r"'two_t'.*returned 2 output shapes for 1 outputs"):
        infer(None, [(3,)], [None])


def test_builder_names_an_unnamed_forward_rule():
    op = (
        OpBuilder("named_t")
        .set_infer_shape(forward_shape(lambda a, ins: [(7,)]))
        .set_compute(quadratic_forward)
        .build()
    )
    with pytest.raises(ShapeError, match="operator 'named_t'"):
        op.shapes(op.parse_params({}), [(1,)], [(8,)])


def test_forward_type():
    infer = forward_type(lambda attrs, types: np.dtype(np.int32), "argmax_t")
    assert infer(None, [None], [None]) == ([None], [None])
    assert infer(None, [np.float32], [None]) == ([np.float32], [np.int32])
    op = (
        OpBuilder("argmax_t")
        .set_forward_shape(lambda a, ins: [ins[0][:-1]])
        .set_forward_type(lambda a, types: [np.int64])
        .set_compute(quadratic_forward)
        .build()
    )
    assert op.dtypes(op.parse_params({}), [np.float32]) == ([np.float32], [np.int64])


# -- errors ---------------------------------------------------------------------------------------
def _bad(builder, pattern):
    with pytest.raises(OperatorError, match=pattern) as info:
        builder.build()
    assert isinstance(info.value, dagnet.DagnetError)


def test_missing_compute_names_the_op():
    _bad(
        OpBuilder("nothing").set_infer_shape(elemwise_shape),
        r"operator 'nothing': no compute function; add \.set_compute",
    )


def test_missing_shape_inference_names_the_op():
    _bad(
        OpBuilder("shapeless").set_compute(quadratic_forward),
        r"operator 'shapeless': no shape inference.*set_infer_shape\(elemwise_shape\)",
    )


def test_inplace_pair_out_of_range():
    _bad(
        quadratic_builder().set_inplace([(0, 1)]),
        r"'quadratic': in-place pair \(0, 1\) is out of range: the op has 1 inputs and 1 outputs",
    )


def test_names_and_counts_disagree():
    _bad(
        quadratic_builder().set_num_inputs(2), r"'quadratic': 1 input names \['data'\] for 2 inputs"
    )


def test_mutate_inputs_out_of_range():
    _bad(quadratic_builder().set_mutate_inputs([1]), r"mutate_inputs \[1\] name input 1")


def test_more_visible_outputs_than_outputs():
    _bad(quadratic_builder().set_num_visible_outputs(2), "2 visible outputs but only 1 outputs")


def test_key_var_num_args_must_be_a_parameter():
    _bad(
        quadratic_builder().set_key_var_num_args("num_args"),
        r"set_key_var_num_args\('num_args'\) names no parameter of QuadraticParam \(a, b, c\)",
    )


@pytest.mark.parametrize(
    "make, pattern",
    [
        (lambda: OpBuilder("bad name"), "must be a Python identifier"),
        (lambda: OpBuilder("q").set_params(dict), r"'q': set_params\(\) takes a Params subclass"),
        (lambda: OpBuilder("q").set_num_inputs(-1), r"set_num_inputs\(\) takes a count >= 0"),
        (
            lambda: OpBuilder("q").set_input_names("data"),
            r"set_input_names\(\) takes a list of names",
        ),
        (lambda: OpBuilder("q").set_input_names(["a", "a"]), "repeated names"),
        (lambda: OpBuilder("q").set_gradient("q"), "names the operator itself.*'_backward_q'"),
        (
            lambda: OpBuilder("q").set_gradient("_backward_q", uses=("in_grad",)),
            "set_gradient\\(uses=...\\)",
        ),
        (lambda: OpBuilder("q").set_compute("not a function"), r"set_compute\(\) takes a function"),
        (lambda: OpBuilder("q").set_resources([3]), "set_resources"),
        (lambda: OpBuilder("q").set_supported_req(["overwrite"]), "set_supported_req"),
        (
            lambda: OpBuilder("q").set_domain({"sample": None}),
            r"set_domain\(\) takes a dagnet.operator.Domain",
        ),
    ],
)
def test_setter_errors_name_the_op(make, pattern):
    with pytest.raises(OperatorError, match=pattern):
        make()


def test_gradient_forms():
    assert quadratic_builder().set_gradient(
        Gradient("_bw", ("out_data", "out_grad"))
    ).build().gradient == Gradient("_bw", ("out_grad", "out_data"))
    assert quadratic_builder().set_gradient(
        NoGradient("integer op")
    ).build().gradient == NoGradient("integer op")
    assert quadratic_builder().set_gradient("_bw", uses="out_grad").build().gradient == Gradient(
        "_bw"
    )


def test_built_ops_register_through_a_plugin(register, call):
    fwd = quadratic_builder("quadratic_reg_t").build()
    bwd = OpBuilder.backward_for(fwd).set_compute(quadratic_backward).build()
    register(fwd, bwd)
    assert get_op("quadratic_reg_t") is fwd and get_op("_backward_quadratic_reg_t") is bwd
    assert get_op("quadratic_reg_t").compute[XP] is quadratic_forward
