"""``_split_v2`` (MXNet's ``split_v2``): split an array along ``axis`` at given indices
or into equal sections, numpy's ``split``.

``indices`` holds the start of every part (MXNet's frontend prepends 0 to the
user's split points); with ``sections > 0`` the axis is cut into that many equal
parts instead.  Dtype unchanged; the gradient concatenates the head gradients.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet.operator import REQUIRED, XP, Case, Domain, Field, Gradient, Op, Params, Shape

from . import _sampling as S
from ._common import backward_op, known, norm_axis, put, shape_error, with_attrs


class SplitV2Param(Params):
    indices = Field(Shape, REQUIRED, "Indices of splits. The elements should denote the "
                                     "boundaries of at which split is performed along the "
                                     "`axis`.")
    axis = Field(int, 1, "Axis along which to split.")
    squeeze_axis = Field(bool, False, "If true, Removes the axis with length 1 from the shapes "
                                      "of the output arrays.")
    sections = Field(int, 0, "Number of sections if equally splitted. Default to 0 which means "
                             "split by indices.", low=0)


def _count(attrs: SplitV2Param) -> int:
    return attrs.sections if attrs.sections > 0 else len(attrs.indices)


def _bounds(attrs: SplitV2Param, size: int) -> list[tuple[int, int]]:
    op = "_split_v2"
    if attrs.sections > 0:
        if size % attrs.sections:
            raise shape_error(op, f"an axis of size {size} cannot be cut into "
                                  f"sections={attrs.sections} equal parts")
        step = size // attrs.sections
        return [(i * step, (i + 1) * step) for i in range(attrs.sections)]
    starts = list(attrs.indices)
    if not starts:
        raise shape_error(op, "indices is empty; give split points or sections > 0")
    if any(b < a for a, b in zip(starts, starts[1:])) or starts[-1] > size:
        raise shape_error(op, f"indices {tuple(starts)} must rise and stay within the axis "
                              f"of size {size}")
    return list(zip(starts, starts[1:] + [size]))


def _infer(attrs, ins, outs):
    data = ins[0]
    if not known(data):
        return ins, outs
    axis = norm_axis("_split_v2", attrs.axis, len(data))
    shapes = []
    for lo, hi in _bounds(attrs, data[axis]):
        piece = list(data)
        piece[axis] = hi - lo
        if attrs.squeeze_axis:
            if hi - lo != 1:
                raise shape_error("_split_v2", f"squeeze_axis=True needs parts of size 1, got "
                                               f"{hi - lo} along axis {axis}")
            del piece[axis]
        shapes.append(tuple(piece))
    return ins, shapes


def _slices(x_ndim: int, axis: int, lo: int, hi: int) -> tuple:
    index: list[Any] = [slice(None)] * x_ndim
    index[axis] = slice(lo, hi)
    return tuple(index)


def _compute(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    axis = norm_axis("_split_v2", attrs.axis, x.ndim)
    for (lo, hi), out, r in zip(_bounds(attrs, x.shape[axis]), outputs, req):
        put(out, r, x[_slices(x.ndim, axis, lo, hi)])


def _back(attrs, ctx, inputs, req, outputs):
    shape = outputs[0].shape
    axis = norm_axis("_split_v2", attrs.axis, len(shape))
    grad = ctx.xp.zeros(shape, dtype=outputs[0].dtype)
    for (lo, hi), g in zip(_bounds(attrs, shape[axis]), inputs):
        index = _slices(len(shape), axis, lo, hi)
        grad[index] = g.reshape(grad[index].shape)
    put(outputs[0], req[0], grad)


def _sample(draw):
    shape = list(S.shape(draw))
    axis = S.axis(draw, len(shape))
    if S.boolean(draw, "by sections"):
        n = S.integer(draw, 1, 3, "sections")
        shape[axis] = n * S.integer(draw, 1, 2, "part size")
        return Case([S.floats(draw, shape)], {"indices": (), "axis": axis, "sections": n})
    cuts = sorted(set(S.integers(draw, (S.integer(draw, 0, 2, "cuts"),), 1,
                                 shape[axis]).astype(int).tolist()))
    return Case([S.floats(draw, shape)], {"indices": tuple([0] + cuts), "axis": axis})


def _reference(p: SplitV2Param, x: np.ndarray) -> list:
    if p.sections > 0:
        parts = np.split(x, p.sections, axis=p.axis)
    else:
        parts = np.split(x, list(p.indices[1:]), axis=p.axis)
    return [np.squeeze(q, axis=p.axis) if p.squeeze_axis else q for q in parts]


OPS: list[Op] = [
    Op("_split_v2", params=SplitV2Param, input_names=["data"], num_outputs=_count,
       infer_shape=_infer, compute={XP: _compute},
       gradient=Gradient("_backward_split_v2", ("out_grad",)),
       domain=Domain(_sample, reference=with_attrs(SplitV2Param, "_split_v2", _reference)),
       description="Split ``data`` along ``axis``: into ``sections`` equal parts, or into "
                   "parts starting at each of ``indices`` (the last runs to the end); "
                   "``squeeze_axis`` drops the split axis from parts of size 1.  The frontend "
                   "``split_v2(data, indices_or_sections, axis)`` takes numpy's arguments.  "
                   "Dtype unchanged.  Gradient: the head gradients joined back."),
    backward_op("split_v2", SplitV2Param, _count, 1, _back),
]
