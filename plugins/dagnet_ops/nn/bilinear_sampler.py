"""``BilinearSampler`` and ``SpatialTransformer`` (MXNet's ``bilinear_sampler.cc``,
``spatial_transformer.cc``).

BilinearSampler reads data (N, C, H, W) at the normalized source coordinates of a
grid (N, 2, OH, OW) (x, y in [-1, 1] spanning the input's corner pixels) by bilinear
interpolation; neighbours outside the input count as 0.  SpatialTransformer is the
affine GridGenerator of ``loc`` (N, 6) for ``target_shape`` followed by that sampler.
Gradients flow to the data (the interpolation weights) and to the grid (the weights'
slopes), and through the grid to ``loc``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, Shape, assign

from .._draw import Draw
from .grid_generator import GridGeneratorParam, generate_grid, target_points

__all__ = ["OPS"]

# (x offset, y offset) of the four neighbours of a sampling point
_CORNERS = ((0, 0), (1, 0), (0, 1), (1, 1))


def _coordinates(xp: Any, grid: Any, h: int, w: int) -> tuple[Any, Any]:
    return (grid[:, 0] + 1) * (w - 1) / 2.0, (grid[:, 1] + 1) * (h - 1) / 2.0


def _neighbours(xp: Any, x: Any, y: Any, h: int, w: int):
    """For each corner: integer x, y (clipped), validity, and the fractional parts."""
    x0, y0 = xp.floor(x), xp.floor(y)
    fx, fy = x - x0, y - y0
    for ox, oy in _CORNERS:
        xi, yi = x0 + ox, y0 + oy
        valid = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
        xc = xp.clip(xi, 0, w - 1).astype(np.int64)
        yc = xp.clip(yi, 0, h - 1).astype(np.int64)
        wx = fx if ox else 1 - fx
        wy = fy if oy else 1 - fy
        yield ox, oy, xc, yc, valid, wx, wy


def _sample(xp: Any, data: Any, grid: Any) -> Any:
    n, c, h, w = data.shape
    x, y = _coordinates(xp, grid, h, w)
    batch = xp.arange(n)[:, None, None]
    out = 0
    for _ox, _oy, xc, yc, valid, wx, wy in _neighbours(xp, x, y, h, w):
        values = xp.moveaxis(data[batch, :, yc, xc], -1, 1)  # (N, C, OH, OW)
        out = out + values * (wx * wy * valid)[:, None]
    return out


def _sample_backward(xp: Any, g: Any, data: Any, grid: Any) -> tuple[Any, Any]:
    n, c, h, w = data.shape
    x, y = _coordinates(xp, grid, h, w)
    batch = xp.broadcast_to(xp.arange(n)[:, None, None], x.shape)
    d_data = xp.zeros((n, h, w, c), dtype=g.dtype)
    d_x = xp.zeros(x.shape, dtype=g.dtype)
    d_y = xp.zeros(y.shape, dtype=g.dtype)
    g_last = xp.moveaxis(g, 1, -1)  # (N, OH, OW, C)
    for ox, oy, xc, yc, valid, wx, wy in _neighbours(xp, x, y, h, w):
        weight = (wx * wy * valid)[..., None]
        xp.add.at(d_data, (batch, yc, xc), g_last * weight)
        values = data[batch, :, yc, xc]  # (N, OH, OW, C)
        along = (g_last * values).sum(axis=-1) * valid
        d_x = d_x + along * wy * (1 if ox else -1)
        d_y = d_y + along * wx * (1 if oy else -1)
    d_grid = xp.stack([d_x * (w - 1) / 2.0, d_y * (h - 1) / 2.0], axis=1)
    return xp.moveaxis(d_data, -1, 1), d_grid


# -- BilinearSampler ------------------------------------------------------------------------
class BilinearSamplerParam(Params):
    cudnn_off = Field(bool, None, "whether to turn cudnn off", optional=True)


def _sampler_infer(attrs, ins, outs):
    data, grid = ins
    if data is None or grid is None:
        return ins, outs
    if len(data) != 4 or len(grid) != 4 or grid[1] != 2 or grid[0] != data[0]:
        raise ShapeError(f"operator 'BilinearSampler': data must be (N, C, H, W) and grid "
                         f"(N, 2, OH, OW), got {tuple(data)} and {tuple(grid)}")
    return ins, [(data[0], data[1], grid[2], grid[3])]


def _sampler_forward(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], _sample(ctx.xp, *inputs))


def _sampler_backward(attrs, ctx, inputs, req, outputs):
    g, data, grid = inputs
    d_data, d_grid = _sample_backward(ctx.xp, g, data, grid)
    assign(outputs[0], req[0], d_data)
    assign(outputs[1], req[1], d_grid)


def _off_grid(d: Draw, shape: tuple, h: int, w: int) -> np.ndarray:
    """Normalized coordinates whose pixel positions keep clear of integers (the kinks)."""
    px = d.rng.integers(-1, w, size=shape) + d.rng.uniform(0.2, 0.8, size=shape)
    py = d.rng.integers(-1, h, size=shape) + d.rng.uniform(0.2, 0.8, size=shape)
    gx = px * 2.0 / max(w - 1, 1) - 1
    gy = py * 2.0 / max(h - 1, 1) - 1
    return np.stack([gx, gy], axis=1)


def _sampler_case(draw):
    d = Draw(draw)
    n, c, h, w = d.int(1, 2), d.int(1, 2), d.int(2, 4), d.int(2, 4)
    oh, ow = d.int(1, 3), d.int(1, 3)
    return Case([d.uniform((n, c, h, w), -2, 2), _off_grid(d, (n, oh, ow), h, w)])


# -- SpatialTransformer ---------------------------------------------------------------------
class SpatialTransformerParam(Params):
    target_shape = Field(Shape, (0, 0), "output shape(h, w) of spatial transformer: (y, x)")
    transform_type = Field(str, "affine", "transformation type", choices=("affine",))
    sampler_type = Field(str, "bilinear", "sampling type", choices=("bilinear",))
    cudnn_off = Field(bool, None, "whether to turn cudnn off", optional=True)


def _grid_attrs(attrs: SpatialTransformerParam) -> GridGeneratorParam:
    return GridGeneratorParam.parse("GridGenerator", {"transform_type": "affine",
                                                      "target_shape": attrs.target_shape})


def _stn_infer(attrs, ins, outs):
    data, loc = ins
    h, w = attrs.target_shape
    if h <= 0 or w <= 0:
        raise ShapeError("operator 'SpatialTransformer': target_shape=(H, W) is required")
    if data is None:
        return ins, outs
    if len(data) != 4:
        raise ShapeError(f"operator 'SpatialTransformer': data must be (N, C, H, W), got "
                         f"{tuple(data)}")
    return [tuple(data), (data[0], 6)], [(data[0], data[1], h, w)]


def _stn_forward(attrs, ctx, inputs, req, outputs):
    data, loc = inputs
    grid = generate_grid(ctx.xp, _grid_attrs(attrs), loc)
    assign(outputs[0], req[0], _sample(ctx.xp, data, grid))


def _stn_backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, data, loc = inputs
    h, w = attrs.target_shape
    grid = generate_grid(xp, _grid_attrs(attrs), loc)
    d_data, d_grid = _sample_backward(xp, g, data, grid)
    assign(outputs[0], req[0], d_data)
    # the affine grid is theta @ points, so d theta = d_grid @ points^T
    points = target_points(xp, h, w)
    assign(outputs[1], req[1],
           xp.matmul(d_grid.reshape(loc.shape[0], 2, h * w), points.T).reshape(loc.shape))


def _stn_case(draw):
    d = Draw(draw)
    n, c, h, w = d.int(1, 2), d.int(1, 2), d.int(2, 4), d.int(2, 4)
    th, tw = d.int(2, 3), d.int(2, 3)
    # a near-identity affine map, scaled so target pixels fall between source pixels
    loc = np.tile([0.7, 0.05, 0.03, 0.04, 0.7, -0.05], (n, 1)) + d.uniform((n, 6), -0.01, 0.01)
    return Case([d.uniform((n, c, h, w), -2, 2), loc], {"target_shape": (th, tw)})


def _np_stn(raw, data, loc):
    p = SpatialTransformerParam.parse("SpatialTransformer", raw)
    return _sample(np, data, generate_grid(np, _grid_attrs(p), loc))


OPS = [
    Op("BilinearSampler", params=BilinearSamplerParam, num_inputs=2,
       input_names=["data", "grid"], infer_shape=_sampler_infer,
       compute={XP: _sampler_forward},
       gradient=Gradient("_backward_BilinearSampler", ("out_grad", "in_data")),
       domain=Domain(_sampler_case, reference=lambda raw, data, grid: _sample(np, data, grid)),
       description="Bilinear interpolation of data (N, C, H, W) at the grid's normalized "
                   "source coordinates (N, 2, OH, OW; -1 and 1 are the corner pixels); "
                   "neighbours outside the input count as 0.  Output (N, C, OH, OW), data's "
                   "dtype.  Gradients for data and grid."),
    Op("_backward_BilinearSampler", params=BilinearSamplerParam, num_inputs=3, num_outputs=2,
       compute={XP: _sampler_backward}, is_backward=True, forward_op="BilinearSampler"),
    Op("SpatialTransformer", params=SpatialTransformerParam, num_inputs=2,
       input_names=["data", "loc"], infer_shape=_stn_infer, compute={XP: _stn_forward},
       gradient=Gradient("_backward_SpatialTransformer", ("out_grad", "in_data")),
       domain=Domain(_stn_case, reference=_np_stn),
       description="Spatial transformer: the affine GridGenerator of loc (N, 6) for "
                   "target_shape (H, W), then BilinearSampler of data on that grid.  Output "
                   "(N, C, H, W).  Gradients for data and loc."),
    Op("_backward_SpatialTransformer", params=SpatialTransformerParam, num_inputs=3,
       num_outputs=2, compute={XP: _stn_backward}, is_backward=True,
       forward_op="SpatialTransformer"),
]
