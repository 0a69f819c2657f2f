"""``Correlation`` (MXNet's ``correlation.cc``, FlowNet's correlation layer).

For every output position and every displacement (dx, dy) of the neighbourhood
(``max_displacement`` / ``stride2`` steps each way), the sum over channels and a
``kernel_size`` window of ``data1 * data2`` shifted by the displacement (or
``|data1 - data2|`` with ``is_multiply=False``), divided by ``kernel_size^2 C``.
Both inputs are zero-padded by ``pad_size``; positions step by ``stride1``.  Output
(N, (2 r + 1)^2, top_h, top_w) with r = max_displacement // stride2.  Gradients for
both inputs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, assign

from .._draw import Draw

__all__ = ["OPS"]


class CorrelationParam(Params):
    kernel_size = Field(int, 1, "kernel size for Correlation must be an odd number", low=1)
    max_displacement = Field(int, 1, "Max displacement of Correlation ", low=0)
    stride1 = Field(int, 1, "stride1 quantize data1 globally", low=1)
    stride2 = Field(int, 1, "stride2 quantize data2 within the neighborhood centered around "
                            "data1", low=1)
    pad_size = Field(int, 0, "pad for Correlation", low=0)
    is_multiply = Field(bool, True, "operation type is either multiplication or subduction")


def _geometry(p: CorrelationParam, shape: Any) -> tuple[int, int, int, int]:
    """(top_h, top_w, grid radius, grid width) for data of ``shape``."""
    if p.kernel_size % 2 == 0:
        raise ShapeError(f"operator 'Correlation': kernel_size={p.kernel_size} must be odd")
    border = p.max_displacement + (p.kernel_size - 1) // 2
    top_h = math.ceil((shape[2] + 2 * p.pad_size - 2 * border) / p.stride1)
    top_w = math.ceil((shape[3] + 2 * p.pad_size - 2 * border) / p.stride1)
    if top_h < 1 or top_w < 1:
        raise ShapeError(f"operator 'Correlation': the neighbourhood and kernel do not fit in "
                         f"data {tuple(shape)} (kernel_size={p.kernel_size}, max_displacement="
                         f"{p.max_displacement}, pad_size={p.pad_size})")
    radius = p.max_displacement // p.stride2
    return top_h, top_w, radius, 2 * radius + 1


def _infer(attrs, ins, outs):
    a, b = ins
    shape = a if a is not None else b
    if shape is None or not all(d > 0 for d in shape):
        return ins, outs
    if len(shape) != 4:
        raise ShapeError(f"operator 'Correlation': data must be (N, C, H, W), got "
                         f"{tuple(shape)}")
    top_h, top_w, _, width = _geometry(attrs, shape)
    return [tuple(shape), tuple(shape)], [(shape[0], width * width, top_h, top_w)]


def _terms(p: CorrelationParam, shape: Any):
    """For each output channel and kernel offset: the slices of padded data1 and data2."""
    top_h, top_w, radius, width = _geometry(p, shape)
    d, s1 = p.max_displacement, p.stride1
    for channel in range(width * width):
        ox = (channel % width - radius) * p.stride2
        oy = (channel // width - radius) * p.stride2
        for h in range(p.kernel_size):
            for w in range(p.kernel_size):
                one = (slice(None), slice(None), slice(d + h, d + h + s1 * top_h, s1),
                       slice(d + w, d + w + s1 * top_w, s1))
                two = (slice(None), slice(None), slice(d + oy + h, d + oy + h + s1 * top_h, s1),
                       slice(d + ox + w, d + ox + w + s1 * top_w, s1))
                yield channel, one, two


def _pad(xp: Any, x: Any, pad: int) -> Any:
    return xp.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)]) if pad else x


def _correlate(xp: Any, p: CorrelationParam, a: Any, b: Any) -> Any:
    top_h, top_w, _, width = _geometry(p, a.shape)
    pa, pb = _pad(xp, a, p.pad_size), _pad(xp, b, p.pad_size)
    out = xp.zeros((a.shape[0], width * width, top_h, top_w), dtype=np.float64)
    for channel, one, two in _terms(p, a.shape):
        x, y = pa[one], pb[two]
        out[:, channel] += (x * y if p.is_multiply else xp.abs(x - y)).sum(axis=1)
    return out / (p.kernel_size ** 2 * a.shape[1])


def _forward(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], _correlate(ctx.xp, attrs, *inputs).astype(outputs[0].dtype))


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, a, b = inputs
    pad = attrs.pad_size
    pa, pb = _pad(xp, a, pad), _pad(xp, b, pad)
    ga, gb = xp.zeros(pa.shape, dtype=np.float64), xp.zeros(pb.shape, dtype=np.float64)
    scale = 1.0 / (attrs.kernel_size ** 2 * a.shape[1])
    for channel, one, two in _terms(attrs, a.shape):
        head = g[:, channel][:, None] * scale
        if attrs.is_multiply:
            ga[one] += head * pb[two]
            gb[two] += head * pa[one]
        else:
            sign = xp.where(pa[one] >= pb[two], 1.0, -1.0)  # MXNet's: ties count as +1
            ga[one] += head * sign
            gb[two] -= head * sign
    h, w = a.shape[2], a.shape[3]
    assign(outputs[0], req[0], ga[:, :, pad:pad + h, pad:pad + w].astype(outputs[0].dtype))
    assign(outputs[1], req[1], gb[:, :, pad:pad + h, pad:pad + w].astype(outputs[1].dtype))


def _case(draw):
    d = Draw(draw)
    k = d.choice([1, 3], "kernel_size")
    disp = d.int(0, 2, "max_displacement")
    pad = d.int(0, 2, "pad_size")
    side = 2 * (disp + (k - 1) // 2) - 2 * pad + d.int(1, 3, "room")
    shape = (d.int(1, 2), d.int(1, 2), max(side, 1), max(side, 1) + d.int(0, 1))
    multiply = d.bool("is_multiply")
    a = d.uniform(shape, -2, 2)
    # with |a - b| the two inputs stay apart, clear of the kink at a = b
    b = d.uniform(shape, -2, 2) if multiply else a + d.away_from_zero(shape, 0.2, 1.0)
    return Case([a, b], {"kernel_size": k, "max_displacement": disp, "pad_size": pad,
                         "stride2": d.int(1, 2, "stride2"), "is_multiply": multiply})


def _reference(raw, a, b):
    return _correlate(np, CorrelationParam.parse("Correlation", raw), a, b)


OPS = [
    Op("Correlation", params=CorrelationParam, num_inputs=2, input_names=["data1", "data2"],
       infer_shape=_infer, compute={XP: _forward},
       gradient=Gradient("_backward_Correlation", ("out_grad", "in_data")),
       domain=Domain(_case, reference=_reference),
       description="FlowNet correlation of data1 and data2 (N, C, H, W): for each position "
                   "(stride1 apart) and displacement (stride2 apart, up to max_displacement), "
                   "the sum over channels and a kernel_size window of data1 * data2 shifted "
                   "(|data1 - data2| with is_multiply=False), over kernel_size^2 C; inputs "
                   "zero-padded by pad_size.  Gradients for both inputs."),
    Op("_backward_Correlation", params=CorrelationParam, num_inputs=3, num_outputs=2,
       compute={XP: _backward}, is_backward=True, forward_op="Correlation"),
]
