"""Sign-based updates (Bernstein et al., 2018): ``signsgd_update`` and ``signum_update``
step by the sign of the gradient (or of its momentum), a fixed size per element."""

from __future__ import annotations

import numpy as np

from dagnet.operator import Field, assign

from ._common import UpdateParam, blocks, clip, reference_gradient, update_op

__all__ = ["OPS"]


def _signsgd(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    for weight, grad, out in blocks(xp, *inputs, outputs[0]):
        g = clip(xp, grad * attrs.rescale_grad, attrs.clip_gradient)
        assign(out, req[0], (1 - attrs.lr * attrs.wd) * weight - attrs.lr * xp.sign(g))


def _signsgd_reference(params, weight, grad):
    p = UpdateParam.parse("signsgd_update", params)
    return (1 - p.lr * p.wd) * weight - p.lr * np.sign(reference_gradient(p, weight, grad))


class SignumParam(UpdateParam):
    momentum = Field(float, 0.0, "the fraction of the previous momentum kept")
    wd_lh = Field(float, 0.0, "decoupled weight decay (Loshchilov & Hutter), applied to the "
                              "weight directly")


def _signum(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    for weight, grad, mom, out in blocks(xp, *inputs, outputs[0]):
        g = clip(xp, grad * attrs.rescale_grad, attrs.clip_gradient) + attrs.wd * weight
        mom *= attrs.momentum
        mom -= (1 - attrs.momentum) * g
        assign(out, req[0], (1 - attrs.lr * attrs.wd_lh) * weight + attrs.lr * xp.sign(mom))


def _signum_reference(params, weight, grad, mom):
    p = SignumParam.parse("signum_update", params)
    g = reference_gradient(p, weight, grad) + p.wd * weight
    mom = p.momentum * mom - (1 - p.momentum) * g
    return (1 - p.lr * p.wd_lh) * weight + p.lr * np.sign(mom)


OPS = [
    update_op(
        "signsgd_update", UpdateParam, _signsgd, ["weight", "grad"], [], _signsgd_reference,
        """SignSGD step: ``(1 - lr * wd) * weight - lr * sign(clip(rescale_grad * grad))``."""),
    update_op(
        "signum_update", SignumParam, _signum, ["weight", "grad", "mom"], [2],
        _signum_reference,
        """Signum step; ``mom`` is updated in place:
``mom = momentum * mom - (1 - momentum) * (clip(rescale_grad * grad) + wd * weight)``,
output ``(1 - lr * wd_lh) * weight + lr * sign(mom)``."""),
]
