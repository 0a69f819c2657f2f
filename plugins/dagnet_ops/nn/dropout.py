"""``Dropout``: zero random elements in training and rescale the rest."""

from __future__ import annotations

from dagnet.operator import (
    XP,
    Case,
    ComposedGradient,
    Domain,
    Field,
    Gradient,
    Op,
    Params,
    Shape,
    assign,
    elemwise_shape,
)
from dagnet.resource import ResourceRequest

from .._draw import Draw
from ._second_order import dropout_backward_gradient

__all__ = ["OPS"]


class DropoutParam(Params):
    p = Field(float, 0.5, "the fraction of elements set to zero", low=0.0, high=1.0)
    mode = Field(str, "training", "training: drop only in training; always: also in inference",
                 choices=("always", "training"))
    axes = Field(Shape, (), "axes along which one draw is shared (variational dropout)")
    cudnn_off = Field(bool, False, "accepted for MXNet compatibility", optional=True)


def _active(attrs, ctx):
    return (ctx.is_train or attrs.mode == "always") and attrs.p > 0


def _forward(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    if not _active(attrs, ctx):
        assign(outputs[0], req[0], x)
        assign(outputs[1], req[1], 1)
        return
    shape = list(x.shape)
    for axis in attrs.axes:
        shape[axis] = 1
    keep = ctx.requested[0].generator.random(tuple(shape)) >= attrs.p
    if attrs.p < 1:
        mask = (keep * (1 / (1 - attrs.p))).astype(x.dtype)
    else:  # as MXNet: every element is dropped and scaled by 1 / 0, which gives NaN
        mask = ctx.xp.full(tuple(shape), float("nan"), dtype=x.dtype)
    assign(outputs[0], req[0], x * mask)
    assign(outputs[1], req[1], mask)


def _backward(attrs, ctx, inputs, req, outputs):
    dy, _, mask = inputs  # the mask is all ones where the forward pass dropped nothing
    assign(outputs[0], req[0], dy * mask)


def _sample(draw):
    d = Draw(draw)
    shape = d.shape(d.int(1, 3))
    params = {"p": d.float(0.0, 0.9, "p")}
    if d.bool("axes"):
        params["axes"] = (d.int(0, len(shape) - 1, "axis"),)
    return Case([d.uniform(shape)], params)


Dropout = Op(
    "Dropout",
    description="""Dropout (Srivastava et al., 2014).

In training (or always, with ``mode='always'``) each element is kept with
probability ``1 - p`` and scaled by ``1 / (1 - p)``, else set to zero; with
``axes`` one draw is shared along those axes; ``p=1`` gives NaN everywhere (the
scale is 1 / 0), as MXNet's kernel and tests do.  Otherwise it is the identity.
The hidden second output ``mask`` holds the scale applied to each element
(ones when nothing was dropped); the gradient is ``dy * mask``.  The
conformance suite runs inference mode (the identity), so its reference is
the identity; the random mode is tested directly.""",
    params=DropoutParam,
    num_outputs=2,
    num_visible_outputs=1,
    input_names=["data"],
    output_names=["output", "mask"],
    infer_shape=elemwise_shape("Dropout"),
    compute={XP: _forward},
    gradient=Gradient("_backward_Dropout", uses=("out_grad", "out_data")),
    inplace=[(0, 0)],
    resources=[ResourceRequest("random")],
    domain=Domain(_sample, lambda params, x: x),
)

BackwardDropout = Op(
    "_backward_Dropout", params=DropoutParam, num_inputs=3, compute={XP: _backward},
    gradient=ComposedGradient(dropout_backward_gradient),
    inplace=[(0, 0)], is_backward=True, forward_op="Dropout",
)

OPS = [Dropout, BackwardDropout]
