"""``im2col`` and ``col2im`` (MXNet's ``im2col.cc``): sliding windows as columns, and back.

im2col turns data (N, C, *spatial) into (N, C prod(kernel), L): one row per channel
and kernel tap (channel-major, as a convolution weight reshaped to (F, -1)), one
column per of the L output positions (``pad``, ``stride``, ``dilate`` as for
Convolution).  col2im is its adjoint, summing columns back into (N, C,
*output_size), overlaps added; each is the other's gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import REQUIRED, XP, Case, Domain, Field, Gradient, Op, Params, Shape, assign

from .._draw import Draw
from ._im2col import pad_spatial, scatter_windows, window_count, windows

__all__ = ["OPS"]


class Im2colParam(Params):
    kernel = Field(Shape, REQUIRED, "Sliding kernel size: (w,), (h, w) or (d, h, w).")
    stride = Field(Shape, (), "The stride between adjacent sliding blocks in spatial "
                              "dimension: (w,), (h, w) or (d, h, w). Defaults to 1 for each "
                              "dimension.")
    dilate = Field(Shape, (), "The spacing between adjacent kernel points: (w,), (h, w) or "
                              "(d, h, w). Defaults to 1 for each dimension.")
    pad = Field(Shape, (), "The zero-value padding size on both sides of spatial dimension: "
                           "(w,), (h, w) or (d, h, w). Defaults to no padding.")


class Col2imParam(Params):
    output_size = Field(Shape, REQUIRED, "The spatial dimension of image array: (w,), (h, w) or "
                                         "(d, h, w).")
    kernel = Im2colParam.kernel
    stride = Im2colParam.stride
    dilate = Im2colParam.dilate
    pad = Im2colParam.pad


def _spec(p: Im2colParam) -> tuple[tuple, tuple, tuple, tuple]:
    nd = len(p.kernel)
    for name in ("stride", "dilate", "pad"):
        value = getattr(p, name)
        if value and len(value) != nd:
            raise ShapeError(f"operator 'im2col': {name}={value} must have {nd} entries like "
                             f"kernel={p.kernel}")
    return (tuple(p.kernel), tuple(p.stride) or (1,) * nd, tuple(p.dilate) or (1,) * nd,
            tuple(p.pad) or (0,) * nd)


def _out_positions(p: Im2colParam, spatial: Any) -> tuple[int, ...]:
    kernel, stride, dilate, pad = _spec(p)
    out = tuple(window_count(s + 2 * q, k, st, d)
                for s, k, st, d, q in zip(spatial, kernel, stride, dilate, pad))
    if min(out) < 1:
        raise ShapeError(f"operator 'im2col': kernel {kernel} (dilate {dilate}) does not fit "
                         f"the padded input {tuple(spatial)} (pad {pad})")
    return out


def _im2col_infer(attrs, ins, outs):
    data = ins[0]
    if data is None or not all(d > 0 for d in data):
        return ins, outs
    nd = len(attrs.kernel)
    if len(data) != nd + 2:
        raise ShapeError(f"operator 'im2col': data must be (N, C) + {nd} spatial dimensions, "
                         f"got {tuple(data)}")
    out = _out_positions(attrs, data[2:])
    return ins, [(data[0], data[1] * int(np.prod(attrs.kernel)), int(np.prod(out)))]


def _col2im_infer(attrs, ins, outs):
    cols = ins[0]
    if cols is None or not all(d > 0 for d in cols):
        return ins, outs
    taps = int(np.prod(attrs.kernel))
    if len(cols) != 3 or cols[1] % taps:
        raise ShapeError(f"operator 'col2im': data must be (N, C * {taps}, L), got "
                         f"{tuple(cols)}")
    return ins, [(cols[0], cols[1] // taps) + tuple(attrs.output_size)]


def _im2col(xp: Any, p: Im2colParam, x: Any) -> Any:
    kernel, stride, dilate, pad = _spec(p)
    nd = len(kernel)
    padded = pad_spatial(xp, x, pad, pad)
    view = windows(xp, padded, kernel, stride, dilate)  # (N, C, *out, *kernel)
    order = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    n, c = x.shape[:2]
    return view.transpose(order).reshape(n, c * int(np.prod(kernel)), -1)


def _col2im(xp: Any, p: Im2colParam, cols: Any, spatial: tuple) -> Any:
    kernel, stride, dilate, pad = _spec(p)
    nd = len(kernel)
    out = _out_positions(p, spatial)
    n = cols.shape[0]
    c = cols.shape[1] // int(np.prod(kernel))
    blocks = cols.reshape((n, c) + kernel + out)  # (N, C, *kernel, *out)
    by_tap = blocks.transpose(tuple(range(2, 2 + nd)) + (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)))
    padded = tuple(s + 2 * q for s, q in zip(spatial, pad))
    image = scatter_windows(xp, by_tap, padded, stride, dilate)
    crop = (slice(None), slice(None)) + tuple(slice(q, q + s) for q, s in zip(pad, spatial))
    return image[crop]


def _im2col_forward(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], _im2col(ctx.xp, attrs, inputs[0]))


def _im2col_backward(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], _col2im(ctx.xp, attrs, inputs[0], outputs[0].shape[2:]))


def _col2im_forward(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], _col2im(ctx.xp, attrs, inputs[0], tuple(attrs.output_size)))


def _col2im_backward(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], _im2col(ctx.xp, attrs, inputs[0]))


def _params(d: Draw) -> tuple[dict, tuple]:
    nd = d.int(1, 2, "spatial dims")
    kernel = tuple(d.int(1, 2) for _ in range(nd))
    params = {"kernel": kernel, "stride": tuple(d.int(1, 2) for _ in range(nd)),
              "dilate": tuple(d.int(1, 2) for _ in range(nd)),
              "pad": tuple(d.int(0, 1) for _ in range(nd))}
    spatial = tuple(d.int(3, 4) for _ in range(nd))
    return params, spatial


def _im2col_case(draw):
    d = Draw(draw)
    params, spatial = _params(d)
    return Case([d.uniform((d.int(1, 2), d.int(1, 2)) + spatial, -2, 2)], params)


def _col2im_case(draw):
    d = Draw(draw)
    params, spatial = _params(d)
    p = Im2colParam.parse("im2col", params)
    length = int(np.prod(_out_positions(p, spatial)))
    taps = int(np.prod(params["kernel"]))
    cols = d.uniform((d.int(1, 2), d.int(1, 2) * taps, length), -2, 2)
    return Case([cols], dict(params, output_size=spatial))


OPS = [
    Op("im2col", params=Im2colParam, input_names=["data"], infer_shape=_im2col_infer,
       compute={XP: _im2col_forward}, gradient=Gradient("_backward_im2col", ("out_grad",)),
       domain=Domain(_im2col_case, reference=lambda raw, x: _im2col(
           np, Im2colParam.parse("im2col", raw), x)),
       description="Sliding windows as columns: data (N, C, *spatial) becomes (N, C "
                   "prod(kernel), L), rows channel-major then kernel taps, one column per "
                   "output position (pad, stride, dilate as Convolution).  Dtype = data's.  "
                   "Gradient: col2im of the head gradient."),
    Op("_backward_im2col", params=Im2colParam, num_inputs=1, compute={XP: _im2col_backward},
       is_backward=True, forward_op="im2col"),
    Op("col2im", params=Col2imParam, input_names=["data"], infer_shape=_col2im_infer,
       compute={XP: _col2im_forward}, gradient=Gradient("_backward_col2im", ("out_grad",)),
       domain=Domain(_col2im_case, reference=lambda raw, cols: _col2im(
           np, Col2imParam.parse("col2im", raw), cols,
           tuple(Col2imParam.parse("col2im", raw).output_size))),
       description="The adjoint of im2col: columns (N, C prod(kernel), L) summed back into "
                   "(N, C, *output_size), overlapping windows added.  Dtype = data's.  "
                   "Gradient: im2col of the head gradient."),
    Op("_backward_col2im", params=Col2imParam, num_inputs=1, compute={XP: _col2im_backward},
       is_backward=True, forward_op="col2im"),
]
