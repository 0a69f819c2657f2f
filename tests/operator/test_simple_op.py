"""SimpleOp: unary and binary operators from a function, a gradient of a declared
kind and an optional shape function, with a scalar or keyword arguments and
resource requests — the seed's smooth_l1 example first."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

import dagnet
from dagnet._errors import OperatorError, ParamError, ShapeError
from dagnet.operator import (
    Case,
    Domain,
    Field,
    Gradient,
    GradKind,
    NoGradient,
    OpContext,
    OpReqType,
    Params,
    SimpleOp,
    ZeroGradient,
    get_op,
)
from dagnet.resource import ResourceKind
from dagnet.testing.op_suite import check_operator

W, A, N, INPLACE = OpReqType.WRITE, OpReqType.ADD, OpReqType.NULL, OpReqType.INPLACE


# -- the seed's example: smooth l1 loss with a scalar sigma ---------------------------------------
def smooth_l1_reference(x, sigma):
    s2 = sigma * sigma
    return np.where(
        x > 1 / s2, x - 0.5 / s2, np.where(x < -1 / s2, -x - 0.5 / s2, 0.5 * x * x * s2)
    )


def smooth_l1_forward(src, env):
    s2 = env.scalar * env.scalar
    xp = env.xp
    return xp.where(
        src > 1 / s2, src - 0.5 / s2, xp.where(src < -1 / s2, -src - 0.5 / s2, 0.5 * src * src * s2)
    )


def smooth_l1_backward_use_in(out_grad, src, env):
    s2 = env.scalar * env.scalar
    return out_grad * env.xp.clip(src * s2, -1.0, 1.0)


def _smooth_l1_sample(draw):
    shape = draw(array_shapes(min_dims=1, max_dims=3, max_side=4))
    sigma = draw(st.sampled_from([0.5, 1.0, 2.0]))
    # keep away from the kinks at +-1/sigma^2, where central differences straddle two pieces
    x = draw(
        arrays(np.float64, shape, elements=st.floats(-5, 5)).filter(
            lambda a: np.all(np.abs(np.abs(a) - 1 / sigma**2) > 1e-3)
        )
    )
    return Case([x], {"scalar": sigma})


def smooth_l1_ops(name="test_smooth_l1"):
    return (
        SimpleOp.unary(name)
        .set_function(smooth_l1_forward, inplace=False)  # kNoInplace
        .set_gradient(smooth_l1_backward_use_in, GradKind.WITH_INPUT, inplace=True)  # kInplaceOutIn
        .set_enable_scalar(True)
        .set_domain(
            Domain(_smooth_l1_sample, reference=lambda p, x: smooth_l1_reference(x, p["scalar"]))
        )
        .describe("Calculate Smooth L1 Loss(lhs, scalar)")
        .build()
    )


def test_smooth_l1_records():
    fwd, bwd = smooth_l1_ops()
    attrs = fwd.parse_params({"scalar": "2.0"})  # symbol JSON stores a string
    assert attrs.scalar == 2.0 and list(fwd.params.fields()) == ["scalar"]
    with pytest.raises(ParamError, match=r"'test_smooth_l1' needs parameter 'scalar'"):
        fwd.parse_params({})
    assert fwd.list_inputs(attrs) == ["data"] and fwd.inplace_pairs(attrs) == []
    assert fwd.gradient == Gradient("_backward_test_smooth_l1", ("out_grad", "in_data"))
    assert bwd.is_backward and bwd.forward_op == "test_smooth_l1" and bwd.params is fwd.params
    assert bwd.list_inputs(attrs) == ["output_grad", "data"] and bwd.inplace_pairs(attrs) == [
        (0, 0)
    ]
    assert fwd.shapes(attrs, [(3, 0)], [(0, 4)]) == ([(3, 4)], [(3, 4)])  # the default: two-way
    assert fwd.description == "Calculate Smooth L1 Loss(lhs, scalar)"


def test_smooth_l1_values_and_write_modes(call):
    fwd, bwd = smooth_l1_ops()
    attrs = fwd.parse_params({"scalar": 1.0})
    x = np.array([[-3.0, -0.5, 0.0], [0.25, 1.0, 4.0]])
    want = smooth_l1_reference(x, 1.0)
    np.testing.assert_allclose(call(fwd, attrs, [x])[0], want)
    np.testing.assert_allclose(call(fwd, attrs, [x], [A], [np.ones_like(x)])[0], want + 1)
    np.testing.assert_array_equal(call(fwd, attrs, [x], [N], [np.full_like(x, 7.0)])[0], 7.0)
    np.testing.assert_allclose(
        smooth_l1_reference(np.array([1, 2, 3, 4.0]), 1.0), [0.5, 1.5, 2.5, 3.5]
    )
    head = np.full_like(x, 2.0)
    grad = head.copy()  # the declared kInplaceOutIn: the gradient overwrites the head gradient
    call(bwd, attrs, [grad, x], [INPLACE], [grad])
    np.testing.assert_allclose(grad, 2.0 * np.clip(x, -1, 1))


def test_smooth_l1_passes_the_conformance_suite(register):
    register(*smooth_l1_ops("test_smooth_l1_suite"))
    check_operator("test_smooth_l1_suite", engines=["naive"], max_examples=8)


# -- the three gradient kinds ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "kind, grad, uses, backward_inputs",
    [
        (GradKind.HEAD_ONLY, lambda og, env: -og, ("out_grad",), ["output_grad"]),
        ("output", lambda og, y, env: og * y, ("out_grad", "out_data"), ["output_grad", "output"]),
        (
            GradKind.WITH_INPUT,
            lambda og, x, env: og * env.xp.exp(x),
            ("out_grad", "in_data"),
            ["output_grad", "data"],
        ),
    ],
)
def test_gradient_kind_decides_what_the_backward_op_reads(kind, grad, uses, backward_inputs, call):
    forward = (lambda x, env: -x) if kind is GradKind.HEAD_ONLY else (lambda x, env: env.xp.exp(x))
    fwd, bwd = SimpleOp.unary("kind_t").set_function(forward).set_gradient(grad, kind).build()
    attrs = fwd.parse_params({})
    assert fwd.gradient.uses == uses and bwd.list_inputs(attrs) == backward_inputs
    x, head = np.array([0.0, 1.0, -2.0]), np.array([1.0, 2.0, 3.0])
    (y,) = call(fwd, attrs, [x])
    inputs = {"out_grad": [head], "in_data": [x], "out_data": [y]}
    (g,) = call(bwd, attrs, [a for u in uses for a in inputs[u]])
    np.testing.assert_allclose(g, -head if kind is GradKind.HEAD_ONLY else head * np.exp(x))


def test_unknown_gradient_kind():
    with pytest.raises(OperatorError, match="unknown gradient kind 'both'"):
        SimpleOp.unary("x").set_gradient(lambda og, env: og, "both")


# -- binary operators, shape functions, keyword arguments, resources ------------------------------
class PowParam(Params):
    exponent = Field(float, 2.0, "the power")


def test_binary_with_kwargs_and_default_shape_check(call):
    def forward(lhs, rhs, env):
        return lhs * rhs**env.kwargs.exponent

    def backward(out_grad, lhs, rhs, env):
        p = env.kwargs.exponent
        return out_grad * rhs**p, out_grad * lhs * p * rhs ** (p - 1)

    fwd, bwd = (
        SimpleOp.binary("scaled_pow_t")
        .set_enable_kwargs(PowParam)
        .set_function(forward, inplace=True)
        .set_gradient(backward, "input")
        .build()
    )
    attrs = fwd.parse_params({"exponent": "3"})
    assert fwd.params is PowParam and fwd.list_inputs(attrs) == ["lhs", "rhs"]
    assert fwd.inplace_pairs(attrs) == [(0, 0)] and bwd.list_outputs(attrs) == [
        "lhs_grad",
        "rhs_grad",
    ]
    assert fwd.shapes(attrs, [(2, 0), (0, 3)]) == ([(2, 3), (2, 3)], [(2, 3)])
    with pytest.raises(
        ShapeError, match=r"'scaled_pow_t': lhs shape \(2, 3\) and rhs shape \(3, 2\) differ"
    ):
        fwd.shapes(attrs, [(2, 3), (3, 2)])
    lhs, rhs = np.array([1.0, 2.0]), np.array([2.0, 3.0])
    np.testing.assert_allclose(call(fwd, attrs, [lhs, rhs])[0], lhs * rhs**3)
    head = np.ones(2)
    lg, rg = np.full(2, 10.0), np.full(2, 10.0)
    call(bwd, attrs, [head, lhs, rhs], [A, N], [lg, rg])  # add to one gradient, skip the other
    np.testing.assert_allclose(lg, 10 + rhs**3)
    np.testing.assert_array_equal(rg, 10.0)


def test_binary_gradient_must_return_a_pair(call):
    fwd, bwd = (
        SimpleOp.binary("pairless_t")
        .set_function(lambda a, b, env: a + b)
        .set_gradient(lambda og, env: og)
        .build()
    )
    with pytest.raises(OperatorError, match=r"'pairless_t' must return \(lhs_grad, rhs_grad\)"):
        call(bwd, fwd.parse_params({}), [np.ones(2)], outputs=[np.ones(2), np.ones(2)])


def test_shape_function_is_forward_only_and_gets_the_env(call):
    def shape(src, env):
        if len(src) != 2:
            raise ShapeError(f"sum_rows_t takes a matrix, got {src}")
        return (src[0],)

    fwd, bwd = (
        SimpleOp.unary("sum_rows_t")
        .set_enable_scalar(True, default=1.0)
        .set_shape_function(shape)
        .set_function(lambda x, env: env.scalar * x.sum(axis=1))
        .set_gradient(
            lambda og, x, env: env.scalar * env.xp.broadcast_to(og[:, None], x.shape),
            GradKind.WITH_INPUT,
        )
        .build()
    )
    attrs = fwd.parse_params({})
    assert attrs.scalar == 1.0
    assert fwd.shapes(attrs, [(3, 4)]) == ([(3, 4)], [(3,)])
    assert fwd.shapes(attrs, [(3, 0)]) == ([(3, 0)], [None])  # waits for a known input
    with pytest.raises(ShapeError, match="takes a matrix"):
        fwd.shapes(attrs, [(3, 4, 5)])
    with pytest.raises(ShapeError, match=r"operator 'sum_rows_t', output 0"):
        fwd.shapes(attrs, [(3, 4)], [(4,)])
    x = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(call(fwd, attrs, [x])[0], x.sum(1))
    # the backward op infers the gradient's shape from the input it reads
    assert bwd.shapes(attrs, [(3,), (3, 2)]) == ([(3,), (3, 2)], [(3, 2)])


def test_resources_reach_forward_and_backward(call):
    seen = []

    def forward(x, env):
        seen.append(("forward", list(env.resources), env.is_train, env.run_ctx))
        return x

    def backward(og, env):
        seen.append(("backward", list(env.resources)))
        return og

    fwd, bwd = (
        SimpleOp.unary("noisy_t")
        .set_resource_request("random")
        .set_function(forward)
        .set_gradient(backward)
        .build()
    )
    attrs = fwd.parse_params({})
    assert [r.kind for r in fwd.resource_requests(attrs)] == [ResourceKind.RANDOM]
    assert [r.kind for r in bwd.resource_requests(attrs)] == [ResourceKind.RANDOM]
    call(fwd, attrs, [np.ones(2)], requested=["rng"])
    call(bwd, attrs, [np.ones(2)], requested=["rng"])
    call(
        fwd, attrs, [np.ones(2)], [N], [np.zeros(2)], requested=["rng"]
    )  # nothing to write: not called
    assert seen == [("forward", ["rng"], False, None), ("backward", ["rng"])]


def test_no_and_zero_gradient_make_one_op():
    (op,) = (
        SimpleOp.unary("sign_t")
        .set_function(lambda x, env: env.xp.sign(x))
        .set_zero_gradient()
        .build()
    )
    assert op.gradient == ZeroGradient()
    (op,) = (
        SimpleOp.unary("round_t")
        .set_function(lambda x, env: env.xp.round(x))
        .set_no_gradient("rounding")
        .build()
    )
    assert op.gradient == NoGradient("rounding")
    (op,) = SimpleOp.unary("plain_t").set_function(lambda x, env: x).build()
    assert op.gradient is None


@pytest.mark.parametrize(
    "make, pattern",
    [
        (lambda: SimpleOp("t", 3), "arity must be 1 \\(unary\\) or 2 \\(binary\\)"),
        (lambda: SimpleOp.unary("t").build(), r"SimpleOp 't': no function; add \.set_function"),
        (
            lambda: (
                SimpleOp.unary("t")
                .set_function(lambda x, env: x)
                .set_enable_scalar()
                .set_enable_kwargs(PowParam)
                .build()
            ),
            "cannot both be on",
        ),
        (lambda: SimpleOp.unary("t").set_enable_kwargs(dict), "set_enable_kwargs"),
        (lambda: SimpleOp.binary("t").set_input_names(["x"]), "takes 2 names"),
        (
            lambda: (
                SimpleOp.unary("t")
                .set_function(lambda x, env: x)
                .set_gradient(lambda og, env: og)
                .set_zero_gradient()
                .build()
            ),
            "keep one",
        ),
    ],
)
def test_mistakes_name_the_op(make, pattern):
    with pytest.raises(OperatorError, match=pattern) as info:
        make()
    assert isinstance(info.value, dagnet.DagnetError)


def test_device_specific_functions(call):
    fwd, bwd = (
        SimpleOp.unary("twice_t")
        .set_function(lambda x, env: 2 * x)
        .set_function(lambda x, env: 3 * x, device="gpu")
        .set_gradient(lambda og, env: 2 * og)
        .build()
    )
    attrs = fwd.parse_params({})
    np.testing.assert_array_equal(call(fwd, attrs, [np.ones(2)])[0], 2.0)
    out = np.zeros(2)
    fwd.kernel_for("gpu")(attrs, OpContext(False, None, [], np), [np.ones(2)], [W], [out])
    np.testing.assert_array_equal(out, 3.0)


def test_registered_simple_ops_are_found(register):
    register(*smooth_l1_ops("test_smooth_l1_reg"))
    assert get_op("_backward_test_smooth_l1_reg").forward_op == "test_smooth_l1_reg"
