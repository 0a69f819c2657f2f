"""The conformance suite itself: it passes a correct operator and catches broken ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import dagnet
from dagnet.operator import (
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    NoGradient,
    Op,
    OpReqType,
    Params,
    assign,
    elemwise_shape,
)
from dagnet.test_utils import assert_almost_equal, check_op_numeric_gradient
from dagnet.testing.op_suite import check_case, check_operator, missing_declarations


class ScaleParam(Params):
    k = Field(float, 2.0, "the factor")


def _sample(draw):
    shape = draw(st.tuples(st.integers(1, 3), st.integers(1, 3)))
    x = draw(arrays(np.float64, shape, elements=st.floats(-2, 2)))
    return Case([x], {"k": draw(st.floats(-3, 3))})


def _cube_op(grad_factor: float = 3.0, add_bug: bool = False) -> tuple[Op, Op]:
    """k * x**3 with a gradient 3*k*x**2 (scaled by ``grad_factor / 3`` to plant a bug)."""

    def forward(attrs, ctx, inputs, req, outputs):
        value = attrs.k * inputs[0] ** 3
        if add_bug and req[0] is OpReqType.ADD:
            outputs[0][...] = value  # forgets to add
        else:
            assign(outputs[0], req[0], value)

    def backward(attrs, ctx, inputs, req, outputs):
        out_grad, x = inputs
        assign(outputs[0], req[0], out_grad * grad_factor * attrs.k * x**2)

    fwd = Op(
        "cube_t",
        params=ScaleParam,
        input_names=["data"],
        infer_shape=elemwise_shape("cube_t"),
        compute={XP: forward},
        gradient=Gradient("_backward_cube_t", ("out_grad", "in_data")),
        inplace=[(0, 0)],
        domain=Domain(_sample, reference=lambda p, x: p["k"] * x**3),
    )
    bwd = Op(
        "_backward_cube_t",
        params=ScaleParam,
        num_inputs=2,
        is_backward=True,
        forward_op="cube_t",
        compute={XP: backward},
    )
    return fwd, bwd


def test_correct_operator_passes_on_every_engine(register):
    register(*_cube_op())
    check_operator("cube_t", max_examples=5)


def test_wrong_gradient_is_caught(register):
    register(*_cube_op(grad_factor=2.0))
    backend = dagnet.plugins.backends()["cpu"]
    engine = dagnet.engine.create("threaded")
    op = dagnet.operator.get_op("cube_t")
    try:
        with pytest.raises(AssertionError, match="gradient of operator 'cube_t'"):
            check_case(
                op,
                [np.array([[0.5, -1.0], [1.5, 2.0]])],
                {"k": 1.0},
                backend=backend,
                engine=engine,
            )
    finally:
        engine.shutdown()


def test_req_add_that_overwrites_is_caught(register):
    register(*_cube_op(add_bug=True))
    backend = dagnet.plugins.backends()["cpu"]
    engine = dagnet.engine.create("naive")
    op = dagnet.operator.get_op("cube_t")
    with pytest.raises(AssertionError, match="req=add"):
        check_case(op, [np.ones((2, 2))], {"k": 1.0}, backend=backend, engine=engine)


def test_missing_declarations_are_named():
    op = Op("bare", compute={XP: lambda *a: None})
    assert any("domain" in m for m in missing_declarations(op))
    assert any("gradient" in m for m in missing_declarations(op))
    op = Op(
        "nograd",
        compute={XP: lambda *a: None},
        gradient=NoGradient("integer output"),
        domain=Domain(_sample),
    )
    assert missing_declarations(op) == []


def test_check_op_numeric_gradient_reports_input_and_seed(register):
    register(*_cube_op(grad_factor=2.5))
    x = np.array([[0.5, -1.0], [1.5, 2.0]])
    with pytest.raises(AssertionError, match=r"input 'data'.*seed=7"):
        check_op_numeric_gradient("cube_t", [x], {"k": 1.0}, seed=7)


def test_check_op_numeric_gradient_passes_correct_rule(register):
    register(*_cube_op())
    check_op_numeric_gradient("cube_t", {"data": np.array([[0.5, -1.0], [1.5, 2.0]])}, {"k": -2.0})


def test_assert_almost_equal_names_worst_element():
    with pytest.raises(AssertionError, match=r"worst at index \(1,\)"):
        assert_almost_equal(
            np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0]), names=("got", "want")
        )
