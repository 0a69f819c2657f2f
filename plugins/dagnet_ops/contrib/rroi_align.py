"""``_contrib_RROIAlign`` (MXNet's ``rroi_align.cc``): ROI Align over rotated regions, for
text detection (Ma et al., 2018).

A roi row is ``(batch index, centre x, centre y, width, height, angle in degrees)`` in
input coordinates times ``spatial_scale`` (width and height at least 1).  The region is
cut into ``pooled_size`` bins in its own frame; each bin averages a grid of sample
points (``sampling_ratio`` per axis, or ``ceil(side / pooled side)``), each rotated by
the angle about the centre and read by bilinear interpolation with ROI Align's boundary
rules (more than a pixel outside: 0; inside the last pixel: that pixel).  MXNet
registers no gradient; dagnet's is the one the formula implies: the head gradient goes
back to the data with the sampling weights, the rois get zero.
"""

from __future__ import annotations

import math

import numpy as np

from dagnet.operator import REQUIRED, XP, Case, Domain, Field, Gradient, Op, Params, Shape

from .._draw import Draw
from ._common import contrib_error, host, put, roi_batch, roi_infer_type

__all__ = ["OPS"]

_NAME = "_contrib_RROIAlign"


class RROIAlignParam(Params):
    pooled_size = Field(Shape, REQUIRED, "RROI align output shape (h,w) ")
    spatial_scale = Field(float, REQUIRED, "Ratio of input feature map height (or width) to "
                                           "raw image height (or width). Equals the reciprocal "
                                           "of total stride in convolutional layers",
                          low=0.0, high=1.0)
    sampling_ratio = Field(int, -1, "Optional sampling ratio of RROI align, using adaptive "
                                    "size by default.")


def _weights(attrs, roi, height, width) -> np.ndarray:
    """``(ph_n * pw_n, height * width)``: each bin's averaged interpolation weights."""
    ph_n, pw_n = attrs.pooled_size
    scale = attrs.spatial_scale
    cx, cy = float(roi[1]) * scale, float(roi[2]) * scale
    roi_w, roi_h = max(float(roi[3]) * scale, 1.0), max(float(roi[4]) * scale, 1.0)
    theta = float(roi[5]) * math.pi / 180.0
    bin_h, bin_w = roi_h / ph_n, roi_w / pw_n
    grid_h = attrs.sampling_ratio if attrs.sampling_ratio > 0 else math.ceil(roi_h / ph_n)
    grid_w = attrs.sampling_ratio if attrs.sampling_ratio > 0 else math.ceil(roi_w / pw_n)
    yy = -roi_h / 2 + np.arange(ph_n)[:, None] * bin_h + \
        (np.arange(grid_h)[None, :] + 0.5) * bin_h / grid_h              # (ph_n, grid_h)
    xx = -roi_w / 2 + np.arange(pw_n)[:, None] * bin_w + \
        (np.arange(grid_w)[None, :] + 0.5) * bin_w / grid_w              # (pw_n, grid_w)
    yy = yy[:, None, :, None]
    xx = xx[None, :, None, :]
    cos, sin = math.cos(theta), math.sin(theta)
    x = xx * cos + yy * sin + cx                                         # (ph, pw, gh, gw)
    y = yy * cos - xx * sin + cy
    valid = ~((y < -1.0) | (y > height) | (x < -1.0) | (x > width))
    y, x = np.maximum(y, 0.0), np.maximum(x, 0.0)
    y_low, x_low = y.astype(np.int64), x.astype(np.int64)
    y_edge, x_edge = y_low >= height - 1, x_low >= width - 1
    y_low = np.where(y_edge, height - 1, y_low)
    x_low = np.where(x_edge, width - 1, x_low)
    y_high = np.where(y_edge, y_low, y_low + 1)
    x_high = np.where(x_edge, x_low, x_low + 1)
    ly = np.where(y_edge, 0.0, y - y_low)
    lx = np.where(x_edge, 0.0, x - x_low)
    bins = np.broadcast_to(np.arange(ph_n * pw_n).reshape(ph_n, pw_n, 1, 1), x.shape)
    weights = np.zeros((ph_n * pw_n, height * width))
    for rows, cols, w in ((y_low, x_low, (1 - ly) * (1 - lx)), (y_low, x_high, (1 - ly) * lx),
                          (y_high, x_low, ly * (1 - lx)), (y_high, x_high, ly * lx)):
        np.add.at(weights, (bins[valid], (rows * width + cols)[valid]), w[valid])
    return weights / (grid_h * grid_w)


def _infer(attrs, ins, outs):
    data, rois = ins
    if len(attrs.pooled_size) != 2 or 0 in tuple(attrs.pooled_size):
        raise contrib_error(_NAME, f"pooled_size={tuple(attrs.pooled_size)} must be (h, w), "
                                   f"both nonzero")
    if data is None or rois is None:
        return ins, outs
    if len(data) != 4 or len(rois) != 2 or (rois[1] and rois[1] != 6):
        raise contrib_error(_NAME, f"data must be (N, C, H, W) and rois (R, 6), got "
                                   f"{tuple(data)} and {tuple(rois)}")
    return ins, [(rois[0], data[1]) + tuple(attrs.pooled_size)]


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    data, rois = inputs
    n, c, h, w = data.shape
    out = xp.zeros(outputs[0].shape, dtype=data.dtype)
    for r, roi in enumerate(host(rois)):
        weights = xp.asarray(_weights(attrs, roi, h, w), dtype=data.dtype)
        values = xp.matmul(data[roi_batch(_NAME, roi, n, r)].reshape(c, h * w), weights.T)
        out[r] = values.reshape(out.shape[1:])
    put(outputs[0], req[0], out)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, data, rois = inputs
    n, c, h, w = data.shape
    grad = xp.zeros(data.shape, dtype=g.dtype)
    for r, roi in enumerate(host(rois)):
        weights = xp.asarray(_weights(attrs, roi, h, w), dtype=g.dtype)
        batch = roi_batch(_NAME, roi, n, r)
        grad[batch] += xp.matmul(g[r].reshape(c, -1), weights).reshape(c, h, w)
    put(outputs[0], req[0], grad)
    put(outputs[1], req[1], xp.zeros(rois.shape, dtype=rois.dtype))


def _sample(draw):
    d = Draw(draw)
    n, c, h, w = d.int(1, 2), d.int(1, 2), d.int(2, 5), d.int(2, 5)
    rois = [[d.int(0, n - 1), d.float(0, w), d.float(0, h), d.float(0.5, w), d.float(0.5, h),
             d.float(-180, 180)] for _ in range(d.int(1, 3))]
    params = {"pooled_size": (d.int(1, 2), d.int(1, 2)), "spatial_scale": 1.0,
              "sampling_ratio": d.choice([-1, 1, 2])}
    return Case([d.uniform((n, c, h, w)), np.array(rois, dtype=np.float64)], params)


def _reference(raw, data, rois):
    """Each sample point rotated and interpolated one at a time, as MXNet's loop."""
    attrs = RROIAlignParam.parse(_NAME, raw)
    ph_n, pw_n = attrs.pooled_size
    _, c, h, w = data.shape
    out = np.zeros((len(rois), c, ph_n, pw_n))
    for r, roi in enumerate(rois):
        cx, cy, rw, rh = roi[1], roi[2], max(roi[3], 1.0), max(roi[4], 1.0)
        theta = roi[5] * math.pi / 180
        gh = attrs.sampling_ratio if attrs.sampling_ratio > 0 else math.ceil(rh / ph_n)
        gw = attrs.sampling_ratio if attrs.sampling_ratio > 0 else math.ceil(rw / pw_n)
        for ph in range(ph_n):
            for pw in range(pw_n):
                total = np.zeros(c)
                for iy in range(gh):
                    yy = -rh / 2 + ph * rh / ph_n + (iy + 0.5) * rh / ph_n / gh
                    for ix in range(gw):
                        xx = -rw / 2 + pw * rw / pw_n + (ix + 0.5) * rw / pw_n / gw
                        x = xx * math.cos(theta) + yy * math.sin(theta) + cx
                        y = yy * math.cos(theta) - xx * math.sin(theta) + cy
                        total += _point(data[int(roi[0])], y, x)
                out[r, :, ph, pw] = total / (gh * gw)
    return out


def _point(planes, y, x):
    _, h, w = planes.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    y1, x1 = y0 + 1, x0 + 1
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    ly, lx = y - y0, x - x0
    return ((1 - ly) * (1 - lx) * planes[:, y0, x0] + (1 - ly) * lx * planes[:, y0, x1]
            + ly * (1 - lx) * planes[:, y1, x0] + ly * lx * planes[:, y1, x1])


OPS = [
    Op(_NAME, params=RROIAlignParam, num_inputs=2, input_names=["data", "rois"],
       infer_shape=_infer, infer_type=roi_infer_type, compute={XP: _forward},
       gradient=Gradient("_backward_RROIAlign", ("out_grad", "in_data")),
       domain=Domain(_sample, reference=_reference, differentiable=(0,)),
       description="Rotated ROI Align: each roi (batch, centre x, centre y, width, height, "
                   "angle in degrees) times spatial_scale is cut into pooled_size bins in its "
                   "own frame, each the average of bilinear samples rotated about the centre.  "
                   "Output (R, C, h, w).  Gradient (MXNet has none): to the data with the "
                   "sampling weights; rois get zero."),
    Op("_backward_RROIAlign", params=RROIAlignParam, num_inputs=3, num_outputs=2,
       compute={XP: _backward}, is_backward=True, forward_op=_NAME),
]
