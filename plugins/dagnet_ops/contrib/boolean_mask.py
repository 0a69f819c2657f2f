"""``_contrib_boolean_mask`` (MXNet's ``boolean_mask.cc``): the slices of ``data`` along
``axis`` where the 1-D ``index`` is nonzero, in order.

The output's length along ``axis`` is the number of nonzero entries, known only from
the values (``Op.value_shapes``): an imperative call waits for ``index``; a symbolic
graph cannot hold the operator.  Gradient: each output slice's head gradient goes back
to the slice it came from, the others get zero; the index gets zero.
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params

from .._draw import Draw
from ._common import contrib_error, host, put

__all__ = ["OPS"]

_NAME = "_contrib_boolean_mask"


class BooleanMaskParam(Params):
    axis = Field(int, 0, "An integer that represents the axis in NDArray to mask from.")


def _axis(attrs, ndim: int) -> int:
    if not -ndim <= attrs.axis < ndim:
        raise contrib_error(_NAME, f"axis={attrs.axis} is out of range for {ndim}-D data")
    return attrs.axis % ndim


def _check(attrs, data, index) -> int:
    if len(index) != 1:
        raise contrib_error(_NAME, f"index must be 1-D, got shape {tuple(index)}")
    axis = _axis(attrs, len(data))
    if data[axis] and index[0] and data[axis] != index[0]:
        raise contrib_error(_NAME, f"index has {index[0]} entries but data has {data[axis]} "
                                   f"along axis {axis} (data shape {tuple(data)})")
    return axis


def _infer(attrs, ins, outs):
    data, index = ins
    if data is not None and index is not None:
        _check(attrs, data, index)
    return ins, outs  # the output's length comes from the index values


def _value_shapes(attrs, values):
    data, index = values
    axis = _check(attrs, data.shape, index.shape)
    shape = list(data.shape)
    shape[axis] = int(np.count_nonzero(index))
    return [tuple(shape)]


def _infer_type(attrs, ins, outs):
    dtype = ins[0] if ins[0] is not None else outs[0]
    return [dtype, ins[1] if ins[1] is not None else dtype], [dtype]


def _positions(xp, index):
    return xp.asarray(np.flatnonzero(host(index)))


def _forward(attrs, ctx, inputs, req, outputs):
    data, index = inputs
    axis = _axis(attrs, data.ndim)
    put(outputs[0], req[0], ctx.xp.take(data, _positions(ctx.xp, index), axis=axis))


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, data, index = inputs
    axis = _axis(attrs, data.ndim)
    grad = xp.zeros(data.shape, dtype=g.dtype)
    where = [slice(None)] * data.ndim
    where[axis] = _positions(xp, index)
    grad[tuple(where)] = g
    put(outputs[0], req[0], grad)
    put(outputs[1], req[1], 0)


def _sample(draw):
    d = Draw(draw)
    shape = d.shape(d.int(1, 3), 1, 4)
    axis = d.int(-len(shape), len(shape) - 1)
    index = (d.rng.random(shape[axis]) < 0.6).astype(np.float64)
    index[d.int(0, shape[axis] - 1)] = 1.0  # at least one slice: an empty output has no values
    return Case([d.uniform(shape), index], {"axis": axis})


def _reference(raw, data, index):
    attrs = BooleanMaskParam.parse(_NAME, raw)
    return np.compress(index != 0, data, axis=attrs.axis)


OPS = [
    Op(_NAME, params=BooleanMaskParam, num_inputs=2, input_names=["data", "index"],
       infer_shape=_infer, infer_type=_infer_type, value_shapes=_value_shapes,
       compute={XP: _forward},
       gradient=Gradient("_backward_contrib_boolean_mask", ("out_grad", "in_data")),
       domain=Domain(_sample, reference=_reference, differentiable=(0,)),
       description="The slices of data along ``axis`` (default 0) where the 1-D index is "
                   "nonzero, in order; the output's length is the count of nonzero entries, "
                   "so calls wait for the index.  Gradient: back to the selected slices; the "
                   "index gets zero."),
    Op("_backward_contrib_boolean_mask", params=BooleanMaskParam, num_inputs=3, num_outputs=2,
       compute={XP: _backward}, is_backward=True, forward_op=_NAME),
]
