"""``_contrib_PSROIPooling`` (MXNet's ``psroi_pooling.cc``, R-FCN's position-sensitive
region-of-interest pooling).

A roi row is ``(batch index, x1, y1, x2, y2)``; its corners are rounded (half away from
zero), the far ones made inclusive (+1), and scaled by ``spatial_scale``; a region is at
least 0.1 wide.  It is cut into ``pooled_size`` x ``pooled_size`` bins with ``floor``/
``ceil`` bounds clipped to the map.  Output channel ``c``'s bin ``(ph, pw)`` averages
input channel ``(c * group_size + gh) * group_size + gw``, where ``(gh, gw)`` is the bin's
cell in a ``group_size`` grid (``group_size`` 0 means ``pooled_size``); an empty bin is 0.
Gradient: each head gradient is spread evenly over its bin; the rois get zero.
"""

from __future__ import annotations

import math

import numpy as np

from dagnet.operator import REQUIRED, XP, Case, Domain, Field, Gradient, Op, Params

from .._draw import Draw
from ._common import contrib_error, host, put, roi_batch, roi_infer_type

__all__ = ["OPS"]

_NAME = "_contrib_PSROIPooling"


class PSROIPoolingParam(Params):
    spatial_scale = Field(float, REQUIRED, "Ratio of input feature map height (or w) to raw "
                                           "image height (or w). Equals the reciprocal of total "
                                           "stride in convolutional layers", low=0.0, high=1.0)
    output_dim = Field(int, REQUIRED, "fix output dim")
    pooled_size = Field(int, REQUIRED, "fix pooled size")
    group_size = Field(int, 0, "fix group size")


def _group(attrs) -> int:
    return attrs.group_size or attrs.pooled_size


def _round(v: float) -> float:
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


def _bins(attrs, roi, height, width):
    """(ph, pw, input channel offset (gh, gw), rows, cols) of every non-empty bin."""
    p, g = attrs.pooled_size, _group(attrs)
    x1 = _round(float(roi[1])) * attrs.spatial_scale
    y1 = _round(float(roi[2])) * attrs.spatial_scale
    x2 = (_round(float(roi[3])) + 1.0) * attrs.spatial_scale
    y2 = (_round(float(roi[4])) + 1.0) * attrs.spatial_scale
    bin_h, bin_w = max(y2 - y1, 0.1) / p, max(x2 - x1, 0.1) / p
    for ph in range(p):
        hs = min(max(math.floor(ph * bin_h + y1), 0), height)
        he = min(max(math.ceil((ph + 1) * bin_h + y1), 0), height)
        gh = min(max(math.floor(ph * g / p), 0), g - 1)
        for pw in range(p):
            ws = min(max(math.floor(pw * bin_w + x1), 0), width)
            we = min(max(math.ceil((pw + 1) * bin_w + x1), 0), width)
            gw = min(max(math.floor(pw * g / p), 0), g - 1)
            if he > hs and we > ws:
                yield ph, pw, gh * g + gw, slice(hs, he), slice(ws, we)


def _infer(attrs, ins, outs):
    data, rois = ins
    if data is None or rois is None:
        return ins, outs
    if len(data) != 4 or len(rois) != 2 or (rois[1] and rois[1] != 5):
        raise contrib_error(_NAME, f"data must be (N, C, H, W) and rois (R, 5), got "
                                   f"{tuple(data)} and {tuple(rois)}")
    g = _group(attrs)
    if data[1] and data[1] != attrs.output_dim * g * g:
        raise contrib_error(_NAME, f"data has {data[1]} channels; it needs output_dim * "
                                   f"group_size**2 = {attrs.output_dim} * {g}**2")
    p = attrs.pooled_size
    return ins, [(rois[0], attrs.output_dim, p, p)]


def _channels(attrs, offset):
    g = _group(attrs)
    return np.arange(attrs.output_dim) * g * g + offset


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    data, rois = inputs
    n, _, h, w = data.shape
    out = xp.zeros(outputs[0].shape, dtype=data.dtype)
    for r, roi in enumerate(host(rois)):
        batch = roi_batch(_NAME, roi, n, r)
        for ph, pw, offset, rows, cols in _bins(attrs, roi, h, w):
            window = data[batch, _channels(attrs, offset), rows, cols]
            out[r, :, ph, pw] = window.mean(axis=(1, 2))
    put(outputs[0], req[0], out)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, data, rois = inputs
    n, _, h, w = data.shape
    grad = xp.zeros(data.shape, dtype=g.dtype)
    for r, roi in enumerate(host(rois)):
        batch = roi_batch(_NAME, roi, n, r)
        for ph, pw, offset, rows, cols in _bins(attrs, roi, h, w):
            area = (rows.stop - rows.start) * (cols.stop - cols.start)
            channels = _channels(attrs, offset)
            grad[batch, channels, rows, cols] += (g[r, :, ph, pw] / area)[:, None, None]
    put(outputs[0], req[0], grad)
    put(outputs[1], req[1], xp.zeros(rois.shape, dtype=rois.dtype))


def _sample(draw):
    d = Draw(draw)
    p, dim = d.int(1, 3), d.int(1, 2)
    g = d.choice([0, p, 1])
    groups = g or p
    n, h, w = d.int(1, 2), d.int(2, 6), d.int(2, 6)
    rois = []
    for _ in range(d.int(1, 3)):
        x1, y1 = d.int(0, w - 1), d.int(0, h - 1)
        rois.append([d.int(0, n - 1), x1, y1, d.int(x1, w - 1), d.int(y1, h - 1)])
    params = {"spatial_scale": 1.0, "output_dim": dim, "pooled_size": p, "group_size": g}
    return Case([d.uniform((n, dim * groups * groups, h, w)),
                 np.array(rois, dtype=np.float64)], params)


def _reference(raw, data, rois):
    attrs = PSROIPoolingParam.parse(_NAME, raw)
    p = attrs.pooled_size
    out = np.zeros((len(rois), attrs.output_dim, p, p))
    for r, roi in enumerate(rois):
        for ph, pw, offset, rows, cols in _bins(attrs, roi, data.shape[2], data.shape[3]):
            for c in range(attrs.output_dim):
                out[r, c, ph, pw] = data[int(roi[0]), _channels(attrs, offset)[c], rows,
                                         cols].mean()
    return out


OPS = [
    Op(_NAME, params=PSROIPoolingParam, num_inputs=2, input_names=["data", "rois"],
       infer_shape=_infer, infer_type=roi_infer_type, compute={XP: _forward},
       gradient=Gradient(f"_backward{_NAME}", ("out_grad", "in_data")),
       domain=Domain(_sample, reference=_reference, differentiable=(0,)),
       description="Position-sensitive ROI pooling (R-FCN): each roi (batch, x1, y1, x2, y2), "
                   "rounded, inclusive and scaled by spatial_scale, is cut into pooled_size "
                   "squared bins; output channel c's bin averages its own input channel of a "
                   "group_size grid (input channels = output_dim * group_size**2).  Output "
                   "(R, output_dim, p, p).  Gradient: spread evenly over each bin; rois get "
                   "zero."),
    Op(f"_backward{_NAME}", params=PSROIPoolingParam, num_inputs=3, num_outputs=2,
       compute={XP: _backward}, is_backward=True, forward_op=_NAME),
]
