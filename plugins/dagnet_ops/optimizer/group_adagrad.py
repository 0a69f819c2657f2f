"""``_contrib_group_adagrad_update`` (``mx.nd.contrib.group_adagrad_update``): AdaGrad
with one accumulated rate per row of a 2-D weight (MXNet's contrib ``GroupAdaGrad``).
Its sparse implementation (in :mod:`.sparse_updates`) updates only the rows a
row_sparse gradient holds."""

from __future__ import annotations

import numpy as np

from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    NoGradient,
    Op,
    Params,
    assign,
    merge_shape,
)

from .._draw import Draw
from ._common import clip

__all__ = ["OPS"]

_NAME = "_contrib_group_adagrad_update"


class GroupAdagradParam(Params):
    lr = Field(float, REQUIRED, "learning rate")
    rescale_grad = Field(float, 1.0, "multiply the gradient by this first")
    clip_gradient = Field(float, -1.0, "clip the gradient into [-clip_gradient, clip_gradient]; "
                                       "a negative value turns clipping off")
    epsilon = Field(float, 1e-5, "added to the history inside the square root")


def _shape(attrs, ins, outs):
    weight = None
    for label, shape in (("weight", ins[0]), ("grad", ins[1]), ("output", outs[0])):
        weight = merge_shape(weight, shape, f"operator {_NAME!r}, {label}")
    history = ins[2]
    if weight is not None:
        history = merge_shape(history, (weight[0], 1), f"operator {_NAME!r}, history (one "
                                                       f"value per row of the weight)")
    return [weight, weight, history], [weight]


def _step(xp, attrs, weight, grad, history):
    g = clip(xp, grad * attrs.rescale_grad, attrs.clip_gradient)
    flat = g.reshape(g.shape[0], -1)
    history_new = history + (flat * flat).mean(axis=1, keepdims=True)
    scale = attrs.lr / xp.sqrt(history_new + attrs.epsilon)
    return history_new, weight - (flat * scale).reshape(g.shape)


def _group_adagrad(attrs, ctx, inputs, req, outputs):
    weight, grad, history = inputs
    history_new, result = _step(ctx.xp, attrs, weight, grad, history)
    history[...] = history_new
    assign(outputs[0], req[0], result)


def _reference(params, weight, grad, history):
    return _step(np, GroupAdagradParam.parse(_NAME, params), weight, grad, history)[1]


def _sample(draw):
    d = Draw(draw)
    rows, cols = d.int(1, 4, "rows"), d.int(1, 4, "cols")
    arrays = [d.uniform((rows, cols), -2, 2), d.uniform((rows, cols), -2, 2),
              d.uniform((rows, 1), 0.0, 1.0)]
    values = {"lr": d.float(0.001, 1.0, "lr"), "rescale_grad": d.float(0.1, 2.0, "rescale")}
    if d.bool("clip"):
        values["clip_gradient"] = d.float(0.0, 1.0, "clip_gradient")
    return Case(arrays, values)


OPS = [
    Op(
        _NAME,
        description="""AdaGrad with one rate per row; ``history`` (rows x 1) is updated in place:
``g = clip(rescale_grad * grad)``, ``history += mean(g^2, axis=1)``,
output ``weight - lr * g / sqrt(history + epsilon)``; with a row_sparse gradient only its
rows change.""",
        params=GroupAdagradParam,
        num_inputs=3,
        input_names=["weight", "grad", "history"],
        output_names=["output"],
        mutate_inputs=[2],
        infer_shape=_shape,
        compute={XP: _group_adagrad},
        gradient=NoGradient("optimizer update"),
        inplace=[(0, 0)],
        domain=Domain(_sample, _reference),
    ),
]
