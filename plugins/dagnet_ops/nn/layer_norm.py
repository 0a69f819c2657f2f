"""``LayerNorm``: each sample standardized over one axis, then scaled and shifted per
element of that axis (Ba et al., 2016; MXNet's ``layer_norm.cc``)."""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, assign

from .._draw import Draw
from ._common import set_shape

__all__ = ["OPS"]

_INPUTS = ["data", "gamma", "beta"]
_OUTPUTS = ["output", "mean", "std"]


class LayerNormParam(Params):
    axis = Field(int, -1, "the axis normalized over (and that gamma and beta run along)")
    eps = Field(float, 1e-5, "added to the variance before the square root", low=0.0)
    output_mean_var = Field(bool, False, "also output the mean and the standard deviation")


def _axis(attrs, ndim):
    if not -ndim <= attrs.axis < ndim:
        raise ShapeError(f"operator 'LayerNorm': axis={attrs.axis} is out of range for "
                         f"{ndim}-D data")
    return attrs.axis % ndim


def _infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    set_shape(ins, 0, outs[0], "LayerNorm", _INPUTS)
    data = ins[0]
    if data is not None:
        axis = _axis(attrs, len(data))
        set_shape(outs, 0, data, "LayerNorm", _OUTPUTS, "output")
        reduced = tuple(1 if i == axis else d for i, d in enumerate(data))
        set_shape(outs, 1, reduced, "LayerNorm", _OUTPUTS, "output")
        set_shape(outs, 2, reduced, "LayerNorm", _OUTPUTS, "output")
        set_shape(ins, 1, (data[axis],), "LayerNorm", _INPUTS)
        set_shape(ins, 2, (data[axis],), "LayerNorm", _INPUTS)
    return ins, outs


def _along(v, axis, ndim):
    return v.reshape((1,) * axis + (-1,) + (1,) * (ndim - axis - 1))


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    x, gamma, beta = inputs
    axis = _axis(attrs, x.ndim)
    mean = x.mean(axis=axis, keepdims=True)
    std = xp.sqrt(((x - mean) ** 2).mean(axis=axis, keepdims=True) + attrs.eps)
    y = (x - mean) / std * _along(gamma, axis, x.ndim) + _along(beta, axis, x.ndim)
    assign(outputs[0], req[0], y)
    assign(outputs[1], req[1], mean)
    assign(outputs[2], req[2], std)


def _backward(attrs, ctx, inputs, req, outputs):
    dy = inputs[0]
    x, gamma = inputs[-6], inputs[-5]
    mean, std = inputs[-2], inputs[-1]
    axis = _axis(attrs, x.ndim)
    others = tuple(i for i in range(x.ndim) if i != axis)
    xhat = (x - mean) / std
    dxhat = dy * _along(gamma, axis, x.ndim)
    dx = (dxhat - dxhat.mean(axis=axis, keepdims=True)
          - xhat * (dxhat * xhat).mean(axis=axis, keepdims=True)) / std
    if attrs.output_mean_var:  # the visible statistics have head gradients of their own
        n = x.shape[axis]
        dx = dx + inputs[1] / n + inputs[2] * xhat / n
    assign(outputs[0], req[0], dx)
    assign(outputs[1], req[1], (dy * xhat).sum(axis=others))
    assign(outputs[2], req[2], dy.sum(axis=others))


def _sample(draw):
    d = Draw(draw)
    ndim = d.int(1, 3)
    shape = d.shape(ndim, 2, 4)
    axis = d.choice(list(range(-ndim, ndim)), "axis")
    c = shape[axis]
    params = {"axis": axis, "eps": d.float(1e-3, 0.1, "eps"),
              "output_mean_var": d.bool("output_mean_var")}
    return Case([d.uniform(shape, -2, 2), d.uniform((c,), 0.5, 1.5), d.uniform((c,))], params)


def _reference(params, x, gamma, beta):
    attrs = LayerNormParam.parse("LayerNorm", params)
    axis = attrs.axis % x.ndim
    shape = [1] * x.ndim
    shape[axis] = -1
    mean = x.mean(axis=axis, keepdims=True)
    std = np.sqrt(x.var(axis=axis, keepdims=True) + attrs.eps)
    return [(x - mean) / std * gamma.reshape(shape) + beta.reshape(shape), mean, std]


LayerNorm = Op(
    "LayerNorm",
    description="""Layer normalization over ``axis`` (default the last):
``out = (x - mean) / sqrt(var + eps) * gamma + beta`` with the mean and biased
variance of each sample along ``axis``, ``gamma`` and ``beta`` of that axis' length.
The hidden outputs ``mean`` and ``std`` (visible with ``output_mean_var``) keep the
statistics, with ``axis`` of length 1.""",
    params=LayerNormParam,
    num_inputs=3,
    num_outputs=3,
    num_visible_outputs=lambda a: 3 if a.output_mean_var else 1,
    input_names=_INPUTS,
    output_names=_OUTPUTS,
    infer_shape=_infer_shape,
    compute={XP: _forward},
    gradient=Gradient("_backward_LayerNorm", uses=("out_grad", "in_data", "out_data")),
    domain=Domain(_sample, _reference, differentiable=(0, 1, 2)),
)

BackwardLayerNorm = Op(
    "_backward_LayerNorm",
    params=LayerNormParam,
    num_inputs=lambda a: (3 if a.output_mean_var else 1) + 6,
    num_outputs=3,
    compute={XP: _backward},
    is_backward=True,
    forward_op="LayerNorm",
)

OPS = [LayerNorm, BackwardLayerNorm]
