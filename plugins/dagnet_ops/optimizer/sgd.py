"""Stochastic gradient descent: ``sgd_update`` and ``sgd_mom_update``."""

from __future__ import annotations

from dagnet.operator import Field, OpReqType, assign

from ._common import UpdateParam, descent_step, reference_gradient, update_op

__all__ = ["OPS"]


def _sgd(attrs, ctx, inputs, req, outputs):
    weight, grad = inputs
    step = descent_step(ctx.xp, attrs, weight, grad)
    _write(ctx.xp, outputs[0], req[0], weight, step, ctx.xp.subtract)


def _write(xp, out, req, weight, step, combine):
    """``out (req) combine(weight, step)``; written straight into ``out`` (which may be
    ``weight`` itself) when the request is a write."""
    if req is OpReqType.WRITE or req is OpReqType.INPLACE:
        combine(weight, step, out=out)
    else:
        assign(out, req, combine(weight, step))


def _sgd_reference(params, weight, grad):
    p = UpdateParam.parse("sgd_update", params)
    return weight - p.lr * (reference_gradient(p, weight, grad) + p.wd * weight)


class SGDMomParam(UpdateParam):
    momentum = Field(float, 0.0, "the momentum: the fraction of the previous step kept")


def _sgd_mom(attrs, ctx, inputs, req, outputs):
    weight, grad, mom = inputs
    step = descent_step(ctx.xp, attrs, weight, grad)
    mom *= attrs.momentum
    mom -= step
    _write(ctx.xp, outputs[0], req[0], weight, mom, ctx.xp.add)


def _sgd_mom_reference(params, weight, grad, mom):
    p = SGDMomParam.parse("sgd_mom_update", params)
    return weight + p.momentum * mom - p.lr * (reference_gradient(p, weight, grad) + p.wd * weight)


OPS = [
    update_op(
        "sgd_update", UpdateParam, _sgd, ["weight", "grad"], [], _sgd_reference,
        """Stochastic gradient descent step:
``weight - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)``.
Write it back with ``out=weight``."""),
    update_op(
        "sgd_mom_update", SGDMomParam, _sgd_mom, ["weight", "grad", "mom"], [2], _sgd_mom_reference,
        """Momentum SGD step; ``mom`` is updated in place:
``mom = momentum * mom - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)``,
output ``weight + mom``."""),
]
