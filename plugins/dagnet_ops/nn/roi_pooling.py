"""``ROIPooling`` (MXNet's ``roi_pooling.cc``, Fast R-CNN's layer): max pooling of regions of
interest to a fixed ``pooled_size``.

Each roi row is ``(batch index, x1, y1, x2, y2)`` in input coordinates times
``spatial_scale`` (rounded half away from zero); the region, at least 1 x 1, is cut
into pooled_size bins (``floor``/``ceil`` bounds, clipped to the map) and each bin
takes its maximum (0 for an empty bin).  Gradient: each head gradient goes to its
bin's maximum; the rois get zero.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import REQUIRED, XP, Case, Domain, Field, Gradient, Op, Params, Shape, assign

from .._draw import Draw

__all__ = ["OPS"]


class ROIPoolingParam(Params):
    pooled_size = Field(Shape, REQUIRED, "ROI pooling output shape (h,w) ")
    spatial_scale = Field(float, REQUIRED, "Ratio of input feature map height (or w) to raw "
                                           "image height (or w). Equals the reciprocal of total "
                                           "stride in convolutional layers")


def _round(v: float) -> int:
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))


def _bins(p: ROIPoolingParam, roi: np.ndarray, h: int, w: int):
    """(ph, pw, row slice, column slice) of every non-empty bin of one roi."""
    ph_n, pw_n = p.pooled_size
    x1, y1, x2, y2 = (_round(float(v) * p.spatial_scale) for v in roi[1:5])
    roi_h, roi_w = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
    bin_h, bin_w = roi_h / ph_n, roi_w / pw_n
    for ph in range(ph_n):
        hs = min(max(math.floor(ph * bin_h) + y1, 0), h)
        he = min(max(math.ceil((ph + 1) * bin_h) + y1, 0), h)
        for pw in range(pw_n):
            ws = min(max(math.floor(pw * bin_w) + x1, 0), w)
            we = min(max(math.ceil((pw + 1) * bin_w) + x1, 0), w)
            if he > hs and we > ws:
                yield ph, pw, slice(hs, he), slice(ws, we)


def _infer(attrs, ins, outs):
    data, rois = ins
    if len(attrs.pooled_size) != 2:
        raise ShapeError(f"operator 'ROIPooling': pooled_size={attrs.pooled_size} must be "
                         f"(h, w)")
    if data is None or rois is None:
        return ins, outs
    if len(data) != 4 or len(rois) != 2 or (rois[1] and rois[1] != 5):
        raise ShapeError(f"operator 'ROIPooling': data must be (N, C, H, W) and rois (R, 5), "
                         f"got {tuple(data)} and {tuple(rois)}")
    return ins, [(rois[0], data[1]) + tuple(attrs.pooled_size)]


def _host(x: Any) -> np.ndarray:
    return x.get() if hasattr(x, "get") else np.asarray(x)


def _pool(p: ROIPoolingParam, data: np.ndarray, rois: np.ndarray) -> np.ndarray:
    n, c, h, w = data.shape
    out = np.zeros((rois.shape[0], c) + tuple(p.pooled_size), dtype=np.float64)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        for ph, pw, rows, cols in _bins(p, roi, h, w):
            out[r, :, ph, pw] = data[b, :, rows, cols].reshape(c, -1).max(axis=1)
    return out


def _forward(attrs, ctx, inputs, req, outputs):
    data, rois = (_host(x) for x in inputs)
    assign(outputs[0], req[0], ctx.xp.asarray(_pool(attrs, data, rois)))


def _backward(attrs, ctx, inputs, req, outputs):
    g, data, rois = (_host(x) for x in inputs)
    n, c, h, w = data.shape
    grad = np.zeros(data.shape, dtype=np.float64)
    channels = np.arange(c)
    for r, roi in enumerate(rois):
        b = int(roi[0])
        for ph, pw, rows, cols in _bins(attrs, roi, h, w):
            window = data[b, :, rows, cols].reshape(c, -1)
            flat = window.argmax(axis=1)  # the first maximum, as MXNet's scan
            width = cols.stop - cols.start
            grad[b, channels, rows.start + flat // width, cols.start + flat % width] += \
                g[r, :, ph, pw]
    assign(outputs[0], req[0], ctx.xp.asarray(grad))
    assign(outputs[1], req[1], 0)


def _case(draw):
    d = Draw(draw)
    n, c, h, w = d.int(1, 2), d.int(1, 2), d.int(3, 5), d.int(3, 5)
    rois = []
    for _ in range(d.int(1, 3)):
        x1, y1 = d.int(0, w - 1), d.int(0, h - 1)
        rois.append([d.int(0, n - 1), x1, y1, d.int(x1, w - 1), d.int(y1, h - 1)])
    return Case([d.distinct((n, c, h, w)), np.array(rois, dtype=np.float64)],
                {"pooled_size": (d.int(1, 2), d.int(1, 2)), "spatial_scale": 1.0})


def _reference(raw, data, rois):
    return _pool(ROIPoolingParam.parse("ROIPooling", raw), data, rois)


OPS = [
    Op("ROIPooling", params=ROIPoolingParam, num_inputs=2, input_names=["data", "rois"],
       infer_shape=_infer, compute={XP: _forward},
       gradient=Gradient("_backward_ROIPooling", ("out_grad", "in_data")),
       domain=Domain(_case, reference=_reference, differentiable=(0,)),
       description="Max pooling of regions of interest: rois (R, 5) rows (batch index, x1, "
                   "y1, x2, y2) scaled by spatial_scale and rounded, each region cut into "
                   "pooled_size (h, w) bins taking their maxima (0 when empty).  Output "
                   "(R, C, h, w).  Gradient: to each bin's maximum; rois get zero."),
    Op("_backward_ROIPooling", params=ROIPoolingParam, num_inputs=3, num_outputs=2,
       compute={XP: _backward}, is_backward=True, forward_op="ROIPooling"),
]
