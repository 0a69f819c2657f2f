"""``make_loss``: the newer, parameterless form of ``MakeLoss`` -- the output is the input,
and the backward pass gives every element the gradient 1 whatever the head gradient."""

from __future__ import annotations

from dagnet.operator import XP, Case, Domain, Gradient, Op, assign, elemwise_shape

from .._draw import Draw

__all__ = ["OPS"]


def _identity(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], inputs[0])


def _ones(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], 1)


def _sample(draw):
    d = Draw(draw)
    return Case([d.uniform(d.shape(d.int(1, 3)))], {})


make_loss = Op(
    "make_loss",
    description="""Marks ``data`` as a loss head: the output is ``data``; the backward pass
ignores the head gradient and gives each element of ``data`` the gradient 1 (so a
network's loss needs no head gradient).  ``MakeLoss`` is the older form with
``grad_scale`` and normalization.  The conformance suite checks the forward pass;
the loss gradient is tested directly.""",
    input_names=["data"],
    output_names=["output"],
    infer_shape=elemwise_shape("make_loss"),
    compute={XP: _identity},
    gradient=Gradient("_backward_make_loss", uses=("out_data",)),  # a loss head: no head gradient
    inplace=[(0, 0)],
    domain=Domain(_sample, lambda params, x: x, differentiable=()),
)

backward_make_loss = Op(
    "_backward_make_loss", num_inputs=1, compute={XP: _ones}, is_backward=True,
    forward_op="make_loss",
)

OPS = [make_loss, backward_make_loss]
