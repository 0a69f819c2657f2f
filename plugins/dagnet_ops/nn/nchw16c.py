"""Layers on NCHW16c data: 4-D NCHW arrays with their channels in blocks of 16, stored as
``(N, C/16, H, W, 16)`` -- oneDNN's own layout on AVX-512 machines.

A graph that keeps its activations in this layout from one convolution to the next runs
oneDNN's kernels without the layout changes a plain NCHW array costs at every layer (see
:mod:`.layout_pass`, which rewrites bound graphs to use these operators).  The
operators: ``_NCHW_to_NCHW16c`` and ``_NCHW16c_to_NCHW`` (each the other's gradient),
``_Convolution_NCHW16c`` (2-D, ungrouped, plain OIHW filters) and ``_BatchNorm_NCHW16c``
(channels on axis 1), with the parameters of ``Convolution`` and ``BatchNorm``.
Element-wise layers (activations, sums) need no variant: they see the same values in
another order.

oneDNN runs float32 arrays on numpy; anything else (float64, another device, oneDNN
absent or off) changes the layout, runs the plain layer's kernel and changes it back.
"""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Gradient, Op, OpReqType, assign

from .._draw import Draw
from . import _onednn, batch_norm, convolution
from ._common import threads_for
from .channel_blocks import from_blocks, to_blocks

__all__ = ["OPS", "BLOCK", "to_blocked_array", "to_plain_array"]

BLOCK = _onednn.CHANNEL_BLOCK  # channels per block


# -- the layout itself -----------------------------------------------------------------------
def to_blocked_array(xp, x):
    """NCHW ``x`` as a new NCHW16c array (its channels a multiple of 16)."""
    return to_blocks(xp, x, BLOCK)


def to_plain_array(xp, x):
    """NCHW16c ``x`` as a new NCHW array."""
    return from_blocks(xp, x)


def _blocked_shape(shape):
    if len(shape) != 4 or shape[1] % BLOCK:
        raise ShapeError(f"NCHW16c data is 4-D NCHW with channels a multiple of {BLOCK}, got "
                         f"shape {tuple(shape)}")
    return _onednn.blocked_shape(shape)


def _plain_shape(shape):
    if len(shape) != 5 or shape[-1] != BLOCK:
        raise ShapeError(f"an NCHW16c array has shape (N, C/{BLOCK}, H, W, {BLOCK}), got "
                         f"{tuple(shape)}")
    return _onednn.plain_shape(shape)


def _known(shape):
    return shape is not None and all(shape)


def _infer_through_plain(rule, attrs, ins, outs):
    """A plain layer's two-way shape ``rule`` with the data (input 0) and the first output
    NCHW16c: each is seen as NCHW where it is known, and given back in NCHW16c."""
    def plain(shape):
        return _plain_shape(shape) if _known(shape) else None

    plain_ins, plain_outs = rule(attrs, [plain(ins[0]), *ins[1:]], [plain(outs[0]), *outs[1:]])

    def blocked(shape, was):
        return _blocked_shape(shape) if _known(shape) else was

    return ([blocked(plain_ins[0], ins[0]), *plain_ins[1:]],
            [blocked(plain_outs[0], outs[0]), *plain_outs[1:]])


def _infer_converter(to_blocked):
    def infer(attrs, ins, outs):
        data, out = ins[0], outs[0]
        forward, backward = (_blocked_shape, _plain_shape) if to_blocked else \
            (_plain_shape, _blocked_shape)
        if _known(data):
            out = forward(data)
        elif _known(out):
            data = backward(out)
        return [data], [out]

    return infer


def _converter(to_blocked):
    change = to_blocked_array if to_blocked else to_plain_array

    def compute(attrs, ctx, inputs, req, outputs):
        assign(outputs[0], req[0], change(ctx.xp, inputs[0]))

    return compute


def _converter_sample(to_blocked):
    def sample(draw):
        d = Draw(draw)
        shape = (d.int(1, 2), BLOCK * d.int(1, 2), d.int(1, 3), d.int(1, 3))
        x = d.uniform(shape)
        return Case([to_blocked_array(np, x) if not to_blocked else x], {})

    return sample


def _converter_reference(to_blocked):
    return lambda params, x: (to_blocked_array if to_blocked else to_plain_array)(np, x)


# -- running the plain layer's kernel ----------------------------------------------------------
def _through_plain(kernel, attrs, ctx, inputs, req, outputs, blocked_inputs):
    """``kernel`` (a plain layer's) on ``inputs`` whose ``blocked_inputs`` positions are moved
    to NCHW, its first output moved back to NCHW16c."""
    xp = ctx.xp
    plain = [to_plain_array(xp, a) if i in blocked_inputs else a for i, a in enumerate(inputs)]
    first = xp.empty(_plain_shape(outputs[0].shape), dtype=outputs[0].dtype)
    first_req = OpReqType.NULL if req[0] is OpReqType.NULL else OpReqType.WRITE
    kernel(attrs, ctx, plain, [first_req, *req[1:]], [first, *outputs[1:]])
    if req[0] is not OpReqType.NULL:
        assign(outputs[0], req[0], to_blocked_array(xp, first))


def _onednn_ready(xp, arrays):
    """oneDNN's library when every array is a C-contiguous float32 numpy array, else None."""
    if not all(a.flags.c_contiguous for a in arrays):
        return None
    return _onednn.library_for(xp, *arrays)


def _direct(out, r):
    """``out`` where a kernel may write it straight away, else None."""
    return out if r is OpReqType.WRITE else None


# -- convolution -----------------------------------------------------------------------------
def _check_conv(attrs):
    if len(attrs.kernel) != 2 or attrs.num_group != 1 or \
            attrs.layout not in (None, "NCHW"):
        raise ShapeError(f"operator '_Convolution_NCHW16c' runs 2-D ungrouped NCHW "
                         f"convolutions, got kernel {tuple(attrs.kernel)}, num_group="
                         f"{attrs.num_group}, layout {attrs.layout!r}")


def _conv_shape_rule(attrs, ins, outs):
    """Convolution's shape rule, the data's and output's channels multiples of 16."""
    ins, outs = convolution._infer_shape(attrs, ins, outs)
    for shape in (ins[0], outs[0]):
        if shape is not None and shape[1] and shape[1] % BLOCK:
            raise ShapeError(f"operator '_Convolution_NCHW16c': the data and output channels "
                             f"must be multiples of {BLOCK}, got shape {tuple(shape)}")
    return ins, outs


def _conv_infer_shape(attrs, ins, outs):
    _check_conv(attrs)
    return _infer_through_plain(_conv_shape_rule, attrs, ins, outs)


def _conv_forward(attrs, ctx, inputs, req, outputs):
    xp, x, w = ctx.xp, inputs[0], inputs[1]
    lib = _onednn_ready(xp, inputs[:2])
    y = None
    if lib is not None and req[0] is not OpReqType.NULL:
        _, stride, dilate, pad = convolution.conv_geometry("Convolution", attrs, 4)
        y = _onednn.conv_forward(lib, x, w, stride, dilate, pad, 1, threads_for(xp),
                                 _direct(outputs[0], req[0]), blocked=BLOCK)
    if y is None:
        _through_plain(convolution._forward, attrs, ctx, inputs, req, outputs, {0})
        return
    if not attrs.no_bias:
        y += inputs[2].reshape(1, -1, 1, 1, BLOCK)
    assign(outputs[0], req[0], y)


def _conv_backward(attrs, ctx, inputs, req, outputs):
    xp, (dy, x, w) = ctx.xp, inputs[:3]
    wants_dx, wants_dw = (r is not OpReqType.NULL for r in req[:2])
    lib = _onednn_ready(xp, inputs[:3])
    grads = None
    if lib is not None:
        grads = _onednn_grads(lib, attrs, dy, x, w, threads_for(xp), wants_dx, wants_dw,
                              _direct(outputs[0], req[0]), _direct(outputs[1], req[1]))
    if grads is None:
        _through_plain(convolution._backward, attrs, ctx, inputs, req, outputs, {0, 1})
        return
    assign(outputs[0], req[0], grads[0])
    assign(outputs[1], req[1], grads[1])
    if not attrs.no_bias and req[2] is not OpReqType.NULL:
        assign(outputs[2], req[2], dy.sum(axis=(0, 2, 3)).reshape(-1))


def _onednn_grads(lib, attrs, dy, x, w, threads, wants_dx, wants_dw, dx_out, dw_out):
    """``(dx, dw)`` through oneDNN, the one not wanted None; None when oneDNN lacks a
    kernel."""
    if not (wants_dx or wants_dw):
        return None, None
    _, stride, dilate, pad = convolution.conv_geometry("Convolution", attrs, 4)
    geometry = (stride, dilate, pad, 1, threads)
    if wants_dx and wants_dw:
        return _onednn.conv_grads(lib, dy, x, w, *geometry, dx_out, dw_out, blocked=BLOCK)
    if wants_dx:
        dx = _onednn.conv_grad_data(lib, dy, w, _plain_shape(x.shape), *geometry, dx_out,
                                    blocked=BLOCK)
        return None if dx is None else (dx, None)
    dw = _onednn.conv_grad_weight(lib, x, dy, w.shape, *geometry, dw_out, blocked=BLOCK)
    return None if dw is None else (None, dw)


def _conv_sample(draw):
    d = Draw(draw)
    kernel = d.shape(2, 1, 3)
    stride, pad = d.shape(2, 1, 2), d.shape(2, 0, 1)
    size = tuple(d.int(k, 4) for k in kernel)
    no_bias = d.bool("no_bias")
    params = {"kernel": kernel, "stride": stride, "pad": pad, "num_filter": BLOCK,
              "no_bias": no_bias}
    x = d.uniform((1, BLOCK, *size))
    inputs = [to_blocked_array(np, x), d.uniform((BLOCK, BLOCK, *kernel))]
    if not no_bias:
        inputs.append(d.uniform((BLOCK,)))
    return Case(inputs, params)


def _conv_reference(params, x, w, b=None):
    return to_blocked_array(np, convolution._reference(params, to_plain_array(np, x), w, b))


# -- batch normalization ---------------------------------------------------------------------
def _bn_infer_shape(attrs, ins, outs):
    if attrs.axis not in (1, -3):  # the channels of the 4-D data the layout holds
        raise ShapeError(f"operator '_BatchNorm_NCHW16c' normalizes over the channels "
                         f"(axis 1), got axis={attrs.axis}")
    return _infer_through_plain(batch_norm._infer_shape, attrs, ins, outs)


def _scale(attrs, gamma):
    return np.ones_like(gamma) if attrs.fix_gamma else gamma


def _bn_forward(attrs, ctx, inputs, req, outputs):
    xp, (x, gamma, beta, moving_mean, moving_var) = ctx.xp, inputs
    lib = _onednn_ready(xp, inputs)
    batch_stats = batch_norm._uses_batch_stats(attrs, ctx)
    result = None
    if lib is not None:
        given = {} if batch_stats else {"mean": moving_mean, "variance": moving_var}
        result = _onednn.batch_norm_forward(lib, x, _scale(attrs, gamma), beta, attrs.eps,
                                            threads_for(xp), _direct(outputs[0], req[0]),
                                            **given)
    if result is None:
        _through_plain(batch_norm._forward, attrs, ctx, inputs, req, outputs, {0})
        return
    y, mean, var = result
    if batch_stats:
        batch_norm._follow_batch(attrs, moving_mean, moving_var, mean, var)
    assign(outputs[0], req[0], y)
    assign(outputs[1], req[1], mean)
    assign(outputs[2], req[2], 1 / np.sqrt(var + np.float32(attrs.eps)))  # as BatchNorm


def _bn_backward(attrs, ctx, inputs, req, outputs):
    # reads the head gradient(s), the five inputs, then the mean and var outputs: not the
    # normalized output, which the layer after (a ReLU) may overwrite in place
    xp, dy = ctx.xp, inputs[0]
    x, gamma, _, moving_mean, moving_var = inputs[-7:-2]
    mean, invstd = inputs[-2:]
    lib = _onednn_ready(xp, [dy, x, gamma, mean, invstd])
    result = None
    if lib is not None:
        batch_stats = batch_norm._uses_batch_stats(attrs, ctx)
        if batch_stats:  # the forward pass kept 1 / sqrt(var + eps)
            var = 1 / (invstd * invstd) - np.float32(attrs.eps)
        else:
            mean, var = moving_mean, moving_var
        result = _onednn.batch_norm_backward(
            lib, dy, x, _scale(attrs, gamma), mean, var, attrs.eps, not batch_stats,
            threads_for(xp), _direct(outputs[0], req[0]))
    if result is None:  # BatchNorm's backward reads its output too: not here
        grads = 3 if attrs.output_mean_var else 1
        _through_plain(batch_norm._backward, attrs, ctx, [*inputs[:-2], None, *inputs[-2:]],
                       req, outputs, {0, grads})
        return
    dx, dgamma, dbeta = result
    assign(outputs[0], req[0], dx)
    assign(outputs[1], req[1], 0 if attrs.fix_gamma else dgamma)
    assign(outputs[2], req[2], dbeta)


def _bn_sample(draw):
    d = Draw(draw)
    shape = (d.int(1, 2), BLOCK, d.int(1, 3), d.int(1, 3))
    params = {"fix_gamma": d.bool("fix_gamma"), "use_global_stats": d.bool("use_global_stats"),
              "output_mean_var": d.bool("output_mean_var"),
              "eps": d.float(1e-3, 0.1, "eps"), "momentum": d.float(0.0, 1.0, "momentum")}
    inputs = [to_blocked_array(np, d.uniform(shape, -2, 2)), d.uniform((BLOCK,), 0.5, 1.5),
              d.uniform((BLOCK,)), d.uniform((BLOCK,)), d.uniform((BLOCK,), 0.5, 2.0)]
    return Case(inputs, params)


def _bn_reference(params, x, *rest):
    y, mean, invstd = batch_norm._reference(params, to_plain_array(np, x), *rest)
    return [to_blocked_array(np, y), mean, invstd]


# -- the operators -----------------------------------------------------------------------------
ToBlocked = Op(
    "_NCHW_to_NCHW16c",
    description="""4-D NCHW data (channels a multiple of 16) as NCHW16c: shape
``(N, C/16, H, W, 16)``, element ``[n, c // 16, h, w, c % 16]`` of the result
``data[n, c, h, w]``.""",
    num_inputs=1,
    input_names=["data"],
    infer_shape=_infer_converter(True),
    compute={XP: _converter(True)},
    gradient=Gradient("_NCHW16c_to_NCHW", uses=("out_grad",)),
    domain=Domain(_converter_sample(True), _converter_reference(True)),
)

ToPlain = Op(
    "_NCHW16c_to_NCHW",
    description="""NCHW16c data ``(N, C/16, H, W, 16)`` back in NCHW: shape ``(N, C, H, W)``.""",
    num_inputs=1,
    input_names=["data"],
    infer_shape=_infer_converter(False),
    compute={XP: _converter(False)},
    gradient=Gradient("_NCHW_to_NCHW16c", uses=("out_grad",)),
    domain=Domain(_converter_sample(False), _converter_reference(False)),
)

ConvolutionNCHW16c = Op(
    "_Convolution_NCHW16c",
    description="""``Convolution`` (2-D, one group) of NCHW16c ``data``, giving NCHW16c; the
``weight`` ``(num_filter, C, kh, kw)`` and ``bias`` are plain, and both channel counts are
multiples of 16.""",
    params=convolution.ConvolutionParam,
    num_inputs=lambda a: 2 if a.no_bias else 3,
    input_names=convolution._input_names,
    output_names=["output"],
    infer_shape=_conv_infer_shape,
    compute={XP: _conv_forward},
    gradient=Gradient("_backward_Convolution_NCHW16c", uses=("out_grad", "in_data")),
    domain=Domain(_conv_sample, _conv_reference),
)

BackwardConvolutionNCHW16c = Op(
    "_backward_Convolution_NCHW16c",
    params=convolution.ConvolutionParam,
    num_inputs=lambda a: 3 if a.no_bias else 4,
    num_outputs=lambda a: 2 if a.no_bias else 3,
    compute={XP: _conv_backward},
    is_backward=True,
    forward_op="_Convolution_NCHW16c",
)

BatchNormNCHW16c = Op(
    "_BatchNorm_NCHW16c",
    description="""``BatchNorm`` over the channels of NCHW16c ``data``, giving NCHW16c; gamma,
beta, the moving statistics and the ``mean`` and ``var`` outputs are per channel, as
``BatchNorm``'s.""",
    params=batch_norm.BatchNormParam,
    num_inputs=5,
    num_outputs=3,
    num_visible_outputs=lambda a: 3 if a.output_mean_var else 1,
    input_names=batch_norm._INPUTS,
    output_names=batch_norm._OUTPUTS,
    mutate_inputs=[3, 4],
    infer_shape=_bn_infer_shape,
    infer_type=batch_norm._infer_type,
    compute={XP: _bn_forward},
    gradient=Gradient("_backward_BatchNorm_NCHW16c", uses=("out_grad", "in_data", "out_data"),
                      out_data=(1, 2)),
    domain=Domain(_bn_sample, _bn_reference, differentiable=(0, 1, 2)),
)

BackwardBatchNormNCHW16c = Op(
    "_backward_BatchNorm_NCHW16c",
    params=batch_norm.BatchNormParam,
    num_inputs=lambda a: (3 if a.output_mean_var else 1) + 7,
    num_outputs=3,
    compute={XP: _bn_backward},
    is_backward=True,
    forward_op="_BatchNorm_NCHW16c",
)

OPS = [ToBlocked, ToPlain, ConvolutionNCHW16c, BackwardConvolutionNCHW16c, BatchNormNCHW16c,
       BackwardBatchNormNCHW16c]
