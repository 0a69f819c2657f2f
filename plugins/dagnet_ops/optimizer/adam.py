"""``adam_update``: the Adam step (Kingma & Ba, 2014) without bias correction, which
MXNet's Python optimizer folds into the learning rate."""

from __future__ import annotations

import numpy as np

from dagnet.operator import Field, assign

from ._common import UpdateParam, blocks, clip, compiled_kernels, update_op

__all__ = ["OPS"]


class AdamParam(UpdateParam):
    beta1 = Field(float, 0.9, "decay rate of the first moment")
    beta2 = Field(float, 0.999, "decay rate of the second moment")
    epsilon = Field(float, 1e-8, "added to the root of the second moment")


def _adam(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    if _compiled_adam(attrs, xp, inputs, req[0], outputs[0]):
        return
    for weight, grad, mean, var, out in blocks(xp, *inputs, outputs[0]):
        # Unlike SGD, weight decay joins the gradient before clipping (as MXNet).
        g = clip(xp, grad * attrs.rescale_grad + attrs.wd * weight, attrs.clip_gradient)
        mean[...] = attrs.beta1 * mean + (1 - attrs.beta1) * g
        var[...] = attrs.beta2 * var + (1 - attrs.beta2) * g * g
        assign(out, req[0], weight - attrs.lr * mean / (xp.sqrt(var) + attrs.epsilon))


def _compiled_adam(attrs, xp, inputs, req, out) -> bool:
    """The update by the compiled kernel where it applies (:func:`compiled_kernels`);
    False otherwise."""
    jit = compiled_kernels(xp, [req], [*inputs, out])
    if jit is None:
        return False
    cast = out.dtype.type
    weight, grad, mean, var = (a.reshape(-1) for a in inputs)
    jit.adam(weight, grad, mean, var, out.reshape(-1), cast(attrs.lr), cast(attrs.wd),
             cast(attrs.rescale_grad), attrs.clip_gradient >= 0,
             cast(max(attrs.clip_gradient, 0.0)), cast(attrs.beta1), cast(1 - attrs.beta1),
             cast(attrs.beta2), cast(1 - attrs.beta2), cast(attrs.epsilon))
    return True


def _reference(params, weight, grad, mean, var):
    p = AdamParam.parse("adam_update", params)
    g = grad * p.rescale_grad + p.wd * weight
    if p.clip_gradient >= 0:
        g = np.clip(g, -p.clip_gradient, p.clip_gradient)
    m = p.beta1 * mean + (1 - p.beta1) * g
    v = p.beta2 * var + (1 - p.beta2) * g * g
    return weight - p.lr * m / (np.sqrt(v) + p.epsilon)


OPS = [
    update_op(
        "adam_update", AdamParam, _adam, ["weight", "grad", "mean", "var"], [2, 3], _reference,
        """Adam step; ``mean`` and ``var`` are updated in place:
``g = clip(rescale_grad * grad + wd * weight, clip_gradient)``,
``mean = beta1 * mean + (1 - beta1) * g``, ``var = beta2 * var + (1 - beta2) * g^2``,
output ``weight - lr * mean / (sqrt(var) + epsilon)``.""",
        state_range=lambda d, shape: [d.uniform(shape), d.uniform(shape, 0.0, 1.0)]),
]
