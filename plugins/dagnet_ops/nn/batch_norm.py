"""``BatchNorm``: batch normalization with moving statistics as auxiliary states."""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    Op,
    Params,
    assign,
    merge_dtype,
)

from .._draw import Draw
from ._common import set_shape

__all__ = ["OPS"]

_INPUTS = ["data", "gamma", "beta", "moving_mean", "moving_var"]
_OUTPUTS = ["output", "mean", "var"]


class BatchNormParam(Params):
    eps = Field(float, 1e-3, "added to the variance before the square root", low=0.0)
    momentum = Field(float, 0.9, "moving = moving * momentum + batch * (1 - momentum)")
    fix_gamma = Field(bool, True, "use gamma = 1 (and give it no gradient)")
    use_global_stats = Field(bool, False, "normalize with the moving statistics even in training")
    output_mean_var = Field(bool, False, "also output the mean and the inverse standard deviation")
    axis = Field(int, 1, "the channel axis")
    cudnn_off = Field(bool, False, "accepted for MXNet compatibility")
    min_calib_range = Field(float, None, "accepted for MXNet compatibility (quantization)")
    max_calib_range = Field(float, None, "accepted for MXNet compatibility (quantization)")


def _channel_axis(attrs, ndim, op="BatchNorm"):
    if not -ndim <= attrs.axis < ndim:
        raise ShapeError(f"operator {op!r}: axis={attrs.axis} is out of range for {ndim}-D data")
    return attrs.axis % ndim


def _infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    set_shape(ins, 0, outs[0], "BatchNorm", _INPUTS)
    data = ins[0]
    channels = None
    for shape in ins[1:] + outs[1:]:
        if shape is not None and len(shape) != 1:
            raise ShapeError(f"operator 'BatchNorm': gamma, beta, the moving statistics, mean "
                             f"and var hold one value per channel, got shape {tuple(shape)}")
    if data is not None:
        channels = (data[_channel_axis(attrs, len(data))],)
        set_shape(outs, 0, data, "BatchNorm", _OUTPUTS, "output")
    for shape in ins[1:] + outs[1:]:
        if channels is None and shape is not None:
            channels = tuple(shape)
    for i in range(1, 5):
        set_shape(ins, i, channels, "BatchNorm", _INPUTS)
    for i in range(1, 3):
        set_shape(outs, i, channels, "BatchNorm", _OUTPUTS, "output")
    return ins, outs


def _infer_type(attrs, ins, outs):
    data = merge_dtype(ins[0], outs[0], "BatchNorm data and output")
    # As MXNet: half-precision data keeps its parameters and statistics in float32.
    param = np.dtype(np.float32) if data is not None and np.dtype(data) == np.float16 else data
    for t in ins[1:] + outs[1:]:
        param = merge_dtype(param, t, "BatchNorm parameters and statistics")
    return [data] + [param] * 4, [data, param, param]


def _broadcast(v, axis, ndim):
    return v.reshape((1,) * axis + (-1,) + (1,) * (ndim - axis - 1))


def _uses_batch_stats(attrs, ctx):
    return ctx.is_train and not attrs.use_global_stats


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    x, gamma, beta, moving_mean, moving_var = inputs
    axis = _channel_axis(attrs, x.ndim)
    reduce = tuple(i for i in range(x.ndim) if i != axis)
    if _uses_batch_stats(attrs, ctx):
        mean = x.mean(axis=reduce)
        var = ((x - _broadcast(mean, axis, x.ndim)) ** 2).mean(axis=reduce)
        # The moving averages follow each training batch (MXNet's CPU kernel applies the same
        # update in its backward pass; cuDNN's, like this one, in the forward pass).
        moving_mean[...] = moving_mean * attrs.momentum + mean * (1 - attrs.momentum)
        moving_var[...] = moving_var * attrs.momentum + var * (1 - attrs.momentum)
    else:
        mean, var = moving_mean.astype(x.dtype), moving_var.astype(x.dtype)
    invstd = 1 / xp.sqrt(var + attrs.eps)
    scale = invstd if attrs.fix_gamma else invstd * gamma
    y = (x - _broadcast(mean, axis, x.ndim)) * _broadcast(scale, axis, x.ndim) \
        + _broadcast(beta, axis, x.ndim)
    assign(outputs[0], req[0], y)
    assign(outputs[1], req[1], mean)
    assign(outputs[2], req[2], invstd)  # as MXNet, the "var" output is 1 / sqrt(var + eps)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    dy = inputs[0]
    x, gamma, _, moving_mean, moving_var = inputs[-8:-3]
    _, mean, invstd = inputs[-3:]
    axis = _channel_axis(attrs, x.ndim)
    reduce = tuple(i for i in range(x.ndim) if i != axis)
    if not _uses_batch_stats(attrs, ctx):
        mean = moving_mean.astype(x.dtype)
        invstd = 1 / xp.sqrt(moving_var.astype(x.dtype) + attrs.eps)
    xhat = (x - _broadcast(mean, axis, x.ndim)) * _broadcast(invstd, axis, x.ndim)
    dbeta = dy.sum(axis=reduce)
    dgamma = (dy * xhat).sum(axis=reduce)
    scale = invstd if attrs.fix_gamma else invstd * gamma
    if _uses_batch_stats(attrs, ctx):
        count = x.size // x.shape[axis]
        dx = _broadcast(scale, axis, x.ndim) * (dy - _broadcast(dbeta / count, axis, x.ndim)
                                                 - xhat * _broadcast(dgamma / count, axis, x.ndim))
    else:
        dx = dy * _broadcast(scale, axis, x.ndim)
    assign(outputs[0], req[0], dx)
    assign(outputs[1], req[1], 0 if attrs.fix_gamma else dgamma)
    assign(outputs[2], req[2], dbeta)


def _sample(draw):
    d = Draw(draw)
    ndim = d.int(2, 4)
    shape = d.shape(ndim, 1, 3)
    axis = d.choice([1, -1] if ndim > 2 else [1], "axis")
    c = shape[axis]
    params = {"fix_gamma": d.bool("fix_gamma"), "use_global_stats": d.bool("use_global_stats"),
              "output_mean_var": d.bool("output_mean_var"), "axis": axis,
              "eps": d.float(1e-3, 0.1, "eps"), "momentum": d.float(0.0, 1.0, "momentum")}
    inputs = [d.uniform(shape, -2, 2), d.uniform((c,), 0.5, 1.5), d.uniform((c,)), d.uniform((c,)),
              d.uniform((c,), 0.5, 2.0)]
    return Case(inputs, params)


def _reference(params, x, gamma, beta, moving_mean, moving_var):
    """Inference mode (the suite runs operators with is_train False): the moving statistics."""
    attrs = BatchNormParam.parse("BatchNorm", params)
    axis = attrs.axis % x.ndim
    shape = [1] * x.ndim
    shape[axis] = -1
    g = np.ones_like(gamma) if attrs.fix_gamma else gamma
    invstd = 1 / np.sqrt(moving_var + attrs.eps)
    y = (x - moving_mean.reshape(shape)) * (g * invstd).reshape(shape) + beta.reshape(shape)
    return [y, moving_mean, invstd]


BatchNorm = Op(
    "BatchNorm",
    description="""Batch normalization (Ioffe & Szegedy, 2015) over the channel ``axis``.

In training (and unless ``use_global_stats``), each channel is normalized with
the batch mean and biased variance, ``out = (x - mean) / sqrt(var + eps) * gamma + beta``,
and the auxiliary states are updated in place:
``moving_mean = moving_mean * momentum + mean * (1 - momentum)`` (likewise
``moving_var``).  Otherwise the moving statistics normalize.  ``fix_gamma``
uses ``gamma = 1`` and gives gamma a zero gradient (MXNet also overwrites the
gamma array with ones; dagnet leaves it alone).  The hidden outputs ``mean`` and
``var`` (visible with ``output_mean_var``) hold the statistics used, ``var`` as
``1 / sqrt(var + eps)`` as in MXNet.  Float16 data keeps float32 parameters.
Dagnet updates the moving statistics in the forward pass; MXNet's CPU kernel
does it in the backward pass: after a forward and backward step both agree.""",
    params=BatchNormParam,
    num_inputs=5,
    num_outputs=3,
    num_visible_outputs=lambda a: 3 if a.output_mean_var else 1,
    input_names=_INPUTS,
    output_names=_OUTPUTS,
    mutate_inputs=[3, 4],
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    compute={XP: _forward},
    gradient=Gradient("_backward_BatchNorm", uses=("out_grad", "in_data", "out_data")),
    domain=Domain(_sample, _reference, differentiable=(0, 1, 2)),
)

BackwardBatchNorm = Op(
    "_backward_BatchNorm",
    params=BatchNormParam,
    num_inputs=lambda a: (3 if a.output_mean_var else 1) + 8,
    num_outputs=3,
    compute={XP: _backward},
    is_backward=True,
    forward_op="BatchNorm",
)

OPS = [BatchNorm, BackwardBatchNorm]
