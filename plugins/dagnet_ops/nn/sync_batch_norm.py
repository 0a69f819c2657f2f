"""``_contrib_SyncBatchNorm``: batch normalization whose batch statistics span ``ndev``
devices (MXNet's ``contrib/sync_batch_norm``, Zhang et al. 2018).

Each of the ``ndev`` calls that share a ``key`` holds one device's part of the
batch; they exchange per-channel sums through a process-wide rendezvous, so every
part is normalized with the mean and variance of the whole batch, and the data
gradient uses the whole batch's gradient sums.  ``gamma``/``beta`` gradients stay
per device (a kvstore sums them, as for any data-parallel parameter).  With
``ndev=1`` it is ``BatchNorm`` on axis 1.  The ``ndev`` calls must run at the same
time (one per device, as a data-parallel step issues them on an engine with a worker
per device); a call whose partners do not arrive within ``TIMEOUT`` seconds fails,
naming the key.
"""

from __future__ import annotations

import threading

import numpy as np

from dagnet import MXNetError, ShapeError
from dagnet.operator import (
    REQUIRED,
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

__all__ = ["OPS", "TIMEOUT"]

NAME = "_contrib_SyncBatchNorm"
_INPUTS = ["data", "gamma", "beta", "moving_mean", "moving_var"]
_OUTPUTS = ["output", "mean", "var"]
#: seconds a device's call waits for the other ``ndev - 1`` calls of its key
TIMEOUT = 60.0


class SyncBatchNormParam(Params):
    eps = Field(float, 1e-3, "added to the variance before the square root", low=0.0)
    momentum = Field(float, 0.9, "moving = moving * momentum + batch * (1 - momentum)")
    fix_gamma = Field(bool, True, "use gamma = 1 (and give it no gradient)")
    use_global_stats = Field(bool, False, "normalize with the moving statistics even in training")
    output_mean_var = Field(bool, False, "also output the batch mean and variance")
    ndev = Field(int, 1, "how many devices (calls) share the batch statistics", low=1)
    key = Field(str, REQUIRED, "the name the ndev calls of one layer share (Gluon: its prefix)")


class _Rendezvous:
    """Per key, rounds of ``ndev`` contributions: each caller gets the sum of its round."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._open: dict[str, dict] = {}

    def total(self, key: str, ndev: int, parts: tuple) -> tuple:
        if ndev == 1:
            return parts
        with self._cond:
            round_ = self._open.setdefault(key, {"parts": [], "total": None})
            round_["parts"].append(parts)
            if len(round_["parts"]) == ndev:
                round_["total"] = tuple(sum(p) for p in zip(*round_["parts"]))
                del self._open[key]
                self._cond.notify_all()
            elif not self._cond.wait_for(lambda: round_["total"] is not None, TIMEOUT):
                arrived = len(round_["parts"])
                self._open.pop(key, None)
                raise MXNetError(
                    f"operator {NAME!r}, key {key!r}: {arrived} of ndev={ndev} devices arrived "
                    f"within {TIMEOUT:g} s; the ndev calls of one layer must run at the same "
                    f"time (one per device), or set ndev to the number of calls")
            return round_["total"]


_RENDEZVOUS = _Rendezvous()


def _infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    set_shape(ins, 0, outs[0], NAME, _INPUTS)
    data, channels = ins[0], None
    if data is not None:
        if len(data) < 2:
            raise ShapeError(f"operator {NAME!r}, input 'data': expected (batch, channel, ...), "
                             f"got shape {tuple(data)}")
        channels = (data[1],)
        set_shape(outs, 0, data, NAME, _OUTPUTS, "output")
    for shape in ins[1:] + outs[1:]:
        if shape is not None and len(shape) != 1:
            raise ShapeError(f"operator {NAME!r}: gamma, beta, the moving statistics, mean and "
                             f"var hold one value per channel, got shape {tuple(shape)}")
        if channels is None and shape is not None:
            channels = tuple(shape)
    for i in range(1, 5):
        set_shape(ins, i, channels, NAME, _INPUTS)
    for i in range(1, 3):
        set_shape(outs, i, channels, NAME, _OUTPUTS, "output")
    return ins, outs


def _infer_type(attrs, ins, outs):
    data = merge_dtype(ins[0], outs[0], f"{NAME} data and output")
    param = np.dtype(np.float32) if data is not None and np.dtype(data) == np.float16 else data
    for t in ins[1:] + outs[1:]:
        param = merge_dtype(param, t, f"{NAME} parameters and statistics")
    return [data] + [param] * 4, [data, param, param]


def _axes(x):
    return (0,) + tuple(range(2, x.ndim))


def _per_channel(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _batch_stats(attrs, ctx):
    return ctx.is_train and not attrs.use_global_stats


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    x, gamma, beta, moving_mean, moving_var = inputs
    if _batch_stats(attrs, ctx):
        count = x.size // max(1, x.shape[1])
        total, n = _RENDEZVOUS.total(attrs.key + "/mean", attrs.ndev,
                                     (x.sum(axis=_axes(x), dtype=np.float64), count))
        mean = (total / max(n, 1)).astype(moving_mean.dtype)
        centered = x - _per_channel(mean, x.ndim).astype(x.dtype)
        (squares,) = _RENDEZVOUS.total(
            attrs.key + "/var", attrs.ndev,
            ((centered * centered).sum(axis=_axes(x), dtype=np.float64),))
        var = (squares / max(n, 1)).astype(moving_var.dtype)
        moving_mean[...] = moving_mean * attrs.momentum + mean * (1 - attrs.momentum)
        moving_var[...] = moving_var * attrs.momentum + var * (1 - attrs.momentum)
    else:
        mean, var = moving_mean.copy(), moving_var.copy()
        centered = x - _per_channel(mean, x.ndim).astype(x.dtype)
    invstd = 1 / xp.sqrt(var + attrs.eps)
    scale = invstd if attrs.fix_gamma else invstd * gamma
    y = centered * _per_channel(scale, x.ndim).astype(x.dtype) \
        + _per_channel(beta, x.ndim).astype(x.dtype)
    assign(outputs[0], req[0], y)
    assign(outputs[1], req[1], mean)
    assign(outputs[2], req[2], var)  # as MXNet's SyncBatchNorm: the variance itself


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    dy = inputs[0]
    x, gamma, _, moving_mean, moving_var = inputs[-8:-3]
    mean, var = inputs[-2:]
    batch = _batch_stats(attrs, ctx)
    if not batch:
        mean, var = moving_mean, moving_var
    invstd = 1 / xp.sqrt(var + attrs.eps)
    xhat = (x - _per_channel(mean, x.ndim).astype(x.dtype)) \
        * _per_channel(invstd, x.ndim).astype(x.dtype)
    dbeta = dy.sum(axis=_axes(x), dtype=np.float64)
    dgamma = (dy * xhat).sum(axis=_axes(x), dtype=np.float64)
    scale = invstd if attrs.fix_gamma else invstd * gamma
    if batch:
        count = x.size // max(1, x.shape[1])
        total_dy, total_dxhat, n = _RENDEZVOUS.total(attrs.key + "/grad", attrs.ndev,
                                                     (dbeta, dgamma, count))
        n = max(n, 1)
        dx = (dy - _per_channel(total_dy / n, x.ndim).astype(x.dtype)
              - xhat * _per_channel(total_dxhat / n, x.ndim).astype(x.dtype))
    else:
        dx = dy
    assign(outputs[0], req[0], dx * _per_channel(scale, x.ndim).astype(x.dtype))
    assign(outputs[1], req[1], 0 if attrs.fix_gamma else dgamma.astype(gamma.dtype))
    assign(outputs[2], req[2], dbeta.astype(gamma.dtype))


def _sample(draw):
    d = Draw(draw)
    shape = d.shape(d.int(2, 4), 1, 3)
    c = shape[1]
    params = {"fix_gamma": d.bool("fix_gamma"), "use_global_stats": d.bool("use_global_stats"),
              "output_mean_var": d.bool("output_mean_var"), "key": "conformance",
              "eps": d.float(1e-3, 0.1, "eps"), "momentum": d.float(0.0, 1.0, "momentum")}
    inputs = [d.uniform(shape, -2, 2), d.uniform((c,), 0.5, 1.5), d.uniform((c,)),
              d.uniform((c,)), d.uniform((c,), 0.5, 2.0)]
    return Case(inputs, params)


def _reference(params, x, gamma, beta, moving_mean, moving_var):
    """Inference mode (the suite runs operators with is_train False): the moving statistics."""
    attrs = SyncBatchNormParam.parse(NAME, params)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    g = np.ones_like(gamma) if attrs.fix_gamma else gamma
    y = (x - moving_mean.reshape(shape)) * (g / np.sqrt(moving_var + attrs.eps)).reshape(shape) \
        + beta.reshape(shape)
    return [y, moving_mean, moving_var]


SyncBatchNorm = Op(
    NAME,
    description="""Batch normalization over axis 1 with the statistics of a batch split over
``ndev`` devices (the calls sharing ``key``).

In training (unless ``use_global_stats``) each channel is normalized with the
whole batch's mean and biased variance, ``out = (x - mean) / sqrt(var + eps) *
gamma + beta``, and the moving statistics are updated in place
(``moving = moving * momentum + batch * (1 - momentum)``; in the forward pass, as
dagnet's BatchNorm); otherwise the moving statistics normalize.  The hidden
outputs ``mean`` and ``var`` (visible with ``output_mean_var``) are the statistics
used, ``var`` being the variance.  The data gradient uses the whole batch's
gradient sums; gamma's and beta's are this device's part.""",
    params=SyncBatchNormParam,
    num_inputs=5,
    num_outputs=3,
    num_visible_outputs=lambda a: 3 if a.output_mean_var else 1,
    input_names=_INPUTS,
    output_names=_OUTPUTS,
    mutate_inputs=[3, 4],
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    compute={XP: _forward},
    gradient=Gradient("_backward_contrib_SyncBatchNorm",
                      uses=("out_grad", "in_data", "out_data")),
    domain=Domain(_sample, _reference, differentiable=(0, 1, 2)),
)

BackwardSyncBatchNorm = Op(
    "_backward_contrib_SyncBatchNorm",
    params=SyncBatchNormParam,
    num_inputs=lambda a: (3 if a.output_mean_var else 1) + 8,
    num_outputs=3,
    compute={XP: _backward},
    is_backward=True,
    forward_op=NAME,
)

OPS = [SyncBatchNorm, BackwardSyncBatchNorm]
