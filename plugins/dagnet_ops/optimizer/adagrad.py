"""``_sparse_adagrad_update`` (``mx.nd.sparse.adagrad_update``): AdaGrad for row_sparse
gradients (Duchi et al., 2011).  Its sparse implementation (in :mod:`.sparse_updates`)
updates only the rows the gradient holds; on dense arrays every element is updated."""

from __future__ import annotations

import numpy as np

from dagnet.operator import Field, assign

from ._common import UpdateParam, blocks, clip, reference_gradient, update_op

__all__ = ["OPS"]


class AdagradParam(UpdateParam):
    epsilon = Field(float, 1e-7, "added to the history inside the square root")


def _step(xp, attrs, weight, g, history):
    history_new = history + g * g
    return history_new, weight - attrs.lr * g / xp.sqrt(history_new + attrs.epsilon)


def _adagrad(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    for weight, grad, history, out in blocks(xp, *inputs, outputs[0]):
        g = clip(xp, grad * attrs.rescale_grad, attrs.clip_gradient)
        history_new, result = _step(xp, attrs, weight, g, history)
        history[...] = history_new
        assign(out, req[0], result)


def _reference(params, weight, grad, history):
    p = AdagradParam.parse("_sparse_adagrad_update", params)
    return _step(np, p, weight, reference_gradient(p, weight, grad), history)[1]


OPS = [
    update_op(
        "_sparse_adagrad_update", AdagradParam, _adagrad, ["weight", "grad", "history"], [2],
        _reference,
        """AdaGrad step for row_sparse gradients; ``history`` is updated in place:
``g = clip(rescale_grad * grad)``, ``history += g^2``,
output ``weight - lr * g / sqrt(history + epsilon)``, on the gradient's rows only
(weight decay must be 0, as in MXNet).""",
        state_range=lambda d, shape: [d.uniform(shape, 0.0, 1.0)],
        extra_params=lambda d: {"wd": 0.0}),
]
