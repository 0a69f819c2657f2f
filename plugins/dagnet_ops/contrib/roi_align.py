"""``_contrib_ROIAlign`` (MXNet's ``roi_align.cc``, Mask R-CNN's layer): average of
bilinear samples over each bin of each region of interest, without rounding.

A roi row is ``(batch index, x1, y1, x2, y2)`` (or 4 columns, batch 0) in input
coordinates times ``spatial_scale``; with ``aligned`` the corners move by -0.5 (pixel
centres) and must give a positive size, otherwise a region is at least 1 x 1.  Each of
the ``pooled_size`` bins averages a grid of ``sample_ratio`` squared points (or
``ceil(roi size / pooled size)`` per axis when ``sample_ratio <= 0``), each the bilinear
interpolation of its four neighbours: points more than one pixel outside the map count
as 0, points inside the last pixel stick to it.  ``position_sensitive`` (R-FCN) takes
output channel ``c``'s bin ``(ph, pw)`` from input channel ``(c * ph_n + ph) * pw_n +
pw``.  A roi with a negative batch index gives zeros.  Gradient: the head gradient
spread back to the data with the same weights; the rois get zero.

The sampling weights of one axis do not depend on the other, so every bin's weights
are the outer product of a row and a column table: a roi is two small matrix products
per channel.
"""

from __future__ import annotations

import math

import numpy as np

from dagnet.operator import REQUIRED, XP, Case, Domain, Field, Gradient, Op, Params, Shape

from .._draw import Draw
from ._common import contrib_error, host, kernel_error, put

__all__ = ["OPS", "axis_weights"]

_NAME = "_contrib_ROIAlign"


class ROIAlignParam(Params):
    pooled_size = Field(Shape, REQUIRED, "ROI Align output roi feature map height and width: "
                                         "(h, w)")
    spatial_scale = Field(float, REQUIRED, "Ratio of input feature map height (or w) to raw "
                                           "image height (or w). Equals the reciprocal of total "
                                           "stride in convolutional layers")
    sample_ratio = Field(int, -1, "Optional sampling ratio of ROI align, using adaptive size "
                                  "by default.")
    position_sensitive = Field(bool, False, "Whether to perform position-sensitive RoI pooling "
                                            "(R-FCN): the input channels are ph * pw times the "
                                            "output's")
    aligned = Field(bool, False, "Center-aligned ROIAlign introduced in Detectron2. To enable, "
                                 "set aligned to True.")


def axis_weights(start: float, bin_size: float, bins: int, grid: int, size: int) -> np.ndarray:
    """``(bins, size)``: for each bin the summed bilinear weights of its ``grid`` sample
    points along one axis of ``size`` pixels (MXNet's boundary rules)."""
    weights = np.zeros((bins, size))
    for b in range(bins):
        for i in range(grid):
            p = start + b * bin_size + (i + 0.5) * bin_size / grid
            if p < -1.0 or p > size:
                continue
            p = max(p, 0.0)
            low = int(p)
            if low >= size - 1:
                weights[b, size - 1] += 1.0
                continue
            frac = p - low
            weights[b, low] += 1.0 - frac
            weights[b, low + 1] += frac
    return weights


def _roi_tables(attrs, roi, height, width):
    """(batch index, row table (ph_n, H), column table (pw_n, W)) of one roi, the tables
    divided by the number of sample points; batch -1 when the roi is skipped."""
    ph_n, pw_n = attrs.pooled_size
    if len(roi) == 5:
        batch = int(roi[0])
        if batch < 0:
            return -1, None, None
        coords = roi[1:5]
    else:
        batch, coords = 0, roi
    offset = 0.5 if attrs.aligned else 0.0
    x1, y1, x2, y2 = (float(v) * attrs.spatial_scale - offset for v in coords)
    roi_w, roi_h = x2 - x1, y2 - y1
    if attrs.aligned:
        if roi_w <= 0 or roi_h <= 0:
            raise kernel_error(_NAME, f"with aligned=True a roi must have a positive size, got "
                                      f"{roi_w:g} x {roi_h:g} (roi {list(map(float, roi))})")
    else:
        roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
    bin_h, bin_w = roi_h / ph_n, roi_w / pw_n
    grid_h = attrs.sample_ratio if attrs.sample_ratio > 0 else math.ceil(roi_h / ph_n)
    grid_w = attrs.sample_ratio if attrs.sample_ratio > 0 else math.ceil(roi_w / pw_n)
    count = max(grid_h * grid_w, 1)
    rows = axis_weights(y1, bin_h, ph_n, grid_h, height) / count
    cols = axis_weights(x1, bin_w, pw_n, grid_w, width)
    return batch, rows, cols


def _infer(attrs, ins, outs):
    data, rois = ins
    if len(attrs.pooled_size) != 2:
        raise contrib_error(_NAME, f"pooled_size={tuple(attrs.pooled_size)} must be (h, w)")
    if data is None or rois is None:
        return ins, outs
    if len(data) != 4 or len(rois) != 2 or (rois[1] and rois[1] not in (4, 5)):
        raise contrib_error(_NAME, f"data must be (N, C, H, W) and rois (R, 5) or (R, 4), got "
                                   f"{tuple(data)} and {tuple(rois)}")
    ph_n, pw_n = attrs.pooled_size
    channels = data[1]
    if attrs.position_sensitive:
        if channels % (ph_n * pw_n):
            raise contrib_error(_NAME, f"position_sensitive needs the {channels} input channels "
                                       f"to be a multiple of ph * pw = {ph_n * pw_n}")
        channels //= ph_n * pw_n
    return ins, [(rois[0], channels, ph_n, pw_n)]


def _infer_type(attrs, ins, outs):
    dtype = ins[0] if ins[0] is not None else outs[0]
    return [dtype, ins[1] if ins[1] is not None else dtype], [dtype]


def _window(table: np.ndarray) -> slice:
    """The pixels a roi's weight table touches along one axis (its other weights are 0):
    products over that window only cost what the roi covers, not the whole map."""
    touched = np.flatnonzero(table.any(axis=0))
    return slice(int(touched[0]), int(touched[-1]) + 1) if touched.size else slice(0, 0)


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    data, rois = inputs
    rois_host = host(rois)
    n, _, h, w = data.shape
    out = xp.zeros(outputs[0].shape, dtype=data.dtype)
    ph_n, pw_n = attrs.pooled_size
    for r, roi in enumerate(rois_host):
        batch, rows, cols = _roi_tables(attrs, roi, h, w)
        if batch < 0:
            continue
        if batch >= n:
            raise kernel_error(_NAME, f"roi {r} names batch {batch}, but data has {n}")
        ys, xs = _window(rows), _window(cols)
        rows = xp.asarray(rows[:, ys], dtype=data.dtype)
        cols = xp.asarray(cols[:, xs], dtype=data.dtype)
        if attrs.position_sensitive:
            planes = data[batch].reshape(-1, ph_n, pw_n, h, w)[..., ys, xs]
            out[r] = xp.einsum("cpqhw,ph,qw->cpq", planes, rows, cols)
        else:
            out[r] = xp.matmul(xp.matmul(rows, data[batch][:, ys, xs]), cols.T)
    put(outputs[0], req[0], out)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, data, rois = inputs
    rois_host = host(rois)
    _, _, h, w = data.shape
    ph_n, pw_n = attrs.pooled_size
    grad = xp.zeros(data.shape, dtype=g.dtype)
    for r, roi in enumerate(rois_host):
        batch, rows, cols = _roi_tables(attrs, roi, h, w)
        if batch < 0:
            continue
        ys, xs = _window(rows), _window(cols)
        rows = xp.asarray(rows[:, ys], dtype=g.dtype)
        cols = xp.asarray(cols[:, xs], dtype=g.dtype)
        if attrs.position_sensitive:
            planes = grad[batch].reshape(-1, ph_n, pw_n, h, w)
            planes[..., ys, xs] += xp.einsum("cpq,ph,qw->cpqhw", g[r], rows, cols)
        else:
            grad[batch][:, ys, xs] += xp.matmul(xp.matmul(rows.T, g[r]), cols)
    put(outputs[0], req[0], grad)
    put(outputs[1], req[1], xp.zeros(rois.shape, dtype=rois.dtype))


def sample_rois(d: Draw, n: int, h: int, w: int, count: int) -> np.ndarray:
    """``count`` rois ``(batch, x1, y1, x2, y2)`` with corners inside an ``h`` x ``w`` map."""
    rois = []
    for _ in range(count):
        x1, y1 = d.float(0, w - 1), d.float(0, h - 1)
        rois.append([d.int(0, n - 1), x1, y1, d.float(x1, w), d.float(y1, h)])
    return np.array(rois, dtype=np.float64)


def _sample(draw):
    d = Draw(draw)
    ph_n, pw_n = d.int(1, 2), d.int(1, 2)
    position_sensitive = d.bool()
    n, h, w = d.int(1, 2), d.int(2, 5), d.int(2, 5)
    c = d.int(1, 2) * (ph_n * pw_n if position_sensitive else 1)
    params = {"pooled_size": (ph_n, pw_n), "spatial_scale": d.choice([0.5, 1.0]),
              "sample_ratio": d.choice([-1, 1, 2]), "position_sensitive": position_sensitive}
    return Case([d.uniform((n, c, h, w)), sample_rois(d, n, 2 * h, 2 * w, d.int(1, 3))], params)


def _reference(raw, data, rois):
    """Each sample point interpolated one at a time, as MXNet's loop."""
    attrs = ROIAlignParam.parse(_NAME, raw)
    ph_n, pw_n = attrs.pooled_size
    _, c, h, w = data.shape
    c_out = c // (ph_n * pw_n) if attrs.position_sensitive else c
    out = np.zeros((len(rois), c_out, ph_n, pw_n))
    for r, roi in enumerate(rois):
        b = int(roi[0])
        x1, y1, x2, y2 = (v * attrs.spatial_scale for v in roi[1:5])
        rh, rw = max(y2 - y1, 1.0), max(x2 - x1, 1.0)
        gh = attrs.sample_ratio if attrs.sample_ratio > 0 else math.ceil(rh / ph_n)
        gw = attrs.sample_ratio if attrs.sample_ratio > 0 else math.ceil(rw / pw_n)
        for ch in range(c_out):
            for ph in range(ph_n):
                for pw in range(pw_n):
                    plane = data[b, (ch * ph_n + ph) * pw_n + pw if attrs.position_sensitive
                                 else ch]
                    total = 0.0
                    for iy in range(gh):
                        y = y1 + ph * rh / ph_n + (iy + 0.5) * rh / ph_n / gh
                        for ix in range(gw):
                            x = x1 + pw * rw / pw_n + (ix + 0.5) * rw / pw_n / gw
                            total += _bilinear(plane, y, x)
                    out[r, ch, ph, pw] = total / (gh * gw)
    return out


def _bilinear(plane, y, x):
    h, w = plane.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * plane[y0, x0] + (1 - ly) * lx * plane[y0, x1]
            + ly * (1 - lx) * plane[y1, x0] + ly * lx * plane[y1, x1])


OPS = [
    Op(_NAME, params=ROIAlignParam, num_inputs=2, input_names=["data", "rois"],
       infer_shape=_infer, infer_type=_infer_type, compute={XP: _forward},
       gradient=Gradient("_backward_ROIAlign", ("out_grad", "in_data")),
       domain=Domain(_sample, reference=_reference, differentiable=(0,)),
       description="ROI Align: each roi (batch, x1, y1, x2, y2) times spatial_scale is cut "
                   "into pooled_size bins, each the average of bilinear samples (sample_ratio "
                   "per axis, or adaptive), no rounding.  ``aligned`` shifts by half a pixel; "
                   "``position_sensitive`` takes each bin from its own channel group.  Output "
                   "(R, C, h, w); a negative batch index gives zeros.  Gradient: to the data "
                   "with the sampling weights; rois get zero."),
    Op("_backward_ROIAlign", params=ROIAlignParam, num_inputs=3, num_outputs=2,
       compute={XP: _backward}, is_backward=True, forward_op=_NAME),
]
