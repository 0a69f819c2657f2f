"""``smooth_l1``: the Huber-like loss of Fast R-CNN, elementwise."""

from __future__ import annotations

import numpy as np

from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, assign, elemwise_shape

from .._draw import Draw

__all__ = ["OPS"]


class SmoothL1Param(Params):
    scalar = Field(float, 1.0, "sigma: the quadratic part covers |x| < 1 / sigma^2")


def _forward(attrs, ctx, inputs, req, outputs):
    xp, x, s2 = ctx.xp, inputs[0], attrs.scalar ** 2
    absx = xp.abs(x)
    assign(outputs[0], req[0], xp.where(absx < 1 / s2, 0.5 * s2 * x * x, absx - 0.5 / s2))


def _backward(attrs, ctx, inputs, req, outputs):
    xp, (dy, x), s2 = ctx.xp, inputs, attrs.scalar ** 2
    assign(outputs[0], req[0], dy * xp.where(xp.abs(x) < 1 / s2, s2 * x, xp.sign(x)))


def _sample(draw):
    d = Draw(draw)
    sigma = d.float(0.5, 2.0, "scalar")
    x = d.uniform(d.shape(d.int(1, 3)), -3, 3)
    # keep off the seam |x| = 1/sigma^2, where the second derivative jumps
    seam = 1 / sigma ** 2
    x = np.where(np.abs(np.abs(x) - seam) < 0.05, x * 1.2, x)
    return Case([x], {"scalar": sigma})


def _reference(params, x):
    s2 = SmoothL1Param.parse("smooth_l1", params).scalar ** 2
    return np.where(np.abs(x) < 1 / s2, 0.5 * s2 * x ** 2, np.abs(x) - 0.5 / s2)


SmoothL1 = Op(
    "smooth_l1",
    description="""Smooth L1 with ``sigma = scalar``, elementwise:
``0.5 * (sigma * x)^2`` where ``|x| < 1 / sigma^2``, else ``|x| - 0.5 / sigma^2``.
Gradient: ``sigma^2 * x`` inside, ``sign(x)`` outside.""",
    params=SmoothL1Param,
    input_names=["data"],
    output_names=["output"],
    infer_shape=elemwise_shape("smooth_l1"),
    compute={XP: _forward},
    gradient=Gradient("_backward_smooth_l1", uses=("out_grad", "in_data")),
    domain=Domain(_sample, _reference),
)

BackwardSmoothL1 = Op(
    "_backward_smooth_l1", params=SmoothL1Param, num_inputs=2, compute={XP: _backward},
    is_backward=True, forward_op="smooth_l1",
)

OPS = [SmoothL1, BackwardSmoothL1]
