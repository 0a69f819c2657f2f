"""Stochastic gradient descent: ``sgd_update``, ``sgd_mom_update`` and Nesterov's
``nag_mom_update``."""

from __future__ import annotations

from dagnet.operator import Field, OpReqType, assign

from ._common import UpdateParam, blocks, clip, descent_step, reference_gradient, update_op

__all__ = ["OPS"]


def _sgd(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    for weight, grad, out in blocks(xp, *inputs, outputs[0]):
        _write(xp, out, req[0], weight, descent_step(xp, attrs, weight, grad), xp.subtract)


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
    xp = ctx.xp
    for weight, grad, mom, out in blocks(xp, *inputs, outputs[0]):
        step = descent_step(xp, attrs, weight, grad)
        mom *= attrs.momentum
        mom -= step
        _write(xp, out, req[0], weight, mom, xp.add)


def _sgd_mom_reference(params, weight, grad, mom):
    p = SGDMomParam.parse("sgd_mom_update", params)
    return weight + p.momentum * mom - p.lr * (reference_gradient(p, weight, grad) + p.wd * weight)


def _nag_mom(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    for weight, grad, mom, out in blocks(xp, *inputs, outputs[0]):
        step = attrs.lr * (clip(xp, grad * attrs.rescale_grad, attrs.clip_gradient)
                           + attrs.wd * weight)
        mom *= attrs.momentum
        mom -= step
        assign(out, req[0], weight + attrs.momentum * mom - step)


def _nag_mom_reference(params, weight, grad, mom):
    p = SGDMomParam.parse("nag_mom_update", params)
    step = p.lr * (reference_gradient(p, weight, grad) + p.wd * weight)
    return weight + p.momentum * (p.momentum * mom - step) - step


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
    update_op(
        "nag_mom_update", SGDMomParam, _nag_mom, ["weight", "grad", "mom"], [2],
        _nag_mom_reference,
        """Nesterov momentum step; ``mom`` is updated in place:
``step = lr * (clip(rescale_grad * grad) + wd * weight)``, ``mom = momentum * mom - step``,
output ``weight + momentum * mom - step``."""),
]
