"""Normalization layers without running statistics (MXNet's ``instance_norm.cc``,
``group_norm.cc``, ``l2_normalization.cc``): ``InstanceNorm``, ``GroupNorm`` and
``L2Normalization``.

InstanceNorm and GroupNorm share one kernel: ``data`` viewed as (N, G, rest) is
standardized over ``rest`` (``x_hat = (x - mean) / sqrt(var + eps)``) and scaled by
``gamma`` and shifted by ``beta`` (per channel for InstanceNorm, G = C; per group
for GroupNorm, as MXNet 1.x).  The gradient is the standard one,
``dx = (dxh - mean(dxh) - x_hat mean(dxh x_hat)) / std`` with ``dxh = dy gamma``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, assign, merge_shape

from .._draw import Draw

__all__ = ["OPS"]


# -- the shared group standardization --------------------------------------------------------
def _grouped(x: Any, groups: int) -> Any:
    return x.reshape(x.shape[0], groups, -1)


def _standardize(xp: Any, x: Any, groups: int, eps: float) -> tuple[Any, Any, Any]:
    """(x_hat, mean, std) of ``x`` viewed as (N, groups, rest), stats over rest."""
    v = _grouped(x, groups)
    mean = v.mean(axis=2, keepdims=True)
    std = xp.sqrt(((v - mean) ** 2).mean(axis=2, keepdims=True) + eps)
    return (v - mean) / std, mean, std


def _norm_forward(xp, x, gamma, beta, groups, eps):
    """InstanceNorm (groups = channels) and GroupNorm: gamma and beta hold one value per
    group."""
    x_hat, mean, std = _standardize(xp, x, groups, eps)
    out = x_hat * gamma.reshape(1, groups, 1) + beta.reshape(1, groups, 1)
    return out.reshape(x.shape), mean, std


def _norm_backward(xp, g, x, gamma, groups, eps):
    x_hat, _mean, std = _standardize(xp, x, groups, eps)
    gv = _grouped(g, groups)
    dxh = gv * gamma.reshape(1, groups, 1)
    dx = (dxh - dxh.mean(axis=2, keepdims=True)
          - x_hat * (dxh * x_hat).mean(axis=2, keepdims=True)) / std
    return dx.reshape(x.shape), (gv * x_hat).sum(axis=(0, 2)), gv.sum(axis=(0, 2))


def _params_infer(op: str, count: Any):
    """data (at least 2-D) fixes gamma and beta: shape (count(attrs, data),)."""
    def infer(attrs, ins, outs):
        data = merge_shape(ins[0], outs[0] if outs else None, f"{op} data")
        if data is None:
            return ins, outs
        if len(data) < 2:
            raise ShapeError(f"operator {op!r}: data needs at least 2 dimensions (N, C, ...), "
                             f"got {tuple(data)}")
        n = count(attrs, data)
        gamma = merge_shape(ins[1], (n,), f"{op} gamma")
        beta = merge_shape(ins[2], (n,), f"{op} beta")
        rest = [(data[0], attrs.num_groups)] * (len(outs) - 1) if len(outs) > 1 else []
        return [data, gamma, beta], [data, *rest]
    return infer


# -- InstanceNorm ---------------------------------------------------------------------------
class InstanceNormParam(Params):
    eps = Field(float, 1e-3, "An `epsilon` parameter to prevent division by 0.")


def _instance(attrs, ctx, inputs, req, outputs):
    x, gamma, beta = inputs
    out, _, _ = _norm_forward(ctx.xp, x, gamma, beta, x.shape[1], attrs.eps)
    assign(outputs[0], req[0], out)


def _instance_back(attrs, ctx, inputs, req, outputs):
    g, x, gamma, _beta = inputs
    for out, r, value in zip(outputs, req, _norm_backward(ctx.xp, g, x, gamma, x.shape[1],
                                                         attrs.eps)):
        assign(out, r, value)


def _instance_case(draw):
    d = Draw(draw)
    shape = d.shape(d.int(2, 4), 1, 3)
    if int(np.prod(shape[2:])) < 2:
        shape = shape[:2] + (2,) * max(1, len(shape) - 2)
    c = shape[1]
    return Case([d.uniform(shape, -2, 2), d.uniform((c,), 0.5, 1.5), d.uniform((c,), -1, 1)],
                {"eps": d.float(1e-3, 1e-1, "eps")})


def _np_instance(raw, x, gamma, beta):
    p = InstanceNormParam.parse("InstanceNorm", raw)
    axes = tuple(range(2, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return (x - mean) / np.sqrt(var + p.eps) * gamma.reshape(shape) + beta.reshape(shape)


# -- GroupNorm ------------------------------------------------------------------------------
class GroupNormParam(Params):
    num_groups = Field(int, 1, "Total number of groups.", low=1)
    eps = Field(float, 1e-5, "An `epsilon` parameter to prevent division by 0.")
    output_mean_var = Field(bool, False, "Output the mean and std calculated along the given "
                                         "axis.")


def _group_count(attrs: GroupNormParam, data: Any) -> int:
    if data[1] % attrs.num_groups:
        raise ShapeError(f"operator 'GroupNorm': {data[1]} channels cannot be split into "
                         f"num_groups={attrs.num_groups} equal groups")
    return attrs.num_groups


def _group(attrs, ctx, inputs, req, outputs):
    x, gamma, beta = inputs
    out, mean, std = _norm_forward(ctx.xp, x, gamma, beta, attrs.num_groups, attrs.eps)
    assign(outputs[0], req[0], out)
    assign(outputs[1], req[1], mean.reshape(outputs[1].shape))
    assign(outputs[2], req[2], std.reshape(outputs[2].shape))


def _group_back(attrs, ctx, inputs, req, outputs):
    n_out = 3 if attrs.output_mean_var else 1
    g = inputs[0]
    x, gamma = inputs[n_out], inputs[n_out + 1]
    for out, r, value in zip(outputs, req, _norm_backward(ctx.xp, g, x, gamma,
                                                         attrs.num_groups, attrs.eps)):
        assign(out, r, value)


def _group_case(draw):
    d = Draw(draw)
    groups = d.int(1, 2, "num_groups")
    shape = (d.int(1, 2), groups * d.int(1, 2), d.int(1, 3), d.int(2, 3))
    return Case([d.uniform(shape, -2, 2), d.uniform((groups,), 0.5, 1.5),
                 d.uniform((groups,), -1, 1)],
                {"num_groups": groups, "eps": d.float(1e-3, 1e-1, "eps")})


def _np_group(raw, x, gamma, beta):
    p = GroupNormParam.parse("GroupNorm", raw)
    v = x.reshape(x.shape[0], p.num_groups, -1)
    mean = v.mean(axis=2, keepdims=True)
    std = np.sqrt(v.var(axis=2, keepdims=True) + p.eps)
    out = ((v - mean) / std * gamma.reshape(1, -1, 1) + beta.reshape(1, -1, 1)).reshape(x.shape)
    return [out, mean.reshape(x.shape[0], -1), std.reshape(x.shape[0], -1)]


# -- L2Normalization ------------------------------------------------------------------------
class L2NormalizationParam(Params):
    eps = Field(float, 1e-10, "A small constant for numerical stability.")
    mode = Field(str, "instance", "Specify the dimension along which to compute L2 norm.",
                 choices=("channel", "instance", "spatial"))


def _l2_axes(mode: str, ndim: int) -> tuple[int, ...]:
    if mode == "instance":
        return tuple(range(1, ndim))
    if mode == "channel":
        return (1,)
    return tuple(range(2, ndim))


def _l2_infer(attrs, ins, outs):
    data = merge_shape(ins[0], outs[0], "L2Normalization data")
    if data is not None:
        least = 2 if attrs.mode == "instance" else 3
        if len(data) < least:
            raise ShapeError(f"operator 'L2Normalization': mode={attrs.mode!r} needs data of "
                             f"at least {least} dimensions, got {tuple(data)}")
    return [data], [data]


def _l2_norm(xp: Any, attrs: L2NormalizationParam, x: Any) -> Any:
    axes = _l2_axes(attrs.mode, x.ndim)
    return xp.sqrt((x * x).sum(axis=axes, keepdims=True) + attrs.eps)


def _l2(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    assign(outputs[0], req[0], x / _l2_norm(ctx.xp, attrs, x))


def _l2_back(attrs, ctx, inputs, req, outputs):
    g, x = inputs
    norm = _l2_norm(ctx.xp, attrs, x)
    y = x / norm
    axes = _l2_axes(attrs.mode, x.ndim)
    assign(outputs[0], req[0], (g - y * (g * y).sum(axis=axes, keepdims=True)) / norm)


def _l2_case(draw):
    d = Draw(draw)
    mode = d.choice(["instance", "channel", "spatial"], "mode")
    shape = d.shape(d.int(2 if mode == "instance" else 3, 4), 1, 3)
    return Case([d.away_from_zero(shape, 0.2, 1.5)], {"mode": mode})


def _np_l2(raw, x):
    p = L2NormalizationParam.parse("L2Normalization", raw)
    axes = _l2_axes(p.mode, x.ndim)
    return x / np.sqrt((x * x).sum(axis=axes, keepdims=True) + p.eps)


OPS = [
    Op("InstanceNorm", params=InstanceNormParam, num_inputs=3,
       input_names=["data", "gamma", "beta"],
       infer_shape=_params_infer("InstanceNorm", lambda attrs, data: data[1]),
       compute={XP: _instance}, gradient=Gradient("_backward_InstanceNorm", ("out_grad",
                                                                            "in_data")),
       domain=Domain(_instance_case, reference=_np_instance, grad_rtol=1e-3, grad_atol=1e-5),
       description="Instance normalization: each (sample, channel) slice of data (N, C, ...) "
                   "standardized over its spatial positions, "
                   "``out = (x - mean) / sqrt(var + eps) * gamma[c] + beta[c]`` with gamma and "
                   "beta of shape (C,).  Dtype = data's.  Gradient for data, gamma and beta."),
    Op("_backward_InstanceNorm", params=InstanceNormParam, num_inputs=4, num_outputs=3,
       compute={XP: _instance_back}, is_backward=True, forward_op="InstanceNorm"),
    Op("GroupNorm", params=GroupNormParam, num_inputs=3, input_names=["data", "gamma", "beta"],
       num_outputs=3, num_visible_outputs=lambda a: 3 if a.output_mean_var else 1,
       output_names=["output", "mean", "std"],
       infer_shape=_params_infer("GroupNorm", _group_count), compute={XP: _group},
       gradient=Gradient("_backward_GroupNorm", ("out_grad", "in_data")),
       domain=Domain(_group_case, reference=_np_group, grad_rtol=1e-3, grad_atol=1e-5),
       description="Group normalization: data (N, C, ...) with its channels in ``num_groups`` "
                   "groups, each (sample, group) standardized, "
                   "``out = (x - mean) / sqrt(var + eps) * gamma[g] + beta[g]`` with gamma and "
                   "beta of shape (num_groups,) (MXNet 1.x).  With output_mean_var the mean and "
                   "std (shape (N, num_groups)) are outputs too.  Gradient for data, gamma and "
                   "beta (the mean and std outputs pass none)."),
    Op("_backward_GroupNorm", params=GroupNormParam,
       num_inputs=lambda a: (3 if a.output_mean_var else 1) + 3, num_outputs=3,
       compute={XP: _group_back}, is_backward=True, forward_op="GroupNorm"),
    Op("L2Normalization", params=L2NormalizationParam, input_names=["data"],
       infer_shape=_l2_infer, compute={XP: _l2},
       gradient=Gradient("_backward_L2Normalization", ("out_grad", "in_data")),
       domain=Domain(_l2_case, reference=_np_l2),
       description="Scale data to unit L2 norm: ``out = x / sqrt(sum(x^2) + eps)``, the sum "
                   "over every axis but the first (mode='instance'), over axis 1 ('channel') "
                   "or over axes 2 and after ('spatial').  Dtype = data's.  Gradient "
                   "``(dy - y sum(dy y)) / norm``."),
    Op("_backward_L2Normalization", params=L2NormalizationParam, num_inputs=2,
       compute={XP: _l2_back}, is_backward=True, forward_op="L2Normalization"),
]
