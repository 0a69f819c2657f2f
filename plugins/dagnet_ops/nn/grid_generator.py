"""``GridGenerator`` (MXNet's ``grid_generator.cc``): sampling grids for spatial transformers.

The output (N, 2, H, W) holds, per target pixel, the x and y source coordinates
normalized to [-1, 1].  ``affine``: data (N, 6) is a 2 x 3 matrix applied to the
target's normalized coordinates ``(x, y, 1)``; ``warp``: data (N, 2, H, W) is a flow
added to the pixel coordinates, then normalized.  Both are linear in data, and the
gradient follows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    Op,
    Params,
    Shape,
    assign,
)

from .._draw import Draw

__all__ = ["OPS", "GridGeneratorParam", "generate_grid", "target_points"]


class GridGeneratorParam(Params):
    transform_type = Field(str, REQUIRED, "The type of transformation. For `affine`, input data "
                                          "should be an affine matrix of size (batch, 6). For "
                                          "`warp`, input data should be an optical flow of size "
                                          "(batch, 2, h, w).", choices=("affine", "warp"))
    target_shape = Field(Shape, (0, 0), "Specifies the output shape (H, W). This is required if "
                                        "transformation type is `affine`. If transformation type "
                                        "is `warp`, this parameter is ignored.")


def _infer(attrs, ins, outs):
    data = ins[0]
    if attrs.transform_type == "affine":
        h, w = attrs.target_shape
        if h <= 0 or w <= 0:
            raise ShapeError("operator 'GridGenerator': transform_type='affine' needs "
                             "target_shape=(H, W)")
        if data is None:
            return ins, outs
        if len(data) != 2 or (data[1] and data[1] != 6):
            raise ShapeError(f"operator 'GridGenerator': affine data must be (N, 6), got "
                             f"{tuple(data)}")
        return [(data[0], 6)], [(data[0], 2, h, w)]
    if data is None:
        return ins, outs
    if len(data) != 4 or data[1] != 2:
        raise ShapeError(f"operator 'GridGenerator': warp data must be (N, 2, H, W), got "
                         f"{tuple(data)}")
    return ins, [tuple(data)]


def target_points(xp: Any, h: int, w: int) -> Any:
    """(3, H W): the normalized x, y of every target pixel (row-major) and ones."""
    xs = -1.0 + xp.arange(w) * (2.0 / (w - 1)) if w > 1 else xp.zeros(1) - 1.0
    ys = -1.0 + xp.arange(h) * (2.0 / (h - 1)) if h > 1 else xp.zeros(1) - 1.0
    x = xp.tile(xs, h)
    y = xp.repeat(ys, w)
    return xp.stack([x, y, xp.ones(h * w)])


def _scale(h: int, w: int) -> tuple[float, float]:
    return (2.0 / (w - 1) if w > 1 else 0.0), (2.0 / (h - 1) if h > 1 else 0.0)


def generate_grid(xp: Any, attrs: GridGeneratorParam, data: Any) -> Any:
    """The (N, 2, H, W) sampling grid GridGenerator computes from ``data``."""
    if attrs.transform_type == "affine":
        h, w = attrs.target_shape
        theta = data.reshape(-1, 2, 3)
        return xp.matmul(theta, target_points(xp, h, w)).reshape(-1, 2, h, w)
    n, _, h, w = data.shape
    sx, sy = _scale(h, w)
    x = (data[:, 0] + xp.arange(w)) * sx - 1.0
    y = (data[:, 1] + xp.arange(h)[:, None]) * sy - 1.0
    return xp.stack([x, y], axis=1)


def _forward(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], generate_grid(ctx.xp, attrs, inputs[0]))


def _backward(attrs, ctx, inputs, req, outputs):
    xp, g = ctx.xp, inputs[0]
    n, _, h, w = g.shape
    if attrs.transform_type == "affine":
        grad = xp.matmul(g.reshape(n, 2, h * w), target_points(xp, h, w).T).reshape(n, 6)
    else:
        sx, sy = _scale(h, w)
        grad = xp.stack([g[:, 0] * sx, g[:, 1] * sy], axis=1)
    assign(outputs[0], req[0], grad)


def _case(draw):
    d = Draw(draw)
    h, w = d.int(2, 4), d.int(2, 4)
    if d.bool("affine"):
        return Case([d.uniform((d.int(1, 2), 6), -1, 1)],
                    {"transform_type": "affine", "target_shape": (h, w)})
    return Case([d.uniform((d.int(1, 2), 2, h, w), -1, 1)], {"transform_type": "warp"})


def _reference(raw, data):
    return generate_grid(np, GridGeneratorParam.parse("GridGenerator", raw), data)


OPS = [
    Op("GridGenerator", params=GridGeneratorParam, input_names=["data"], infer_shape=_infer,
       compute={XP: _forward}, gradient=Gradient("_backward_GridGenerator", ("out_grad",)),
       domain=Domain(_case, reference=_reference),
       description="Sampling grid (N, 2, H, W) of normalized source x, y per target pixel: "
                   "``affine`` applies data (N, 6), a 2 x 3 matrix, to the target's normalized "
                   "coordinates (x, y, 1) for target_shape (H, W); ``warp`` adds the flow data "
                   "(N, 2, H, W) to the pixel coordinates and normalizes them to [-1, 1].  "
                   "Gradient: the head gradient mapped back through the (linear) transform."),
    Op("_backward_GridGenerator", params=GridGeneratorParam, num_inputs=1,
       compute={XP: _backward}, is_backward=True, forward_op="GridGenerator"),
]
