"""``MakeLoss``: turns any expression into a loss head (``BlockGrad``, which stops the
gradient instead, lives with the elementwise operators in ``tensor``)."""

from __future__ import annotations

from dagnet.operator import (
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    Op,
    Params,
    assign,
    elemwise_shape,
)

from .._draw import Draw

__all__ = ["OPS"]


def _identity(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], inputs[0])


class MakeLossParam(Params):
    grad_scale = Field(float, 1.0, "the gradient of each element")
    valid_thresh = Field(float, 0.0, "with normalization='valid', the elements above this count")
    normalization = Field(str, "null", "divide the gradient by: null - nothing; batch - the batch "
                                       "size; valid - the number of elements above valid_thresh",
                          choices=("batch", "null", "valid"))


def _make_loss_backward(attrs, ctx, inputs, req, outputs):
    out = inputs[0]
    scale = attrs.grad_scale
    if attrs.normalization == "batch":
        scale /= out.shape[0]
    elif attrs.normalization == "valid":
        scale /= max(int((out > attrs.valid_thresh).sum()), 1)
    assign(outputs[0], req[0], scale)


def _make_loss_sample(draw):
    d = Draw(draw)
    params = {"grad_scale": d.float(0.5, 2.0, "grad_scale"),
              "normalization": d.choice(["null", "batch", "valid"], "normalization")}
    return Case([d.uniform(d.shape(d.int(1, 3)))], params)


MakeLoss = Op(
    "MakeLoss",
    description="""Marks ``data`` as a loss: the output is ``data``, and the backward pass
ignores the head gradient and gives every element the gradient ``grad_scale``,
divided by the batch size (``normalization='batch'``) or by the number of
elements above ``valid_thresh`` (``'valid'``).  The conformance suite checks the
forward pass; the loss gradient is tested directly.""",
    params=MakeLossParam,
    input_names=["data"],
    output_names=["output"],
    infer_shape=elemwise_shape("MakeLoss"),
    compute={XP: _identity},
    gradient=Gradient("_backward_MakeLoss", uses=("out_data",)),
    inplace=[(0, 0)],
    domain=Domain(_make_loss_sample, lambda params, x: x, differentiable=()),
)

BackwardMakeLoss = Op(
    "_backward_MakeLoss", params=MakeLossParam, num_inputs=1, compute={XP: _make_loss_backward},
    is_backward=True, forward_op="MakeLoss",
)

OPS = [MakeLoss, BackwardMakeLoss]
