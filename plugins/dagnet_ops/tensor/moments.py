"""``moments`` (MXNet's ``moments.cc``): the mean and the (biased) variance over ``axes``.

Two outputs, both in the input's dtype.  Gradient: ``d mean / dx = 1/N`` and
``d var / dx = 2 (x - mean) / N`` with N the number of reduced elements.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, Shape

from . import _sampling as S
from ._common import backward_op, known, norm_axis, put, with_attrs


class MomentsParam(Params):
    axes = Field(Shape, None, "Array of ints. Axes along which to compute mean and variance.",
                 optional=True)
    keepdims = Field(bool, False, "produce moments with the same dimensionality as the input.")


def _axes(attrs: MomentsParam, ndim: int) -> tuple[int, ...]:
    if attrs.axes is None:
        return tuple(range(ndim))
    return tuple(sorted({norm_axis("moments", a, ndim, "axes") for a in attrs.axes}))


def _infer(attrs, ins, outs):
    data = ins[0]
    if not known(data):
        return ins, outs
    axes = _axes(attrs, len(data))
    if attrs.keepdims:
        out = tuple(1 if i in axes else d for i, d in enumerate(data))
    else:
        out = tuple(d for i, d in enumerate(data) if i not in axes) or (1,)
    return ins, [out, out]


def _compute(attrs, ctx, inputs, req, outputs):
    xp, x = ctx.xp, inputs[0]
    axes = _axes(attrs, x.ndim)
    mean = xp.mean(x, axis=axes, keepdims=True)
    var = xp.mean((x - mean) ** 2, axis=axes, keepdims=True)
    put(outputs[0], req[0], mean)
    put(outputs[1], req[1], var)


def _back(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g_mean, g_var, x, mean, _var = inputs
    axes = _axes(attrs, x.ndim)
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    centred = x - mean.reshape(kept)
    grad = (g_mean.reshape(kept) + 2 * g_var.reshape(kept) * centred) / n
    put(outputs[0], req[0], xp.broadcast_to(grad, x.shape))


def _sample(draw):
    shape = S.shape(draw)
    return Case([S.floats(draw, shape)], {"axes": S.axes(draw, len(shape)),
                                          "keepdims": S.boolean(draw, "keepdims")})


def _reference(p: MomentsParam, x: np.ndarray) -> list[Any]:
    axes = tuple(range(x.ndim)) if p.axes is None else tuple(a % x.ndim for a in p.axes)
    mean = np.mean(x, axis=axes, keepdims=p.keepdims)
    var = np.var(x, axis=axes, keepdims=p.keepdims)
    return [np.reshape(mean, mean.shape or (1,)), np.reshape(var, var.shape or (1,))]


OPS: list[Op] = [
    Op("moments", params=MomentsParam, input_names=["data"], num_outputs=2,
       output_names=["mean", "var"], infer_shape=_infer, compute={XP: _compute},
       gradient=Gradient("_backward_moments", ("out_grad", "in_data", "out_data")),
       domain=Domain(_sample, reference=with_attrs(MomentsParam, "moments", _reference)),
       description="Mean and variance of ``data`` over ``axes`` (all axes when None): "
                   "``mean = sum(x) / N``, ``var = sum((x - mean)^2) / N``; ``keepdims`` keeps "
                   "the reduced axes with size 1 (a full reduction gives shape (1,)).  Dtype "
                   "= data's.  Gradient ``(dmean + 2 dvar (x - mean)) / N``."),
    backward_op("moments", MomentsParam, 5, 1, _back),
]
