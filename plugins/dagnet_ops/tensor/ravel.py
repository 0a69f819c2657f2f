"""Flat and multi-dimensional indices: ``ravel_multi_index`` and ``unravel_index``
(MXNet's ``ravel.cc``), numpy's functions of the same names over float index arrays.

``shape`` may start with ``-1`` (MXNet's "as large as needed"): the leading
dimension does not enter the row-major strides.  Indices carry no gradient.
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import XP, Case, Domain, Field, Op, Params, Shape, ZeroGradient

from . import _sampling as S
from ._common import first_input_type, put, shape_error, with_attrs


class RavelParam(Params):
    shape = Field(Shape, None, "Shape of the array into which the multi-indices apply.",
                  optional=True)


def _strides(op: str, attrs: RavelParam) -> list[int]:
    if not attrs.shape:
        raise shape_error(op, "shape= is required: the shape of the array the indices address")
    dims = list(attrs.shape)
    strides, step = [], 1
    for d in reversed(dims):
        strides.append(step)
        step *= max(d, 1)
    return strides[::-1]


def _ravel_infer(attrs, ins, outs):
    data = ins[0]
    if data is None:
        return ins, outs
    n = len(attrs.shape or ())
    if data[0] and data[0] != n:
        raise shape_error("ravel_multi_index", f"data has {data[0]} rows of indices but shape "
                                               f"{tuple(attrs.shape or ())} has {n} dimensions")
    return ins, [tuple(data[1:])]


def _unravel_infer(attrs, ins, outs):
    data = ins[0]
    if data is None:
        return ins, outs
    return ins, [(len(attrs.shape or ()),) + tuple(data)]


def _ravel(attrs, ctx, inputs, req, outputs):
    strides = _strides("ravel_multi_index", attrs)
    idx = inputs[0].astype(np.int64)
    flat = sum(idx[i] * s for i, s in enumerate(strides))
    put(outputs[0], req[0], flat)


def _unravel(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    strides = _strides("unravel_index", attrs)
    flat = inputs[0].astype(np.int64)
    # the first dimension is not wrapped: a leading -1 (or a too large index) leaves it open
    rows = [flat // s if i == 0 else (flat // s) % attrs.shape[i] for i, s in enumerate(strides)]
    put(outputs[0], req[0], xp.stack(rows))


def _ravel_sample(draw):
    shape = S.shape(draw, max_dims=3, max_side=5)
    n = S.shape(draw, max_dims=2)
    idx = np.stack([S.integers(draw, n, 0, d - 1) for d in shape])
    return Case([idx], {"shape": shape})


def _unravel_sample(draw):
    shape = S.shape(draw, max_dims=3, max_side=5)
    return Case([S.integers(draw, S.shape(draw, max_dims=2), 0, int(np.prod(shape)) - 1)],
                {"shape": shape})


OPS: list[Op] = [
    Op("ravel_multi_index", params=RavelParam, input_names=["data"],
       aliases=("_ravel_multi_index",),
       infer_shape=_ravel_infer, infer_type=first_input_type(1), compute={XP: _ravel},
       gradient=ZeroGradient(),
       domain=Domain(_ravel_sample, reference=with_attrs(
           RavelParam, "ravel_multi_index",
           lambda p, d: np.ravel_multi_index(d.astype(np.int64), p.shape).astype(d.dtype))),
       description="Row-major flat indices from multi-indices: ``data`` of shape (ndim, ...) "
                   "holds one row per dimension of ``shape``; the output has shape ``data."
                   "shape[1:]`` and data's dtype (numpy's ravel_multi_index).  A leading -1 in "
                   "shape leaves the first dimension unbounded.  Gradient zero."),
    Op("unravel_index", params=RavelParam, input_names=["data"], aliases=("_unravel_index",),
       infer_shape=_unravel_infer, infer_type=first_input_type(1), compute={XP: _unravel},
       gradient=ZeroGradient(),
       domain=Domain(_unravel_sample, reference=with_attrs(
           RavelParam, "unravel_index",
           lambda p, d: np.stack(np.unravel_index(d.astype(np.int64), p.shape)).astype(d.dtype))),
       description="Multi-indices from row-major flat indices: the output has shape "
                   "``(len(shape),) + data.shape`` and data's dtype (numpy's unravel_index).  "
                   "A leading -1 in shape leaves the first dimension unbounded.  Gradient "
                   "zero."),
]
