"""``Pad`` (MXNet's ``pad.cc``): pad a 4-D or 5-D array's spatial axes, numpy's ``pad``
with modes ``constant``, ``edge`` and ``reflect``.

``pad_width`` lists (before, after) for every axis, flattened; the batch and
channel axes may not be padded.  The gradient sums the head gradient back onto
the positions each padded value was copied from.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    Op,
    Params,
    Shape,
    assign,
    merge_shape,
)

from .._draw import Draw

__all__ = ["OPS"]


class PadParam(Params):
    mode = Field(str, REQUIRED, "Padding type to use. \"constant\" pads with `constant_value` "
                                "\"edge\" pads using the edge values of the input array "
                                "\"reflect\" pads by reflecting values with respect to the "
                                "edges.", choices=("constant", "edge", "reflect"))
    pad_width = Field(Shape, REQUIRED, "Widths of the padding regions applied to the edges of "
                                       "each axis. It is a tuple of integer padding widths for "
                                       "each axis of the format ``(before_1, after_1, ... , "
                                       "before_N, after_N)``. It should be of length ``2*N`` "
                                       "where ``N`` is the number of dimensions of the array. "
                                       "This is equivalent to pad_width in numpy.pad, but "
                                       "flattened.")
    constant_value = Field(float, 0.0, "The value used for padding when `mode` is \"constant\".")


def _pairs(attrs: PadParam, ndim: int) -> list[tuple[int, int]]:
    width = list(attrs.pad_width)
    if ndim not in (4, 5):
        raise ShapeError(f"operator 'Pad': only 4-D and 5-D inputs can be padded, got {ndim}-D")
    if len(width) != 2 * ndim:
        raise ShapeError(f"operator 'Pad': pad_width has {len(width)} values but a {ndim}-D "
                         f"input needs {2 * ndim} (before, after for every axis)")
    if any(width[:4]):
        raise ShapeError(f"operator 'Pad': the batch and channel axes cannot be padded; "
                         f"pad_width must start with four zeros, got {tuple(width)}")
    pairs = list(zip(width[0::2], width[1::2]))
    if min(width) < 0:
        raise ShapeError(f"operator 'Pad': pad widths must be >= 0, got {tuple(width)}")
    return pairs


def _infer(attrs, ins, outs):
    data = ins[0]
    if data is None or not all(d > 0 for d in data):
        return ins, outs
    pairs = _pairs(attrs, len(data))
    if attrs.mode == "reflect" and any(max(p) >= d for p, d in zip(pairs, data) if any(p)):
        raise ShapeError(f"operator 'Pad': mode='reflect' needs pad widths smaller than the "
                         f"padded axis; input {tuple(data)}, pad_width {attrs.pad_width}")
    out = tuple(d + lo + hi for d, (lo, hi) in zip(data, pairs))
    return ins, [merge_shape(outs[0], out, "Pad output")]


def _forward(attrs, ctx, inputs, req, outputs):
    xp, x = ctx.xp, inputs[0]
    pairs = _pairs(attrs, x.ndim)
    if attrs.mode == "constant":
        out = xp.pad(x, pairs, mode="constant", constant_values=attrs.constant_value)
    else:
        out = xp.pad(x, pairs, mode=attrs.mode)
    assign(outputs[0], req[0], out)


def _backward(attrs, ctx, inputs, req, outputs):
    xp, g = ctx.xp, inputs[0]
    shape = outputs[0].shape
    pairs = _pairs(attrs, len(shape))
    for axis, ((lo, hi), n) in enumerate(zip(pairs, shape)):
        if not lo and not hi:
            continue
        moved = xp.moveaxis(g, axis, 0)
        if attrs.mode == "constant":
            moved = moved[lo:lo + n]
        else:
            # where each padded position along this axis copies its value from
            source = np.pad(np.arange(n), (lo, hi), mode=attrs.mode)
            acc = xp.zeros((n,) + moved.shape[1:], dtype=g.dtype)
            xp.add.at(acc, xp.asarray(source), moved)
            moved = acc
        g = xp.moveaxis(moved, 0, axis)
    assign(outputs[0], req[0], g)


def _case(draw):
    d = Draw(draw)
    ndim = d.int(4, 5, "ndim")
    shape = d.shape(ndim, 1, 3)
    mode = d.choice(["constant", "edge", "reflect"], "mode")
    width = [0, 0, 0, 0]
    for side in shape[2:]:
        top = side - 1 if mode == "reflect" else 2
        width += [d.int(0, top), d.int(0, top)]
    params: dict[str, Any] = {"mode": mode, "pad_width": tuple(width)}
    if mode == "constant":
        params["constant_value"] = d.float(-1, 1, "constant_value")
    return Case([d.uniform(shape, -2, 2)], params)


def _reference(raw, x):
    p = PadParam.parse("Pad", raw)
    pairs = list(zip(p.pad_width[0::2], p.pad_width[1::2]))
    if p.mode == "constant":
        return np.pad(x, pairs, mode="constant", constant_values=p.constant_value)
    return np.pad(x, pairs, mode=p.mode)


OPS = [
    Op("Pad", params=PadParam, input_names=["data"], aliases=("pad",), infer_shape=_infer,
       compute={XP: _forward}, gradient=Gradient("_backward_Pad", ("out_grad",)),
       domain=Domain(_case, reference=_reference),
       description="Pad the spatial axes of a 4-D or 5-D input (numpy's pad with the "
                   "(before, after) widths flattened in ``pad_width``; the first four must be "
                   "0): ``constant`` fills constant_value, ``edge`` repeats the edge values, "
                   "``reflect`` mirrors without repeating the edge.  Dtype = data's.  Gradient: "
                   "the head gradient summed back onto the positions each value came from."),
    Op("_backward_Pad", params=PadParam, num_inputs=1, compute={XP: _backward},
       is_backward=True, forward_op="Pad"),
]
