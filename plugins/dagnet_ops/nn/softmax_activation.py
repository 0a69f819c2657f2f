"""``SoftmaxActivation`` (MXNet's deprecated ``softmax_activation.cc``): softmax over
each instance (every axis but the first, flattened) or over the channel axis (1).

Gradient ``y (dy - sum(dy y))`` over the same axes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, assign, merge_shape

from .._draw import Draw

__all__ = ["OPS"]


class SoftmaxActivationParam(Params):
    mode = Field(str, "instance", "Specifies how to compute the softmax. If set to "
                                  "``instance``, it computes softmax for each instance. If set "
                                  "to ``channel``, It computes cross channel softmax for each "
                                  "position of each instance.", choices=("channel", "instance"))


def _axes(mode: str, ndim: int) -> tuple[int, ...]:
    return (1,) if mode == "channel" else tuple(range(1, ndim))


def _softmax(xp: Any, x: Any, axes: tuple[int, ...]) -> Any:
    e = xp.exp(x - x.max(axis=axes, keepdims=True))
    return e / e.sum(axis=axes, keepdims=True)


def _infer(attrs, ins, outs):
    data = merge_shape(ins[0], outs[0], "SoftmaxActivation data")
    if data is not None and len(data) < (3 if attrs.mode == "channel" else 2):
        raise ShapeError(f"operator 'SoftmaxActivation': mode={attrs.mode!r} needs more axes "
                         f"than the input {tuple(data)} has")
    return [data], [data]


def _forward(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    assign(outputs[0], req[0], _softmax(ctx.xp, x, _axes(attrs.mode, x.ndim)))


def _backward(attrs, ctx, inputs, req, outputs):
    g, y = inputs
    axes = _axes(attrs.mode, y.ndim)
    assign(outputs[0], req[0], y * (g - (g * y).sum(axis=axes, keepdims=True)))


def _case(draw):
    d = Draw(draw)
    mode = d.choice(["instance", "channel"], "mode")
    shape = d.shape(d.int(2 if mode == "instance" else 3, 4), 1, 3)
    return Case([d.uniform(shape, -2, 2)], {"mode": mode})


def _reference(raw, x):
    p = SoftmaxActivationParam.parse("SoftmaxActivation", raw)
    return _softmax(np, x, _axes(p.mode, x.ndim))


OPS = [
    Op("SoftmaxActivation", params=SoftmaxActivationParam, input_names=["data"],
       infer_shape=_infer, compute={XP: _forward},
       gradient=Gradient("_backward_SoftmaxActivation", ("out_grad", "out_data")),
       domain=Domain(_case, reference=_reference),
       description="Softmax over each instance (all axes but the first; mode='instance') or "
                   "over the channel axis 1 ('channel').  Dtype = data's.  Gradient "
                   "``y (dy - sum(dy y))`` over the same axes."),
    Op("_backward_SoftmaxActivation", params=SoftmaxActivationParam, num_inputs=2,
       compute={XP: _backward}, is_backward=True, forward_op="SoftmaxActivation"),
]
