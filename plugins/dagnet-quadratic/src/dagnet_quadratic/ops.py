"""The ``quadratic`` operator and its backward, declared with dagnet's nnvm-style builder.

One block per operator, as ``NNVM_REGISTER_OP`` reads: parameters, shape
and type rules, one kernel written against ``ctx.xp`` (numpy on the CPU,
cupy on a GPU), the gradient, the in-place option, and the domain the
conformance suite samples from.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet.operator import (
    Case,
    Domain,
    Field,
    OpBuilder,
    Params,
    assign,
    elemwise_shape,
    elemwise_type,
)

__all__ = ["QuadraticParam", "quadratic", "backward_quadratic", "reference", "OPS"]


class QuadraticParam(Params):
    """The coefficients of f(x) = a*x**2 + b*x + c."""

    a = Field(float, 0.0, "Coefficient of the quadratic term in the quadratic function.")
    b = Field(float, 0.0, "Coefficient of the linear term in the quadratic function.")
    c = Field(float, 0.0, "Constant term in the quadratic function.")


def quadratic_forward(
    attrs: QuadraticParam, ctx: Any, inputs: list, req: list, outputs: list
) -> None:
    """out = x * (a*x + b) + c, written as ``req[0]`` says (in place over ``x`` is safe)."""
    x = inputs[0]
    assign(outputs[0], req[0], x * (attrs.a * x + attrs.b) + attrs.c)


def quadratic_backward(
    attrs: QuadraticParam, ctx: Any, inputs: list, req: list, outputs: list
) -> None:
    """dL/dx = dL/dy * (2*a*x + b); the inputs are (out_grad, x) as the gradient declares."""
    out_grad, x = inputs
    assign(outputs[0], req[0], out_grad * (2 * attrs.a * x + attrs.b))


def reference(params: dict, x: np.ndarray) -> np.ndarray:
    """The numpy reference the conformance suite compares with."""
    p = QuadraticParam.parse("quadratic", params)
    return p.a * x**2 + p.b * x + p.c


def _sample(draw: Any) -> Case:
    """Any shape of up to four dimensions, moderate values and coefficients."""
    from hypothesis import strategies as st
    from hypothesis.extra.numpy import array_shapes, arrays

    shape = draw(array_shapes(min_dims=1, max_dims=4, max_side=5), label="shape")
    finite = {"allow_nan": False, "allow_infinity": False}
    x = draw(arrays(np.float64, shape, elements=st.floats(-10, 10, **finite)), label="x")
    coefficient = st.floats(-3, 3, **finite)
    params = {k: draw(coefficient, label=k) for k in ("a", "b", "c")}
    return Case(inputs=[x], params=params)


quadratic = (
    OpBuilder("quadratic")
    .describe(
        r"""This operator implements the quadratic function:

.. math::

    f(x) = ax^2+bx+c

where :math:`x` is an input tensor and all operations
in the function are element-wise.

Example::

    x = [[1, 2], [3, 4]]
    y = quadratic(data=x, a=1, b=2, c=3)
    y = [[6, 11], [18, 27]]

The output has the input's shape and dtype (any floating dtype).
The gradient with respect to ``data`` is ``2*a*x + b``; the coefficients
are not learnable and get no gradient.
"""
    )
    .set_params(QuadraticParam)
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_input_names(["data"])
    .set_infer_shape(elemwise_shape)
    .set_infer_type(elemwise_type)
    .set_compute(quadratic_forward)
    .set_gradient("_backward_quadratic", uses=("out_grad", "in_data"))  # ElemwiseGradUseIn
    .set_inplace([(0, 0)])
    .set_domain(Domain(sample=_sample, reference=reference))
    .build()
)

backward_quadratic = (
    OpBuilder.backward_for(quadratic)  # _backward_quadratic: inputs (out_grad, data)
    .set_compute(quadratic_backward)
    .build()
)

OPS = [quadratic, backward_quadratic]
