"""RMSProp (Tieleman & Hinton, 2012) and its centred form (Graves, 2013):
``rmsprop_update`` and ``rmspropalex_update``."""

from __future__ import annotations

import numpy as np

from dagnet.operator import Field, assign

from ._common import UpdateParam, blocks, clip, update_op

__all__ = ["OPS"]


class RMSPropParam(UpdateParam):
    gamma1 = Field(float, 0.95, "decay rate of the squared-gradient average")
    epsilon = Field(float, 1e-8, "added inside the square root")
    clip_weights = Field(float, -1.0, "clip the new weight into [-clip_weights, clip_weights]; "
                                      "negative: no clipping")


class RMSPropAlexParam(RMSPropParam):
    gamma2 = Field(float, 0.9, "decay rate of the step (the momentum)")


def _gradient(xp, attrs, weight, grad):
    # weight decay joins the gradient before clipping, as MXNet's RMSProp kernels do
    return clip(xp, grad * attrs.rescale_grad + attrs.wd * weight, attrs.clip_gradient)


def _clip_weight(xp, attrs, weight):
    return xp.clip(weight, -attrs.clip_weights, attrs.clip_weights) \
        if attrs.clip_weights >= 0 else weight


def _rmsprop_step(xp, attrs, weight, grad, n):
    g = _gradient(xp, attrs, weight, grad)
    n_new = (1 - attrs.gamma1) * g * g + attrs.gamma1 * n
    return n_new, _clip_weight(xp, attrs, weight - attrs.lr * g / xp.sqrt(n_new + attrs.epsilon))


def _rmsprop(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    for weight, grad, n, out in blocks(xp, *inputs, outputs[0]):
        n_new, result = _rmsprop_step(xp, attrs, weight, grad, n)
        n[...] = n_new
        assign(out, req[0], result)


def _rmspropalex_step(xp, attrs, weight, grad, n, g_avg, delta):
    g = _gradient(xp, attrs, weight, grad)
    n_new = (1 - attrs.gamma1) * g * g + attrs.gamma1 * n
    g_new = (1 - attrs.gamma1) * g + attrs.gamma1 * g_avg
    delta_new = attrs.gamma2 * delta - attrs.lr * g / xp.sqrt(n_new - g_new * g_new
                                                                + attrs.epsilon)
    return n_new, g_new, delta_new, _clip_weight(xp, attrs, weight + delta_new)


def _rmspropalex(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    for weight, grad, n, g_avg, delta, out in blocks(xp, *inputs, outputs[0]):
        n_new, g_new, delta_new, result = _rmspropalex_step(xp, attrs, weight, grad, n, g_avg,
                                                            delta)
        n[...], g_avg[...], delta[...] = n_new, g_new, delta_new
        assign(out, req[0], result)


def _rmsprop_reference(params, weight, grad, n):
    return _rmsprop_step(np, RMSPropParam.parse("rmsprop_update", params), weight, grad, n)[1]


def _rmspropalex_reference(params, weight, grad, n, g_avg, delta):
    p = RMSPropAlexParam.parse("rmspropalex_update", params)
    return _rmspropalex_step(np, p, weight, grad, n, g_avg, delta)[3]


def _alex_states(d, shape):
    # n must stay above g^2 (a variance): draw g small and n large
    return [d.uniform(shape, 1.0, 2.0), d.uniform(shape, -0.5, 0.5), d.uniform(shape)]


OPS = [
    update_op(
        "rmsprop_update", RMSPropParam, _rmsprop, ["weight", "grad", "n"], [2],
        _rmsprop_reference,
        """RMSProp step; ``n`` is updated in place:
``g = clip(rescale_grad * grad + wd * weight)``, ``n = (1 - gamma1) g^2 + gamma1 n``,
output ``clip_weights(weight - lr g / sqrt(n + epsilon))``.""",
        state_range=lambda d, shape: [d.uniform(shape, 0.0, 1.0)]),
    update_op(
        "rmspropalex_update", RMSPropAlexParam, _rmspropalex,
        ["weight", "grad", "n", "g", "delta"], [2, 3, 4], _rmspropalex_reference,
        """Centred RMSProp step (Graves); ``n``, ``g`` and ``delta`` are updated in place:
``gr = clip(rescale_grad * grad + wd * weight)``, ``n = (1 - gamma1) gr^2 + gamma1 n``,
``g = (1 - gamma1) gr + gamma1 g``,
``delta = gamma2 delta - lr gr / sqrt(n - g^2 + epsilon)``,
output ``clip_weights(weight + delta)``.""",
        state_range=_alex_states),
]
