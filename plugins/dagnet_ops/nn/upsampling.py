"""``UpSampling`` (MXNet's ``upsampling.cc``): enlarge (N, C, H, W) feature maps by an
integer ``scale``.

``nearest``: each of the ``num_args`` inputs is repeated to the size of the first
input times ``scale`` (every input must divide that size) and the results are
concatenated on the channels (``multi_input_mode='concat'``) or summed
(``'sum'``, equal channels).  ``bilinear``: one data input and a ``weight`` of
shape (C, 1, k, k), ``k = 2 scale - scale % 2``, applied as a per-channel transposed
convolution with stride ``scale`` and padding ``ceil((scale - 1) / 2)`` (MXNet
builds it from Deconvolution; the weight usually holds a bilinear kernel, as
``mx.init.Bilinear`` makes it).  Both are linear, and the gradients follow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import REQUIRED, XP, Case, Domain, Field, Gradient, Op, Params, assign

from .._draw import Draw

__all__ = ["OPS"]


class UpSamplingParam(Params):
    scale = Field(int, REQUIRED, "Up sampling scale", low=1)
    num_filter = Field(int, 0, "Input filter. Only used by bilinear sample_type.Since bilinear "
                               "upsampling uses deconvolution, num_filters is set to the number "
                               "of channels.", low=0)
    sample_type = Field(str, REQUIRED, "upsampling method", choices=("bilinear", "nearest"))
    multi_input_mode = Field(str, "concat", "How to handle multiple input. concat means "
                                            "concatenate upsampled images along the channel "
                                            "dimension. sum means add all images together, only "
                                            "available for nearest neighbor upsampling.",
                             choices=("concat", "sum"))
    num_args = Field(int, 1, "Number of inputs to be upsampled. For nearest neighbor "
                             "upsampling, this can be 1-N; the size of output will "
                             "be(scale*h_0,scale*w_0) and all other inputs will be upsampled to "
                             "thesame size. For bilinear upsampling this must be 2; 1 input and "
                             "1 weight.", low=1)
    workspace = Field(int, 512, "Tmp workspace for deconvolution (MB)", low=0)


def _bilinear(attrs: UpSamplingParam) -> bool:
    return attrs.sample_type == "bilinear"


def _n_inputs(attrs: UpSamplingParam) -> int:
    return 2 if _bilinear(attrs) else attrs.num_args


def _names(attrs: UpSamplingParam) -> list[str]:
    return ["data", "weight"] if _bilinear(attrs) else [f"arg{i}" for i in range(attrs.num_args)]


def _kernel(scale: int) -> tuple[int, int]:
    """(kernel size, padding) of the bilinear transposed convolution."""
    return 2 * scale - scale % 2, int(np.ceil((scale - 1) / 2.0))


def _error(message: str) -> ShapeError:
    return ShapeError(f"operator 'UpSampling': {message}")


def _infer(attrs, ins, outs):
    first = ins[0]
    if first is None:
        return ins, outs
    if len(first) != 4:
        raise _error(f"expects (N, C, H, W) inputs, got shape {tuple(first)}")
    n, c, h, w = first
    oh, ow = h * attrs.scale, w * attrs.scale
    if _bilinear(attrs):
        k, _ = _kernel(attrs.scale)
        return [first, (c, 1, k, k)], [(n, c, oh, ow)]
    channels = 0
    for i, shape in enumerate(ins):
        if shape is None:
            return ins, outs
        if len(shape) != 4 or shape[0] != n or oh % shape[2] or ow % shape[3] or \
                oh // shape[2] != ow // shape[3]:
            raise _error(f"input {i} of shape {tuple(shape)} cannot be scaled to ({oh}, {ow}) "
                         f"by one integer factor (with batch {n})")
        if attrs.multi_input_mode == "sum" and shape[1] != c:
            raise _error(f"multi_input_mode='sum' needs equal channels; input {i} has "
                         f"{shape[1]}, input 0 has {c}")
        channels += shape[1]
    out_c = c if attrs.multi_input_mode == "sum" else channels
    return ins, [(n, out_c, oh, ow)]


# -- nearest --------------------------------------------------------------------------------
def _repeat(xp: Any, x: Any, f: int) -> Any:
    return xp.repeat(xp.repeat(x, f, axis=2), f, axis=3)


def _nearest(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    oh = outputs[0].shape[2]
    parts = [_repeat(xp, x, oh // x.shape[2]) for x in inputs]
    if attrs.multi_input_mode == "sum":
        out = parts[0]
        for p in parts[1:]:
            out = out + p
    else:
        out = xp.concatenate(parts, axis=1)
    assign(outputs[0], req[0], out)


def _nearest_back(attrs, ctx, inputs, req, outputs):
    g = inputs[0]
    start = 0
    for out, r in zip(outputs, req):
        n, c, h, w = out.shape
        f = g.shape[2] // h
        piece = g if attrs.multi_input_mode == "sum" else g[:, start:start + c]
        start += c
        assign(out, r, piece.reshape(n, c, h, f, w, f).sum(axis=(3, 5)))


# -- bilinear (per-channel transposed convolution) ------------------------------------------
def _deconv(xp: Any, x: Any, weight: Any, s: int) -> Any:
    k, p = _kernel(s)
    n, c, h, w = x.shape
    full = xp.zeros((n, c, (h - 1) * s + k, (w - 1) * s + k), dtype=x.dtype)
    for i in range(k):
        for j in range(k):
            full[:, :, i:i + (h - 1) * s + 1:s, j:j + (w - 1) * s + 1:s] += \
                x * weight[:, 0, i, j].reshape(1, c, 1, 1)
    return full[:, :, p:p + h * s, p:p + w * s]


def _bilinear_forward(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], _deconv(ctx.xp, inputs[0], inputs[1], attrs.scale))


def _bilinear_back(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, x, weight = inputs
    s = attrs.scale
    k, p = _kernel(s)
    n, c, h, w = x.shape
    full = xp.zeros((n, c, (h - 1) * s + k, (w - 1) * s + k), dtype=g.dtype)
    full[:, :, p:p + h * s, p:p + w * s] = g
    dx = xp.zeros(x.shape, dtype=g.dtype)
    dw = xp.zeros(weight.shape, dtype=g.dtype)
    for i in range(k):
        for j in range(k):
            window = full[:, :, i:i + (h - 1) * s + 1:s, j:j + (w - 1) * s + 1:s]
            dx += window * weight[:, 0, i, j].reshape(1, c, 1, 1)
            dw[:, 0, i, j] = (window * x).sum(axis=(0, 2, 3))
    assign(outputs[0], req[0], dx)
    assign(outputs[1], req[1], dw)


def _forward(attrs, ctx, inputs, req, outputs):
    (_bilinear_forward if _bilinear(attrs) else _nearest)(attrs, ctx, inputs, req, outputs)


def _backward(attrs, ctx, inputs, req, outputs):
    (_bilinear_back if _bilinear(attrs) else _nearest_back)(attrs, ctx, inputs, req, outputs)


def _case(draw):
    d = Draw(draw)
    scale = d.int(1, 3, "scale")
    n, h, w = d.int(1, 2), d.int(1, 2), d.int(1, 2)
    if d.bool("bilinear"):
        c = d.int(1, 2)
        k, _ = _kernel(scale)
        return Case([d.uniform((n, c, h, w), -2, 2), d.uniform((c, 1, k, k), -1, 1)],
                    {"scale": scale, "sample_type": "bilinear", "num_filter": c,
                     "num_args": 2})
    mode = d.choice(["concat", "sum"], "multi_input_mode")
    count = d.int(1, 2, "num_args")
    c = d.int(1, 2)
    inputs = [d.uniform((n, c if mode == "sum" else d.int(1, 2), h * 2 ** (count - 1 - i),
                         w * 2 ** (count - 1 - i)), -2, 2) for i in range(count)]
    return Case(inputs, {"scale": scale, "sample_type": "nearest", "num_args": count,
                         "multi_input_mode": mode})


def _reference(raw, *inputs):
    p = UpSamplingParam.parse("UpSampling", raw)
    if p.sample_type == "bilinear":
        return _deconv(np, inputs[0], inputs[1], p.scale)
    oh = inputs[0].shape[2] * p.scale
    parts = [x.repeat(oh // x.shape[2], axis=2).repeat(oh // x.shape[2], axis=3)
             for x in inputs]
    return sum(parts) if p.multi_input_mode == "sum" else np.concatenate(parts, axis=1)


OPS = [
    Op("UpSampling", params=UpSamplingParam, num_inputs=_n_inputs, input_names=_names,
       key_var_num_args="num_args", infer_shape=_infer, compute={XP: _forward},
       gradient=Gradient("_backward_UpSampling", ("out_grad", "in_data")),
       domain=Domain(_case, reference=_reference),
       description="Enlarge (N, C, H, W) inputs by ``scale``.  nearest: each input repeated "
                   "to the first input's size times scale, then concatenated on channels or "
                   "summed (multi_input_mode).  bilinear: a per-channel transposed convolution "
                   "of data with weight (C, 1, k, k), k = 2 scale - scale % 2, stride scale, "
                   "padding ceil((scale - 1) / 2).  Dtype = data's.  Gradient: nearest sums "
                   "each block of the head gradient; bilinear is the convolution's gradient "
                   "for data and weight."),
    Op("_backward_UpSampling", params=UpSamplingParam, num_inputs=lambda a: 1 + _n_inputs(a),
       num_outputs=_n_inputs, compute={XP: _backward}, is_backward=True,
       forward_op="UpSampling"),
]
