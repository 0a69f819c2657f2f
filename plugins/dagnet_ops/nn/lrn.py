"""``LRN``: local response normalization across channels."""

from __future__ import annotations

import numpy as np

from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    Op,
    Params,
    assign,
    elemwise_shape,
)

from .._draw import Draw

__all__ = ["OPS"]


class LRNParam(Params):
    alpha = Field(float, 1e-4, "the variance scaling parameter")
    beta = Field(float, 0.75, "the power")
    knorm = Field(float, 2.0, "the additive constant")
    nsize = Field(int, REQUIRED, "channels in each normalization window "
                                 "(the window spans (nsize - 1) // 2 on each side)", low=1)


def _channel_window_sum(xp, a, half):
    """``out[:, c] = sum(a[:, c-half : c+half+1])`` (clipped at the ends)."""
    padded = xp.pad(a, [(0, 0), (half, half)] + [(0, 0)] * (a.ndim - 2))
    total = xp.zeros_like(a)
    for offset in range(2 * half + 1):
        total += padded[:, offset:offset + a.shape[1]]
    return total


def _norm(xp, attrs, x):
    half = (attrs.nsize - 1) // 2
    return attrs.knorm + (attrs.alpha / attrs.nsize) * _channel_window_sum(xp, x * x, half)


def _forward(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    norm = _norm(ctx.xp, attrs, x)
    assign(outputs[0], req[0], x * norm ** -attrs.beta)
    assign(outputs[1], req[1], norm)


def _backward(attrs, ctx, inputs, req, outputs):
    dy, x, _, norm = inputs
    half = (attrs.nsize - 1) // 2
    # The window is symmetric, so summing over the windows that contain c is the same window sum.
    spread = _channel_window_sum(ctx.xp, dy * x * norm ** (-attrs.beta - 1), half)
    dx = dy * norm ** -attrs.beta - (2 * attrs.alpha * attrs.beta / attrs.nsize) * x * spread
    assign(outputs[0], req[0], dx)


def _sample(draw):
    d = Draw(draw)
    shape = d.shape(d.int(2, 4), 1, 4)
    params = {"nsize": d.int(1, 5, "nsize"), "alpha": d.float(1e-4, 2.0, "alpha"),
              "beta": d.float(0.1, 1.0, "beta"), "knorm": d.float(0.5, 2.0, "knorm")}
    return Case([d.uniform(shape, -2, 2)], params)


def _reference(params, x):
    p = LRNParam.parse("LRN", params)
    half = (p.nsize - 1) // 2
    out = np.empty_like(x)
    for c in range(x.shape[1]):
        window = x[:, max(0, c - half):c + half + 1]
        out[:, c] = x[:, c] / (p.knorm + p.alpha / p.nsize * (window ** 2).sum(axis=1)) ** p.beta
    return out


LRN = Op(
    "LRN",
    description="""Local response normalization across channels (axis 1):
``out[c] = x[c] / (knorm + alpha / nsize * sum(x[c']^2 for c' within (nsize-1)//2 of c))^beta``.
The hidden second output ``tmp_norm`` keeps the denominator base for the gradient.""",
    params=LRNParam,
    num_outputs=2,
    num_visible_outputs=1,
    input_names=["data"],
    output_names=["output", "tmp_norm"],
    infer_shape=elemwise_shape("LRN"),
    compute={XP: _forward},
    gradient=Gradient("_backward_LRN", uses=("out_grad", "in_data", "out_data")),
    domain=Domain(_sample, _reference),
)

BackwardLRN = Op(
    "_backward_LRN", params=LRNParam, num_inputs=4, compute={XP: _backward},
    is_backward=True, forward_op="LRN",
)

OPS = [LRN, BackwardLRN]
