"""``_contrib_quantized_pooling`` (MXNet's ``quantization/quantized_pooling.cc``): max or
average pooling of int8/uint8 data, which keeps the range it stands for.

Inputs ``data``, ``min_data``, ``max_data``; outputs the pooled integers (same dtype) and
the same range.  The parameters are Pooling's; MXNet pools 4-D (NCHW) or 5-D (NCDHW) data,
max or avg only.  An average is rounded to the nearest integer (halves to even), as the
MKL-DNN kernel MXNet's CPU build runs rounds; counting the padding (the default), it divides
by the whole window, the overhang of a "full" window included (unlike float Pooling).  No
gradient.
"""

from __future__ import annotations

import numpy as np

from dagnet import DTypeError
from dagnet.operator import XP, Case, Domain, NoGradient, Op, OpReqType, get_op

from .._draw import Draw
from ..nn.pooling import PoolingParam
from ._common import contrib_error, put

__all__ = ["OPS"]

_OP = "_contrib_quantized_pooling"
_FLOAT = np.dtype(np.float32)
_INTEGERS = (np.dtype(np.int8), np.dtype(np.uint8))


def _check(attrs, data_shape) -> None:
    if attrs.pool_type not in ("max", "avg"):
        raise contrib_error(_OP, f"pools max or avg, got pool_type={attrs.pool_type!r}")
    if attrs.layout not in (None, "NCHW", "NCDHW"):
        raise contrib_error(_OP, f"pools channel-first data (NCHW or NCDHW), got layout "
                                 f"{attrs.layout!r}")
    if data_shape is not None and len(data_shape) not in (4, 5):
        raise contrib_error(_OP, f"pools 4-D (batch, channel, y, x) or 5-D data, got shape "
                                 f"{tuple(data_shape)}")


def _infer_shape(attrs, ins, outs):
    _check(attrs, ins[0])
    pooled_ins, pooled_outs = get_op("Pooling").shapes(attrs, ins[:1], outs[:1])
    return [pooled_ins[0], (1,), (1,)], [pooled_outs[0], (1,), (1,)]


def _infer_type(attrs, ins, outs):
    data = ins[0] if ins[0] is not None else outs[0]
    if data is not None and np.dtype(data) not in _INTEGERS:
        raise DTypeError(f"operator {_OP!r}: data must be int8 or uint8, got "
                         f"{np.dtype(data).name}")
    return [data, _FLOAT, _FLOAT], [data, _FLOAT, _FLOAT]


def _pool(attrs, ctx, x, shape):
    out = ctx.xp.empty(shape, np.float32)
    get_op("Pooling").kernel_for(XP)(attrs, ctx, [x], [OpReqType.WRITE], [out])
    return out


def _forward(attrs, ctx, inputs, req, outputs):
    xp, data = ctx.xp, inputs[0]
    shape = outputs[0].shape
    # pooled in float32, where every int8/uint8 value and window sum is exact
    x = data.astype(np.float32)
    if attrs.pool_type == "max":
        put(outputs[0], req[0], _pool(attrs, ctx, x, shape))
    else:
        sums = _pool(attrs.replace(pool_type="sum"), ctx, x, shape)
        if attrs.count_include_pad is False:
            counts = _pool(attrs.replace(pool_type="sum"), ctx, xp.ones_like(x), shape)
        else:  # the whole window, padding and a "full" window's overhang included
            counts = float(np.prod(data.shape[2:] if attrs.global_pool else attrs.kernel))
        put(outputs[0], req[0], xp.rint(sums / counts))
    put(outputs[1], req[1], inputs[1].reshape(1))
    put(outputs[2], req[2], inputs[2].reshape(1))


def _sample(draw):
    d = Draw(draw)
    shape = (d.int(1, 2), d.int(1, 3), d.int(3, 5), d.int(3, 5))
    unsigned = d.bool("unsigned")
    data = d.rng.integers(0 if unsigned else -128, 256 if unsigned else 128, size=shape)
    hi = d.float(0.5, 3.0)
    params = {"pool_type": d.choice(["max", "avg"], "pool_type")}
    if d.bool("global_pool"):
        params["global_pool"] = True
    else:
        params.update(kernel=(d.int(1, 3), 2), stride=(d.int(1, 2),) * 2,
                      pooling_convention=d.choice(["valid", "full"], "convention"))
    if d.bool("count_include_pad"):
        params["count_include_pad"] = d.bool("include")
    return Case([data.astype(np.uint8 if unsigned else np.int8),
                 np.array([0.0 if unsigned else -hi], np.float32),
                 np.array([hi], np.float32)], params)


def _reference(params, data, lo, hi):
    attrs = PoolingParam.parse(_OP, params)
    x = data.astype(np.float64)
    if attrs.global_pool:
        kernel, stride = x.shape[2:], (1, 1)
    else:
        kernel, stride = attrs.kernel, attrs.stride
    full = attrs.pooling_convention == "full" and not attrs.global_pool
    rows, cols = [(-(-(size - k) // s) if full else (size - k) // s) + 1
                  for size, k, s in zip(x.shape[2:], kernel, stride)]
    out = np.zeros(x.shape[:2] + (rows, cols))
    for i in range(rows):
        for j in range(cols):
            window = x[:, :, i * stride[0]:i * stride[0] + kernel[0],
                       j * stride[1]:j * stride[1] + kernel[1]]
            if attrs.pool_type == "max":
                out[:, :, i, j] = window.max(axis=(2, 3))
            else:
                count = window[0, 0].size if attrs.count_include_pad is False \
                    else np.prod(kernel)
                out[:, :, i, j] = np.rint(window.sum(axis=(2, 3)) / count)
    return [out.astype(data.dtype), lo.reshape(1), hi.reshape(1)]


OPS = [
    Op(_OP, params=PoolingParam, num_inputs=3, num_outputs=3,
       input_names=["data", "min_data", "max_data"],
       output_names=["output", "min_output", "max_output"],
       infer_shape=_infer_shape, infer_type=_infer_type, compute={XP: _forward},
       gradient=NoGradient("quantized operators are for inference (MXNet registers no "
                           "gradient)"),
       domain=Domain(_sample, reference=_reference, dtypes=("float32",)),
       description="Max or average pooling of int8/uint8 data standing for the range "
                   "(min_data, max_data); the pooled integers (averages rounded) keep that "
                   "range.  Pooling's parameters.  No gradient."),
]
