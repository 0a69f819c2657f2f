"""``_contrib_AdaptiveAvgPooling2D`` (MXNet's ``adaptive_avg_pooling.cc``): average pooling
of (N, C, H, W) to a fixed output size.

Output cell (i, j) averages input rows ``floor(i H / OH)`` to ``ceil((i + 1) H / OH)``
(exclusive) and the columns likewise, so windows may overlap or differ in size.
Gradient: each cell's head gradient spread evenly over its window.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, Shape, assign

from .._draw import Draw

__all__ = ["OPS"]


class AdaptiveAvgPoolParam(Params):
    output_size = Field(Shape, (), "int (output size) or a tuple of int for output (height, "
                                   "width).")


def _out_size(attrs: AdaptiveAvgPoolParam) -> tuple[int, int]:
    size = tuple(attrs.output_size)
    if not size:
        return 1, 1
    if len(size) == 1:
        return size[0], size[0]
    if len(size) != 2 or min(size) < 1:
        raise ShapeError(f"operator '_contrib_AdaptiveAvgPooling2D': output_size={size} must "
                         f"be one or two positive ints")
    return size[0], size[1]


def _windows(n_in: int, n_out: int) -> list[tuple[int, int]]:
    return [(math.floor(i * n_in / n_out), math.ceil((i + 1) * n_in / n_out))
            for i in range(n_out)]


def _infer(attrs, ins, outs):
    data = ins[0]
    if data is None or not all(d > 0 for d in data):
        return ins, outs
    if len(data) != 4:
        raise ShapeError(f"operator '_contrib_AdaptiveAvgPooling2D': data must be (N, C, H, W), "
                         f"got {tuple(data)}")
    return ins, [tuple(data[:2]) + _out_size(attrs)]


def _pool(xp: Any, attrs: AdaptiveAvgPoolParam, x: Any) -> Any:
    oh, ow = _out_size(attrs)
    rows = [x[:, :, a:b].mean(axis=2) for a, b in _windows(x.shape[2], oh)]
    tall = xp.stack(rows, axis=2)  # (N, C, OH, W)
    cols = [tall[..., a:b].mean(axis=3) for a, b in _windows(x.shape[3], ow)]
    return xp.stack(cols, axis=3)


def _forward(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], _pool(ctx.xp, attrs, inputs[0]))


def _backward(attrs, ctx, inputs, req, outputs):
    xp, g = ctx.xp, inputs[0]
    shape = outputs[0].shape
    grad = xp.zeros(shape, dtype=g.dtype)
    for i, (r0, r1) in enumerate(_windows(shape[2], g.shape[2])):
        for j, (c0, c1) in enumerate(_windows(shape[3], g.shape[3])):
            grad[:, :, r0:r1, c0:c1] += (g[:, :, i, j] / ((r1 - r0) * (c1 - c0)))[..., None, None]
    assign(outputs[0], req[0], grad)


def _case(draw):
    d = Draw(draw)
    shape = (d.int(1, 2), d.int(1, 2), d.int(1, 5), d.int(1, 5))
    size = (d.int(1, 4),) if d.bool("square") else (d.int(1, 4), d.int(1, 4))
    return Case([d.uniform(shape, -2, 2)], {"output_size": size})


def _reference(raw, x):
    return _pool(np, AdaptiveAvgPoolParam.parse("_contrib_AdaptiveAvgPooling2D", raw), x)


OPS = [
    Op("_contrib_AdaptiveAvgPooling2D", params=AdaptiveAvgPoolParam, input_names=["data"],
       infer_shape=_infer, compute={XP: _forward},
       gradient=Gradient("_backward_contrib_AdaptiveAvgPooling2D", ("out_grad",)),
       domain=Domain(_case, reference=_reference),
       description="Average pooling of (N, C, H, W) data to (N, C, OH, OW) = output_size (one "
                   "int for a square, empty for 1 x 1): cell (i, j) averages rows "
                   "floor(i H / OH) to ceil((i + 1) H / OH) and the columns likewise.  Dtype = "
                   "data's.  Gradient: each head gradient spread evenly over its window."),
    Op("_backward_contrib_AdaptiveAvgPooling2D", params=AdaptiveAvgPoolParam, num_inputs=1,
       compute={XP: _backward}, is_backward=True, forward_op="_contrib_AdaptiveAvgPooling2D"),
]
