"""The three ways of defining an operator make the same record: ``quadratic`` written
with the nnvm-style builder, as OperatorProperty + Operator, and as a SimpleOp
agrees on names, counts, shapes and gradient dependencies, and its kernels
compute the same values under every write mode."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from dagnet.operator import (
    Case,
    Domain,
    Field,
    GradKind,
    OpBuilder,
    Operator,
    OperatorProperty,
    OpReqType,
    Params,
    SimpleOp,
    assign,
    elemwise_shape,
    op_from_property,
)
from dagnet.testing.op_suite import check_operator


class QuadraticParam(Params):
    a = Field(float, 0.0, "Coefficient of the quadratic term in the quadratic function.")
    b = Field(float, 0.0, "Coefficient of the linear term in the quadratic function.")
    c = Field(float, 0.0, "Constant term in the quadratic function.")


def _sample(draw):
    x = draw(arrays(np.float64, array_shapes(min_dims=1, max_dims=3, max_side=4),
                    elements=st.floats(-5, 5)))
    return Case([x], {k: draw(st.floats(-2, 2)) for k in "abc"})


def _reference(params, x):
    p = QuadraticParam.parse("quadratic", params)
    return p.a * x ** 2 + p.b * x + p.c


DOMAIN = Domain(_sample, reference=_reference)


# -- 1. the nnvm-style builder --------------------------------------------------------------------
def _forward(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    assign(outputs[0], req[0], x * (attrs.a * x + attrs.b) + attrs.c)


def _backward(attrs, ctx, inputs, req, outputs):
    out_grad, x = inputs
    assign(outputs[0], req[0], out_grad * (2 * attrs.a * x + attrs.b))


def builder_style(name):
    fwd = (
        OpBuilder(name)
        .describe("f(x) = a*x^2 + b*x + c")
        .set_params(QuadraticParam)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_input_names(["data"])
        .set_infer_shape(elemwise_shape)
        .set_compute(_forward)
        .set_gradient(f"_backward_{name}", uses=("out_grad", "in_data"))
        .set_inplace([(0, 0)])
        .set_domain(DOMAIN)
        .build()
    )
    return fwd, OpBuilder.backward_for(fwd).set_compute(_backward).build()


# -- 2. OperatorProperty + Operator ---------------------------------------------------------------
class QuadraticOperator(Operator):
    def __init__(self, attrs):
        self.attrs = attrs

    def forward(self, ctx, in_data, req, out_data, aux):
        x, p = in_data[0], self.attrs
        assign(out_data[0], req[0], x * (p.a * x + p.b) + p.c)

    def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
        x, p = in_data[0], self.attrs
        assign(in_grad[0], req[0], out_grad[0] * (2 * p.a * x + p.b))


class QuadraticProperty(OperatorProperty):
    """f(x) = a*x^2 + b*x + c"""

    params = QuadraticParam
    domain = DOMAIN

    def infer_shape(self, in_shapes):
        return in_shapes, [in_shapes[0]], []

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        return [out_grad[0], in_data[0]]

    def forward_inplace_option(self, in_data, out_data):
        return [(in_data[0], out_data[0])]

    def create_operator(self, ctx):
        return QuadraticOperator(self.attrs)


def property_style(name):
    return op_from_property(QuadraticProperty, name)


# -- 3. SimpleOp ----------------------------------------------------------------------------------
def simple_style(name):
    def function(x, env):
        p = env.kwargs
        return x * (p.a * x + p.b) + p.c

    def gradient(out_grad, x, env):
        p = env.kwargs
        return out_grad * (2 * p.a * x + p.b)

    return (
        SimpleOp.unary(name)
        .describe("f(x) = a*x^2 + b*x + c")
        .set_enable_kwargs(QuadraticParam)
        .set_function(function, inplace=True)
        .set_gradient(gradient, GradKind.WITH_INPUT)
        .set_domain(DOMAIN)
        .build()
    )


STYLES = {"builder": builder_style, "property": property_style, "simple": simple_style}


@pytest.fixture(scope="module")
def records():
    return {style: make("quadratic") for style, make in STYLES.items()}


def _summary(fwd, bwd, attrs):
    return {
        "name": fwd.name,
        "params": list(fwd.params.fields()),
        "is_backward": fwd.is_backward,
        "inputs": fwd.list_inputs(attrs),
        "outputs": fwd.list_outputs(attrs),
        "arguments": fwd.list_arguments(attrs),
        "aux": fwd.list_auxiliary_states(attrs),
        "visible": fwd.n_visible_outputs(attrs),
        "gradient": fwd.gradient,
        "inplace": fwd.inplace_pairs(attrs),
        "resources": fwd.resource_requests(attrs),
        "shape": fwd.shapes(attrs, [(2, 3)]),
        "dtype": fwd.dtypes(attrs, [np.float32]),
        "backward": (
            bwd.name,
            bwd.is_backward,
            bwd.forward_op,
            bwd.params is fwd.params,
            bwd.n_inputs(attrs),
            bwd.n_outputs(attrs),
            bwd.list_outputs(attrs),
        ),
        "backward_shape": bwd.shapes(attrs, [(2, 3), (2, 3)]),
        "backward_dtype": bwd.dtypes(attrs, [np.float64, np.float64]),
        "domain": fwd.domain is DOMAIN,
    }


def test_records_agree(records):
    attrs = QuadraticParam.parse("quadratic", {"a": 1, "b": 2, "c": 3})
    summaries = {style: _summary(*ops, attrs) for style, ops in records.items()}
    assert summaries["builder"] == summaries["property"] == summaries["simple"]
    assert summaries["builder"]["gradient"].uses == ("out_grad", "in_data")
    assert summaries["builder"]["backward"][0] == "_backward_quadratic"


def _run(op, attrs, inputs, req, initial, alias=None):
    """Call ``op``'s cpu kernel with outputs pre-filled by ``initial``; ``alias=(i, o)``
    makes output ``o`` the very array of input ``i``."""
    from dagnet.operator import OpContext

    inputs = [a.copy() for a in inputs]
    outputs = [a.copy() for a in initial]
    if alias is not None:
        outputs[alias[1]] = inputs[alias[0]]
    op.kernel_for("cpu")(
        attrs, OpContext(False, None, [], np), inputs, [req] * len(outputs), outputs
    )
    return outputs


@given(
    x=arrays(
        np.float64, array_shapes(min_dims=1, max_dims=3, max_side=4), elements=st.floats(-5, 5)
    ),
    coefficients=st.tuples(*[st.floats(-3, 3)] * 3),
    seed=st.integers(0, 2**16),
)
def test_kernels_agree_under_every_write_mode(records, x, coefficients, seed):
    attrs = QuadraticParam.parse("quadratic", dict(zip("abc", coefficients, strict=True)))
    a, b, c = coefficients
    rng = np.random.default_rng(seed)
    head, initial = rng.standard_normal(x.shape), rng.standard_normal(x.shape)
    value, grad = a * x**2 + b * x + c, head * (2 * a * x + b)
    for style, (fwd, bwd) in records.items():
        for req, want in (
            (OpReqType.WRITE, value),
            (OpReqType.ADD, initial + value),
            (OpReqType.NULL, initial),
        ):
            (got,) = _run(fwd, attrs, [x], req, [initial])
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"{style} {req}")
        (got,) = _run(fwd, attrs, [x], OpReqType.INPLACE, [initial], alias=(0, 0))
        np.testing.assert_allclose(got, value, rtol=1e-12, atol=1e-12, err_msg=f"{style} inplace")
        for req, want in (
            (OpReqType.WRITE, grad),
            (OpReqType.ADD, initial + grad),
            (OpReqType.NULL, initial),
        ):
            (got,) = _run(bwd, attrs, [head, x], req, [initial])
            np.testing.assert_allclose(
                got, want, rtol=1e-12, atol=1e-12, err_msg=f"{style} backward {req}"
            )


@pytest.mark.parametrize("style", sorted(STYLES))
def test_each_style_passes_the_conformance_suite(register, style):
    register(*STYLES[style](f"quadratic_{style}_t"))
    check_operator(f"quadratic_{style}_t", engines=["naive"], max_examples=5)


@pytest.mark.parametrize("style", sorted(STYLES))
def test_each_style_runs_through_the_ndarray_frontend(register, style):
    nd = pytest.importorskip("dagnet.ndarray", reason="dagnet.ndarray is not written yet")
    if not hasattr(nd, "array"):
        pytest.skip("dagnet.ndarray has no array() yet")
    register(*STYLES[style](f"quadratic_{style}_nd_t"))
    quadratic = getattr(nd, f"quadratic_{style}_nd_t")
    out = quadratic(nd.array([[1, 2], [3, 4]]), a=1, b=2, c=3).asnumpy()
    np.testing.assert_array_equal(out, [[6, 11], [18, 27]])
