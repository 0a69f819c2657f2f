"""``ftrl_update``: Follow the Regularized Leader, proximal (McMahan et al., 2013)."""

from __future__ import annotations

import numpy as np

from dagnet.operator import Field, assign

from ._common import UpdateParam, blocks, clip, reference_gradient, update_op

__all__ = ["OPS"]


class FtrlParam(UpdateParam):
    lamda1 = Field(float, 0.01, "L1 regularization strength")
    beta = Field(float, 1.0, "per-coordinate learning-rate smoothing")


def _step(xp, attrs, weight, g, z, n):
    z_new = z + g - (xp.sqrt(n + g * g) - xp.sqrt(n)) * weight / attrs.lr
    n_new = n + g * g
    shrunk = (xp.sign(z_new) * attrs.lamda1 - z_new) / (
        (attrs.beta + xp.sqrt(n_new)) / attrs.lr + attrs.wd)
    return z_new, n_new, shrunk * (xp.abs(z_new) > attrs.lamda1)


def _ftrl(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    for weight, grad, z, n, out in blocks(xp, *inputs, outputs[0]):
        g = clip(xp, grad * attrs.rescale_grad, attrs.clip_gradient)
        z_new, n_new, result = _step(xp, attrs, weight, g, z, n)
        z[...], n[...] = z_new, n_new
        assign(out, req[0], result)


def _reference(params, weight, grad, z, n):
    p = FtrlParam.parse("ftrl_update", params)
    return _step(np, p, weight, reference_gradient(p, weight, grad), z, n)[2]


OPS = [
    update_op(
        "ftrl_update", FtrlParam, _ftrl, ["weight", "grad", "z", "n"], [2, 3], _reference,
        """FTRL-proximal step; ``z`` and ``n`` are updated in place:
``g = clip(rescale_grad * grad)``, ``z += g - (sqrt(n + g^2) - sqrt(n)) * weight / lr``,
``n += g^2``; output ``(sign(z) lamda1 - z) / ((beta + sqrt(n)) / lr + wd)`` where
``|z| > lamda1``, else 0.""",
        state_range=lambda d, shape: [d.uniform(shape), d.uniform(shape, 0.0, 1.0)]),
]
