"""``Convolution``: 1-D, 2-D and 3-D cross-correlation with grouped filters, through
im2col and a batched matrix product.  Channel-last layouts (NHWC, NDHWC) are moved
to channel-first around the same kernels."""

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
from ._common import (
    channel_last,
    layout_shape,
    set_shape,
    spatial,
    to_channel_first,
    to_channel_last,
)
from ._conv_kernels import conv_forward, conv_grad_data, conv_grad_weight, conv_grads
from ._im2col import window_count
from ._second_order import affine_backward_gradient

__all__ = ["OPS", "ConvolutionParam", "conv_geometry", "CHANNEL_FIRST", "LAYOUTS"]

CHANNEL_FIRST = ("NCW", "NCHW", "NCDHW")
#: MXNet's Convolution layouts; the weight follows the data's (``(F, *kernel, C/g)`` when the
#: channels come last)
LAYOUTS = (*CHANNEL_FIRST, "NHWC", "NDHWC")


class ConvolutionParam(Params):
    kernel = Field(Shape, REQUIRED, "window size: (w,), (h, w) or (d, h, w)")
    stride = Field(Shape, (), "window step per spatial axis (default 1)")
    dilate = Field(Shape, (), "dilation per spatial axis (default 1)")
    pad = Field(Shape, (), "zero padding on both sides of each spatial axis (default 0)")
    num_filter = Field(int, REQUIRED, "number of output channels", low=1)
    num_group = Field(int, 1, "split the input and output channels into this many groups", low=1)
    workspace = Field(int, 1024, "accepted for MXNet compatibility (cuDNN scratch, MB)", low=0)
    no_bias = Field(bool, False, "disable the bias")
    cudnn_tune = Field(str, None, "accepted for MXNet compatibility",
                       choices=("fastest", "limited_workspace", "off"))
    cudnn_off = Field(bool, False, "accepted for MXNet compatibility")
    layout = Field(str, None, "data layout (None picks the channel-first one matching the "
                              "kernel); the weight and output follow it", choices=LAYOUTS)


def conv_geometry(op, attrs, data_ndim=None):
    """``(kernel, stride, dilate, pad)`` with MXNet's defaults filled in, checked against
    the data's number of dimensions."""
    kernel = tuple(attrs.kernel)
    nd = len(kernel)
    if not 1 <= nd <= 3:
        raise ShapeError(f"operator {op!r}: kernel={kernel} must have 1, 2 or 3 dimensions")
    if data_ndim is not None and data_ndim != nd + 2:
        raise ShapeError(
            f"operator {op!r}, input 'data': a {nd}-D kernel {kernel} needs {nd + 2}-D data "
            f"(batch, channel, {nd} spatial), got {data_ndim}-D")
    if attrs.layout is not None and len(attrs.layout) != nd + 2:
        raise ShapeError(f"operator {op!r}: layout {attrs.layout!r} does not fit a {nd}-D kernel")
    return (kernel, spatial(attrs.stride, nd, 1, op, "stride"),
            spatial(attrs.dilate, nd, 1, op, "dilate"), spatial(attrs.pad, nd, 0, op, "pad"))


def _input_names(attrs):
    return ["data", "weight"] if attrs.no_bias else ["data", "weight", "bias"]


def _infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    names, f, g = _input_names(attrs), attrs.num_filter, attrs.num_group
    last = channel_last(attrs.layout)
    if outs[0] is not None:  # back from the output, as MXNet: batch, and stride-1 sizes
        set_shape(ins, 0, _data_from_output(attrs, tuple(outs[0]), last), "Convolution", names)
    data = ins[0]
    if data is not None and last:  # reasoned about channel-first below
        data = (data[0], data[-1], *data[1:-1])
    kernel, stride, dilate, pad = conv_geometry("Convolution", attrs,
                                                None if data is None else len(data))
    if f % g:
        raise ShapeError(
            f"operator 'Convolution': num_filter={f} is not divisible by num_group={g}")
    channels = 0
    if data is not None:
        channels = data[1]
        if channels and channels % g:
            raise ShapeError(f"operator 'Convolution', input 'data': {channels} channels (shape "
                             f"{tuple(data)}) are not divisible by num_group={g}")
        out = []
        for i, size in enumerate(data[2:]):
            if not size:
                out.append(0)
                continue
            extent = dilate[i] * (kernel[i] - 1) + 1
            if extent > size + 2 * pad[i]:
                raise ShapeError(
                    f"operator 'Convolution', input 'data': the dilated kernel ({extent}) is "
                    f"larger than the padded input ({size} + 2*{pad[i]}) on spatial axis {i}; "
                    f"data shape {tuple(data)}, kernel {kernel}, dilate {dilate}, pad {pad}")
            out.append(window_count(size + 2 * pad[i], kernel[i], stride[i], dilate[i]))
        set_shape(outs, 0, layout_shape((data[0], f, *out), attrs.layout), "Convolution",
                  ["output"], "output")
    set_shape(ins, 1, layout_shape((f, channels // g if channels else 0, *kernel), attrs.layout),
              "Convolution", names)
    if not attrs.no_bias:
        set_shape(ins, 2, (f,), "Convolution", names)
    return ins, outs


def _data_from_output(attrs, out, last):
    """What the output's shape says of the data's (0 where it says nothing): the batch,
    and each spatial size with stride 1 (``out - 2 * pad + dilated kernel - 1``)."""
    o = (out[0], out[-1], *out[1:-1]) if last else out
    kernel, stride, dilate, pad = conv_geometry("Convolution", attrs, len(o))
    sizes = []
    for i, size in enumerate(o[2:]):
        guess = size - 2 * pad[i] + dilate[i] * (kernel[i] - 1) if size and stride[i] == 1 else 0
        sizes.append(max(guess, 0))
    return layout_shape((o[0], 0, *sizes), attrs.layout)


def _forward(attrs, ctx, inputs, req, outputs):
    xp, x, w = ctx.xp, inputs[0], inputs[1]
    _, stride, dilate, pad = conv_geometry("Convolution", attrs, x.ndim)
    last = channel_last(attrs.layout)
    if last:
        x, w = to_channel_first(xp, x), to_channel_first(xp, w)
    # written in place, no copy
    direct = outputs[0] if req[0] is OpReqType.WRITE and not last else None
    y = conv_forward(xp, x, w, stride, dilate, pad, attrs.num_group, out=direct)
    if not attrs.no_bias:
        y += inputs[2].reshape((1, -1) + (1,) * (y.ndim - 2))
    assign(outputs[0], req[0], to_channel_last(xp, y) if last else y)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    dy, x, w = inputs[0], inputs[1], inputs[2]
    _, stride, dilate, pad = conv_geometry("Convolution", attrs, x.ndim)
    groups = attrs.num_group
    last = channel_last(attrs.layout)
    if last:
        dy, x, w = (to_channel_first(xp, a) for a in (dy, x, w))
    wants_dx, wants_dw = (r is not OpReqType.NULL for r in req[:2])
    direct = [out if r is OpReqType.WRITE and not last else None  # written in place
              for out, r in zip(outputs[:2], req[:2])]
    if wants_dx and wants_dw:
        dx, dw = conv_grads(xp, dy, x, w, stride, dilate, pad, groups, *direct)
    else:
        dx = conv_grad_data(xp, dy, w, x.shape, stride, dilate, pad, groups,
                            out=direct[0]) if wants_dx else None
        dw = conv_grad_weight(xp, x, dy, w.shape, stride, dilate, pad, groups,
                              out=direct[1]) if wants_dw else None
    if wants_dx:
        assign(outputs[0], req[0], to_channel_last(xp, dx) if last else dx)
    if wants_dw:
        assign(outputs[1], req[1], to_channel_last(xp, dw) if last else dw)
    if not attrs.no_bias and req[2] is not OpReqType.NULL:
        assign(outputs[2], req[2], dy.sum(axis=(0,) + tuple(range(2, dy.ndim))))


def _sample(draw):
    d = Draw(draw)
    nd = d.int(1, 2, "spatial dims")
    groups = d.int(1, 2, "num_group")
    kernel = d.shape(nd, 1, 3)
    stride, dilate, pad = d.shape(nd, 1, 2), d.shape(nd, 1, 2), d.shape(nd, 0, 1)
    size = tuple(d.int(dl * (k - 1) + 1, 6) for k, dl in zip(kernel, dilate))
    channels, filters = groups * d.int(1, 2), groups * d.int(1, 2)
    no_bias = d.bool("no_bias")
    params = {"kernel": kernel, "stride": stride, "dilate": dilate, "pad": pad,
              "num_filter": filters, "num_group": groups, "no_bias": no_bias}
    layout = None
    if nd == 2 and d.bool("channel-last layout"):
        layout = params["layout"] = "NHWC"
    inputs = [d.uniform(layout_shape((d.int(1, 2), channels, *size), layout)),
              d.uniform(layout_shape((filters, channels // groups, *kernel), layout))]
    if not no_bias:
        inputs.append(d.uniform((filters,)))
    return Case(inputs, params)


def _reference(params, x, w, b=None):
    attrs = ConvolutionParam.parse("Convolution", params)
    kernel, stride, dilate, pad = conv_geometry("Convolution", attrs, x.ndim)
    if channel_last(attrs.layout):
        y = _reference({**params, "layout": None}, np.moveaxis(x, -1, 1), np.moveaxis(w, -1, 1), b)
        return np.moveaxis(y, 1, -1)
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    n, c = x.shape[:2]
    f, g = attrs.num_filter, attrs.num_group
    out = tuple(window_count(s, k, st, dl)
                for s, k, st, dl in zip(x.shape[2:], kernel, stride, dilate))
    y = np.zeros((n, f, *out))
    for o in range(f):
        group = o // (f // g)
        channels = slice(group * (c // g), (group + 1) * (c // g))
        for pos in np.ndindex(*out):
            window = (slice(None), channels) + tuple(
                slice(p * s, p * s + dl * (k - 1) + 1, dl)
                for p, s, dl, k in zip(pos, stride, dilate, kernel))
            y[(slice(None), o, *pos)] = (x[window] * w[o]).reshape(n, -1).sum(axis=1)
    if b is not None:
        y += b.reshape((1, -1) + (1,) * len(out))
    return y


Convolution = Op(
    "Convolution",
    description="""Convolution (cross-correlation) over 1, 2 or 3 spatial axes.

``data`` ``(batch, C, *spatial)``, ``weight`` ``(num_filter, C/num_group, *kernel)``,
``bias`` ``(num_filter,)``; the output is ``(batch, num_filter, *out)`` with
``out = floor((size + 2*pad - dilate*(kernel-1) - 1) / stride) + 1``.  With
``num_group`` g, input and output channels split into g groups convolved
separately.  ``layout`` NHWC or NDHWC puts the channels last in the data, the
weight ``(num_filter, *kernel, C/num_group)`` and the output (computed by moving
them first and back).  ``workspace`` and the cuDNN options are accepted and ignored.""",
    params=ConvolutionParam,
    num_inputs=lambda a: 2 if a.no_bias else 3,
    input_names=_input_names,
    output_names=["output"],
    infer_shape=_infer_shape,
    compute={XP: _forward},
    gradient=Gradient("_backward_Convolution", uses=("out_grad", "in_data")),
    domain=Domain(_sample, _reference),
)

BackwardConvolution = Op(
    "_backward_Convolution",
    gradient=ComposedGradient(affine_backward_gradient("Convolution")),
    params=ConvolutionParam,
    num_inputs=lambda a: 3 if a.no_bias else 4,
    num_outputs=lambda a: 2 if a.no_bias else 3,
    compute={XP: _backward},
    is_backward=True,
    forward_op="Convolution",
)

OPS = [Convolution, BackwardConvolution]
