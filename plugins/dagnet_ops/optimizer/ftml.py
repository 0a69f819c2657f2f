"""``ftml_update``: Follow the Moving Leader (Zheng & Kwok, 2017)."""

from __future__ import annotations

import numpy as np

from dagnet.operator import REQUIRED, Field, assign

from ._common import UpdateParam, blocks, update_op

__all__ = ["OPS"]


class FTMLParam(UpdateParam):
    beta1 = Field(float, 0.6, "decay rate of the first moment")
    beta2 = Field(float, 0.999, "decay rate of the second moment")
    epsilon = Field(float, 1e-8, "added to the root of the second moment")
    t = Field(int, REQUIRED, "the update count, from 1", low=1)
    clip_grad = Field(float, -1.0, "clip the gradient into [-clip_grad, clip_grad]; negative: "
                                   "no clipping")
    clip_gradient = Field(float, -1.0, "unused by FTML (it reads clip_grad), accepted as "
                                       "MXNet does")


def _terms(xp, attrs, weight, grad, d, v, z):
    g = grad * attrs.rescale_grad + attrs.wd * weight
    if attrs.clip_grad >= 0:
        g = xp.clip(g, -attrs.clip_grad, attrs.clip_grad)
    v_new = attrs.beta2 * v + (1 - attrs.beta2) * g * g
    d_new = (1 - attrs.beta1 ** attrs.t) / attrs.lr * (
        xp.sqrt(v_new / (1 - attrs.beta2 ** attrs.t)) + attrs.epsilon)
    z_new = attrs.beta1 * z + (1 - attrs.beta1) * g - (d_new - attrs.beta1 * d) * weight
    return d_new, v_new, z_new


def _ftml(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    for weight, grad, d, v, z, out in blocks(xp, *inputs, outputs[0]):
        d_new, v_new, z_new = _terms(xp, attrs, weight, grad, d, v, z)
        d[...], v[...], z[...] = d_new, v_new, z_new
        assign(out, req[0], -z_new / d_new)


def _reference(params, weight, grad, d, v, z):
    p = FTMLParam.parse("ftml_update", params)
    d_new, _, z_new = _terms(np, p, weight, grad, d, v, z)
    return -z_new / d_new


def _states(draw, shape):
    return [draw.uniform(shape, 0.5, 1.5), draw.uniform(shape, 0.0, 1.0), draw.uniform(shape)]


OPS = [
    update_op(
        "ftml_update", FTMLParam, _ftml, ["weight", "grad", "d", "v", "z"], [2, 3, 4], _reference,
        """FTML step at count ``t``; ``d``, ``v`` and ``z`` are updated in place:
``g = clip(rescale_grad * grad + wd * weight, clip_grad)``,
``v = beta2 v + (1 - beta2) g^2``,
``d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon)``,
``z = beta1 z + (1 - beta1) g - (d_t - beta1 d) weight``, ``d = d_t``;
output ``-z / d``.""",
        state_range=_states, extra_params=lambda d: {"t": d.int(1, 10)}),
]
