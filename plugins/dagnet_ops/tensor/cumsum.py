"""``_np_cumsum`` (MXNet's ``np_cumsum.cc``, also called ``cumsum``): running sums along an
axis, numpy's ``cumsum``.

Without ``axis`` the input is flattened first (the output is 1-d).  The sum is kept in
the output's dtype: ``dtype`` when given, else the input's, a ``bool`` input counting in
int64.  Gradient: the head gradient summed from the end backwards (a reversed cumsum),
in the input's dtype.
"""

from __future__ import annotations

import math

import numpy as np

from dagnet.operator import XP, Case, Domain, DType, Field, Gradient, Op, Params

from . import _sampling as S
from ._common import norm_axis, put, with_attrs

_DTYPES = ("float16", "float32", "float64", "int8", "int32", "int64")


class CumsumParam(Params):
    axis = Field(int, None, "Axis along which the cumulative sum is computed. The default "
                            "(None) is to compute the cumsum over the flattened array.")
    dtype = Field(DType, None, "Type of the returned array and of the accumulator in which "
                               "the elements are summed (default: the input's; int64 for "
                               "bool).", choices=_DTYPES)


def _axis(attrs: CumsumParam, ndim: int) -> int | None:
    return None if attrs.axis is None else norm_axis("_np_cumsum", attrs.axis, ndim)


def _infer_shape(attrs, ins, outs):
    data = ins[0]
    if data is None:
        return ins, outs
    _axis(attrs, len(data))  # raises for an axis outside the input
    return ins, [tuple(data) if attrs.axis is not None else (math.prod(data),)]


def _out_dtype(attrs: CumsumParam, dtype):
    if attrs.dtype is not None:
        return np.dtype(attrs.dtype)
    return np.dtype(np.int64) if np.dtype(dtype) == np.bool_ else np.dtype(dtype)


def _infer_type(attrs, ins, outs):
    if ins[0] is None:
        return ins, outs
    return ins, [_out_dtype(attrs, ins[0])]


def _forward(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    axis = _axis(attrs, x.ndim)
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    put(outputs[0], req[0], ctx.xp.cumsum(x, axis=axis, dtype=outputs[0].dtype))


def _backward(attrs, ctx, inputs, req, outputs):
    xp, g = ctx.xp, inputs[0]
    shape = outputs[0].shape
    axis = _axis(attrs, len(shape))
    if axis is None:
        axis = 0
    elif g.ndim == 0:
        g = g.reshape(1)
    reverse = xp.flip(xp.cumsum(xp.flip(g, axis=axis), axis=axis), axis=axis)
    put(outputs[0], req[0], reverse.reshape(shape))


def _sample(draw):
    shape = S.shape(draw, min_dims=1, max_dims=3)
    axis = S.choice(draw, [None, *range(-len(shape), len(shape))], "axis")
    return Case([S.floats(draw, shape)], {"axis": axis})


def _reference(p: CumsumParam, x: np.ndarray) -> np.ndarray:
    return np.cumsum(x, axis=p.axis, dtype=_out_dtype(p, x.dtype))


OPS: list[Op] = [
    Op("_np_cumsum", params=CumsumParam, input_names=["a"], aliases=("cumsum",),
       infer_shape=_infer_shape, infer_type=_infer_type, compute={XP: _forward},
       gradient=Gradient("_backward_np_cumsum", ("out_grad",)),
       domain=Domain(_sample, reference=with_attrs(CumsumParam, "_np_cumsum", _reference)),
       description="Cumulative sum of ``a`` along ``axis`` (of the flattened ``a``, a 1-d "
                   "result, when None): ``out[..., i, ...] = sum(a[..., :i+1, ...])``.  "
                   "Dtype: ``dtype`` when given, else a's (int64 for bool); the sum runs in "
                   "that dtype.  Gradient: the reversed cumulative sum of the head gradient, "
                   "reshaped to a's shape."),
    # MXNet's name, not backward_op's "_backward__np_cumsum"
    Op("_backward_np_cumsum", params=CumsumParam, compute={XP: _backward}, is_backward=True,
       forward_op="_np_cumsum", description="Gradient of _np_cumsum."),
]
