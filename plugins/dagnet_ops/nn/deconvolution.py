"""``Deconvolution``: the transposed convolution (the gradient of ``Convolution``
with respect to its data, used as a layer)."""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    ComposedGradient,
    Domain,
    Field,
    Gradient,
    Op,
    OpReqType,
    Params,
    Shape,
    assign,
)

from .._draw import Draw
from ._common import set_shape, spatial
from ._conv_kernels import conv_forward, conv_grad_data, conv_grad_weight
from ._second_order import affine_backward_gradient
from .convolution import CHANNEL_FIRST, conv_geometry

__all__ = ["OPS"]


class DeconvolutionParam(Params):
    kernel = Field(Shape, REQUIRED, "window size: (w,), (h, w) or (d, h, w)")
    stride = Field(Shape, (), "stride per spatial axis (default 1)")
    dilate = Field(Shape, (), "dilation per spatial axis (default 1)")
    pad = Field(Shape, (), "padding removed from both sides of the output (default 0); "
                           "ignored when target_shape is given")
    adj = Field(Shape, (), "extra size added at the end of each output axis (default 0, < stride)")
    target_shape = Field(Shape, (), "output spatial shape; pad and adj are then computed from it")
    num_filter = Field(int, REQUIRED, "number of output channels", low=1)
    num_group = Field(int, 1, "split the input and output channels into this many groups", low=1)
    workspace = Field(int, 512, "accepted for MXNet compatibility (cuDNN scratch, MB)", low=0)
    no_bias = Field(bool, True, "disable the bias")
    cudnn_tune = Field(str, None, "accepted for MXNet compatibility",
                       choices=("fastest", "limited_workspace", "off"))
    cudnn_off = Field(bool, False, "accepted for MXNet compatibility")
    layout = Field(str, None, "data layout; dagnet computes channel-first layouts only",
                   choices=CHANNEL_FIRST)


def _geometry(attrs, data_shape):
    """``(stride, dilate, pad, out_spatial)`` for data of ``data_shape`` (sizes may be 0)."""
    kernel, stride, dilate, pad = conv_geometry("Deconvolution", attrs, len(data_shape))
    nd = len(kernel)
    adj = spatial(attrs.adj, nd, 0, "Deconvolution", "adj")
    full = [s * (n - 1) + d * (k - 1) + 1 if n else 0
            for s, n, d, k in zip(stride, data_shape[2:], dilate, kernel)]
    if attrs.target_shape:
        target = spatial(attrs.target_shape, nd, 0, "Deconvolution", "target_shape")
        total = [f - t for f, t in zip(full, target)]
        if any(n and t < 0 for n, t in zip(data_shape[2:], total)):
            raise ShapeError(
                f"operator 'Deconvolution': target_shape={target} is larger than the largest "
                f"output {tuple(full)} that data {tuple(data_shape)} gives with kernel "
                f"{kernel}, stride {stride}, dilate {dilate}")
        pad = tuple((t + 1) // 2 for t in total)
        adj = tuple(t % 2 for t in total)
    if any(a >= s for a, s in zip(adj, stride)):
        raise ShapeError(f"operator 'Deconvolution': adj={adj} must be smaller than stride={stride}"
                         f"{' (adj follows from target_shape)' if attrs.target_shape else ''}")
    out = tuple(f - 2 * p + a if f else 0 for f, p, a in zip(full, pad, adj))
    return stride, dilate, pad, out


def _input_names(attrs):
    return ["data", "weight"] if attrs.no_bias else ["data", "weight", "bias"]


def _infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    names, f, g = _input_names(attrs), attrs.num_filter, attrs.num_group
    data = ins[0]
    if f % g:
        raise ShapeError(
            f"operator 'Deconvolution': num_filter={f} is not divisible by num_group={g}")
    channels = 0
    if data is not None:
        channels = data[1]
        if channels and channels % g:
            raise ShapeError(f"operator 'Deconvolution', input 'data': {channels} channels (shape "
                             f"{tuple(data)}) are not divisible by num_group={g}")
        _, _, _, out = _geometry(attrs, data)
        set_shape(outs, 0, (data[0], f, *out), "Deconvolution", ["output"], "output")
    set_shape(ins, 1, (channels, f // g, *attrs.kernel), "Deconvolution", names)
    if not attrs.no_bias:
        set_shape(ins, 2, (f,), "Deconvolution", names)
    return ins, outs


def _forward(attrs, ctx, inputs, req, outputs):
    x, w = inputs[0], inputs[1]
    stride, dilate, pad, out = _geometry(attrs, x.shape)
    y = conv_grad_data(ctx.xp, x, w, (x.shape[0], attrs.num_filter, *out), stride, dilate, pad,
                       attrs.num_group)
    if not attrs.no_bias:
        y += inputs[2].reshape((1, -1) + (1,) * (y.ndim - 2))
    assign(outputs[0], req[0], y)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    dy, x, w = inputs[0], inputs[1], inputs[2]
    stride, dilate, pad, _ = _geometry(attrs, x.shape)
    if req[0] is not OpReqType.NULL:
        dx = conv_forward(xp, dy, w, stride, dilate, pad, attrs.num_group)
        assign(outputs[0], req[0], dx[(Ellipsis, *(slice(0, n) for n in x.shape[2:]))])
    if req[1] is not OpReqType.NULL:
        dw = conv_grad_weight(xp, dy, x, w.shape, stride, dilate, pad, attrs.num_group)
        assign(outputs[1], req[1], dw)
    if not attrs.no_bias and req[2] is not OpReqType.NULL:
        assign(outputs[2], req[2], dy.sum(axis=(0,) + tuple(range(2, dy.ndim))))


def _sample(draw):
    d = Draw(draw)
    nd = d.int(1, 2, "spatial dims")
    groups = d.int(1, 2, "num_group")
    kernel = d.shape(nd, 1, 3)
    stride, dilate = d.shape(nd, 1, 2), d.shape(nd, 1, 2)
    size = d.shape(nd, 1, 4)
    params = {"kernel": kernel, "stride": stride, "dilate": dilate, "num_group": groups}
    if d.bool("target_shape"):
        full = [s * (n - 1) + dl * (k - 1) + 1 for s, n, dl, k in zip(stride, size, dilate, kernel)]
        # the shortfall from the full size becomes 2*pad + adj, and adj < stride
        shortfalls = [[t for t in ((0, 1, 2) if s > 1 else (0, 2)) if t < f]
                      for f, s in zip(full, stride)]
        params["target_shape"] = tuple(f - d.choice(options)
                                       for f, options in zip(full, shortfalls))
    else:
        params["pad"] = tuple(d.int(0, (dl * (k - 1)) // 2) for dl, k in zip(dilate, kernel))
        params["adj"] = tuple(d.int(0, s - 1) for s in stride)
    channels, filters = groups * d.int(1, 2), groups * d.int(1, 2)
    params["num_filter"] = filters
    params["no_bias"] = no_bias = d.bool("no_bias")
    inputs = [d.uniform((d.int(1, 2), channels, *size)),
              d.uniform((channels, filters // groups, *kernel))]
    if not no_bias:
        inputs.append(d.uniform((filters,)))
    return Case(inputs, params)


def _reference(params, x, w, b=None):
    """Scatter every input value times its filter into the output, then crop the padding."""
    attrs = DeconvolutionParam.parse("Deconvolution", params)
    stride, dilate, pad, out = _geometry(attrs, x.shape)
    kernel = tuple(attrs.kernel)
    n, c = x.shape[:2]
    f, g = attrs.num_filter, attrs.num_group
    full = tuple(o + 2 * p for o, p in zip(out, pad))
    y = np.zeros((n, f, *full))
    for ch in range(c):
        group = ch // (c // g)
        filters = slice(group * (f // g), (group + 1) * (f // g))
        for pos in np.ndindex(*x.shape[2:]):
            for k in np.ndindex(*kernel):
                at = tuple(p * s + kk * dl for p, s, kk, dl in zip(pos, stride, k, dilate))
                if all(a < size for a, size in zip(at, full)):
                    value = x[(slice(None), ch, *pos)][:, None] * w[(ch, slice(None), *k)]
                    y[(slice(None), filters, *at)] += value
    y = y[(slice(None), slice(None), *(slice(p, p + o) for p, o in zip(pad, out)))]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * len(out))
    return y


Deconvolution = Op(
    "Deconvolution",
    description="""Transposed convolution ("deconvolution") over 1, 2 or 3 spatial axes.

``data`` ``(batch, C, *spatial)``, ``weight`` ``(C, num_filter/num_group, *kernel)``,
``bias`` ``(num_filter,)`` (``no_bias`` defaults to True, as in MXNet).  The output
size is ``stride*(size-1) + dilate*(kernel-1) + 1 - 2*pad + adj``; with
``target_shape`` the padding and ``adj`` are chosen to reach it.  The forward pass
is the data-gradient of ``Convolution``; its gradient is a convolution.""",
    params=DeconvolutionParam,
    num_inputs=lambda a: 2 if a.no_bias else 3,
    input_names=_input_names,
    output_names=["output"],
    infer_shape=_infer_shape,
    compute={XP: _forward},
    gradient=Gradient("_backward_Deconvolution", uses=("out_grad", "in_data")),
    domain=Domain(_sample, _reference),
)

BackwardDeconvolution = Op(
    "_backward_Deconvolution",
    gradient=ComposedGradient(affine_backward_gradient("Deconvolution")),
    params=DeconvolutionParam,
    num_inputs=lambda a: 3 if a.no_bias else 4,
    num_outputs=lambda a: 2 if a.no_bias else 3,
    compute={XP: _backward},
    is_backward=True,
    forward_op="Deconvolution",
)

OPS = [Deconvolution, BackwardDeconvolution]
