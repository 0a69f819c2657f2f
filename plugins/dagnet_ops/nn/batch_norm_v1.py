"""``BatchNorm_v1`` (MXNet's deprecated ``batch_norm_v1.cc``): batch normalization over
axis 1 with moving statistics as auxiliary states.

It differs from ``BatchNorm`` in what MXNet's old operator did: the channel axis is
always 1 (no ``axis``), there is no float16 special case, and the hidden ``var`` output
is the variance itself (``BatchNorm``'s is ``1 / sqrt(var + eps)``).  In training,
unless ``use_global_stats``, each channel is normalized with the batch mean and biased
variance and the moving statistics follow (``moving = moving * momentum + batch * (1 -
momentum)``, in the forward pass; MXNet's kernel does it in the backward pass, so both
agree after a training step); otherwise the moving statistics normalize and are the
``mean``/``var`` outputs.  ``fix_gamma`` uses gamma = 1 (MXNet also writes ones into the
gamma array; dagnet leaves the input alone) and gives gamma a zero gradient.
"""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, assign

from .._draw import Draw
from ._common import set_shape

__all__ = ["OPS"]

_NAME = "BatchNorm_v1"
_INPUTS = ["data", "gamma", "beta", "moving_mean", "moving_var"]
_OUTPUTS = ["output", "mean", "var"]


class BatchNormV1Param(Params):
    eps = Field(float, 1e-3, "added to the variance before the square root", low=0.0)
    momentum = Field(float, 0.9, "moving = moving * momentum + batch * (1 - momentum)")
    fix_gamma = Field(bool, True, "use gamma = 1 (and give it no gradient)")
    use_global_stats = Field(bool, False, "normalize with the moving statistics even in training")
    output_mean_var = Field(bool, False, "also output the mean and the variance")


def _infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    set_shape(ins, 0, outs[0], _NAME, _INPUTS)
    data = ins[0]
    if data is not None and len(data) < 2:
        raise ShapeError(f"operator {_NAME!r}: data must have a channel axis 1, got shape "
                         f"{tuple(data)}")
    for shape in ins[1:] + outs[1:]:
        if shape is not None and len(shape) != 1:
            raise ShapeError(f"operator {_NAME!r}: gamma, beta, the moving statistics, mean and "
                             f"var hold one value per channel, got shape {tuple(shape)}")
    channels = (data[1],) if data is not None else None
    if data is not None:
        set_shape(outs, 0, data, _NAME, _OUTPUTS, "output")
    for shape in ins[1:] + outs[1:]:
        if channels is None and shape is not None:
            channels = tuple(shape)
    for i in range(1, 5):
        set_shape(ins, i, channels, _NAME, _INPUTS)
    for i in range(1, 3):
        set_shape(outs, i, channels, _NAME, _OUTPUTS, "output")
    return ins, outs


def _per_channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _axes(ndim):
    return (0,) + tuple(range(2, ndim))


def _batch_stats(attrs, ctx):
    return ctx.is_train and not attrs.use_global_stats


def _forward(attrs, ctx, inputs, req, outputs):
    x, gamma, beta, moving_mean, moving_var = inputs
    axes = _axes(x.ndim)
    if _batch_stats(attrs, ctx):
        mean = x.mean(axis=axes)
        var = ((x - _per_channel(mean, x.ndim)) ** 2).mean(axis=axes)
        moving_mean[...] = moving_mean * attrs.momentum + mean * (1 - attrs.momentum)
        moving_var[...] = moving_var * attrs.momentum + var * (1 - attrs.momentum)
    else:
        mean, var = moving_mean.copy(), moving_var.copy()
    slope = 1 if attrs.fix_gamma else _per_channel(gamma, x.ndim)
    normalized = (x - _per_channel(mean, x.ndim)) / ctx.xp.sqrt(_per_channel(var, x.ndim)
                                                                + attrs.eps)
    assign(outputs[0], req[0], (normalized * slope + _per_channel(beta, x.ndim)).astype(x.dtype))
    assign(outputs[1], req[1], mean)
    assign(outputs[2], req[2], var)


def _backward(attrs, ctx, inputs, req, outputs):
    dy = inputs[0]
    x, gamma = inputs[-8], inputs[-7]
    mean, var = inputs[-2], inputs[-1]
    ndim = x.ndim
    axes = _axes(ndim)
    invstd = 1 / ctx.xp.sqrt(var + attrs.eps)
    xhat = (x - _per_channel(mean, ndim)) * _per_channel(invstd, ndim)
    slope = invstd if attrs.fix_gamma else invstd * gamma
    dbeta = dy.sum(axis=axes)
    dgamma = (dy * xhat).sum(axis=axes)
    if _batch_stats(attrs, ctx):
        count = x.size // x.shape[1]
        dx = _per_channel(slope, ndim) * (dy - _per_channel(dbeta / count, ndim)
                                          - xhat * _per_channel(dgamma / count, ndim))
    else:  # the statistics are constants
        dx = dy * _per_channel(slope, ndim)
    assign(outputs[0], req[0], dx.astype(x.dtype))
    assign(outputs[1], req[1], 0 if attrs.fix_gamma else dgamma)
    assign(outputs[2], req[2], dbeta)


def _sample(draw):
    d = Draw(draw)
    shape = d.shape(d.int(2, 4), 1, 3)
    c = shape[1]
    params = {"fix_gamma": d.bool("fix_gamma"), "use_global_stats": d.bool("use_global_stats"),
              "output_mean_var": d.bool("output_mean_var"), "eps": d.float(1e-3, 0.1, "eps"),
              "momentum": d.float(0.0, 1.0, "momentum")}
    inputs = [d.uniform(shape, -2, 2), d.uniform((c,), 0.5, 1.5), d.uniform((c,)),
              d.uniform((c,)), d.uniform((c,), 0.5, 2.0)]
    return Case(inputs, params)


def _reference(params, x, gamma, beta, moving_mean, moving_var):
    """Inference mode (the suite runs operators with is_train False): the moving statistics."""
    attrs = BatchNormV1Param.parse(_NAME, params)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    g = np.ones_like(gamma) if attrs.fix_gamma else gamma
    y = (x - moving_mean.reshape(shape)) / np.sqrt(moving_var.reshape(shape) + attrs.eps) \
        * g.reshape(shape) + beta.reshape(shape)
    return [y, moving_mean, moving_var]


OPS = [
    Op(_NAME, description=__doc__.split("\n\n", 1)[1].strip(), params=BatchNormV1Param,
       num_inputs=5, num_outputs=3,
       num_visible_outputs=lambda a: 3 if a.output_mean_var else 1,
       input_names=_INPUTS, output_names=_OUTPUTS, mutate_inputs=[3, 4],
       infer_shape=_infer_shape, compute={XP: _forward},
       gradient=Gradient(f"_backward_{_NAME}", uses=("out_grad", "in_data", "out_data")),
       domain=Domain(_sample, _reference, differentiable=(0, 1, 2))),
    Op(f"_backward_{_NAME}", params=BatchNormV1Param,
       num_inputs=lambda a: (3 if a.output_mean_var else 1) + 8, num_outputs=3,
       compute={XP: _backward}, is_backward=True, forward_op=_NAME),
]
