"""Operators over padded sequences (MXNet's ``sequence_mask.cc``, ``sequence_last.cc``,
``sequence_reverse.cc``): ``SequenceMask``, ``SequenceLast`` and ``SequenceReverse``.

``data`` has a time axis (``axis``, 0 or 1) and a batch axis (the other of the
two); with ``use_sequence_length=True`` a second input ``sequence_length`` (shape
(batch,)) gives each sequence's true length, else every sequence spans the whole
time axis.  Lengths get a zero gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, assign, merge_shape

from .._draw import Draw

__all__ = ["OPS"]


class SequenceParam(Params):
    use_sequence_length = Field(bool, False, "If set to true, this layer takes in an extra input "
                                             "parameter `sequence_length` to specify variable "
                                             "length sequence")
    axis = Field(int, 0, "The sequence axis. Only values of 0 and 1 are currently supported.",
                 choices=(0, 1))


class SequenceMaskParam(SequenceParam):
    value = Field(float, 0.0, "The value to be used as padding when masking.")


def _inputs(attrs: SequenceParam) -> list[str]:
    return ["data", "sequence_length"] if attrs.use_sequence_length else ["data"]


def _lengths(xp: Any, attrs: SequenceParam, inputs: list, data: Any) -> Any:
    """Each batch entry's length as int64, shape (batch,)."""
    steps, batch = (data.shape[0], data.shape[1]) if attrs.axis == 0 else \
        (data.shape[1], data.shape[0])
    if not attrs.use_sequence_length:
        return xp.full((batch,), steps, dtype=np.int64)
    return xp.clip(inputs[1].astype(np.int64), 0, steps)


def _time_mask(xp: Any, attrs: SequenceParam, data: Any, lengths: Any) -> Any:
    """True where time step t is inside its sequence, broadcastable to ``data``."""
    steps = data.shape[attrs.axis]
    t = xp.arange(steps)
    inside = t[:, None] < lengths[None, :] if attrs.axis == 0 else t[None, :] < lengths[:, None]
    return inside.reshape(inside.shape + (1,) * (data.ndim - 2))


def _check(op: str, attrs: SequenceParam, data: Any, length: Any) -> tuple:
    if data is None:
        return data, length
    if len(data) < 2:
        raise ShapeError(f"operator {op!r}: data needs a time and a batch axis, got shape "
                         f"{tuple(data)}")
    batch = data[1 - attrs.axis]
    if attrs.use_sequence_length:
        length = merge_shape(length, (batch,), f"{op} sequence_length")
    return data, length


def _same_infer(op: str):
    def infer(attrs, ins, outs):
        data = merge_shape(ins[0], outs[0], f"{op} data")
        data, length = _check(op, attrs, data, ins[1] if len(ins) > 1 else None)
        return ([data, length] if len(ins) > 1 else [data]), [data]
    return infer


def _last_infer(attrs, ins, outs):
    data, length = _check("SequenceLast", attrs, ins[0], ins[1] if len(ins) > 1 else None)
    out = None if data is None else tuple(d for i, d in enumerate(data) if i != attrs.axis)
    return ([data, length] if len(ins) > 1 else [data]), [out]


def _infer_type(attrs, ins, outs):
    """data and the output share a dtype; sequence_length keeps its own (any dtype)."""
    data = ins[0] if ins[0] is not None else outs[0]
    rest = [t if t is not None else data for t in ins[1:]]
    return [data, *rest], [data]


def _zero_length_grad(req: list, outputs: list) -> None:
    if len(outputs) > 1:
        assign(outputs[1], req[1], 0)


# -- SequenceMask ---------------------------------------------------------------------------
def _mask(attrs, ctx, inputs, req, outputs):
    xp, data = ctx.xp, inputs[0]
    inside = _time_mask(xp, attrs, data, _lengths(xp, attrs, inputs, data))
    assign(outputs[0], req[0], xp.where(inside, data, attrs.value).astype(data.dtype))


def _mask_back(attrs, ctx, inputs, req, outputs):
    xp, g = ctx.xp, inputs[0]
    data = inputs[1]
    inside = _time_mask(xp, attrs, data, _lengths(xp, attrs, inputs[1:], data))
    assign(outputs[0], req[0], xp.where(inside, g, 0).astype(g.dtype))
    _zero_length_grad(req, outputs)


# -- SequenceLast ---------------------------------------------------------------------------
def _last_index(xp: Any, attrs: SequenceParam, data: Any, lengths: Any) -> tuple:
    last = xp.maximum(lengths - 1, 0)
    batch = xp.arange(last.shape[0])
    return (last, batch) if attrs.axis == 0 else (batch, last)


def _last(attrs, ctx, inputs, req, outputs):
    xp, data = ctx.xp, inputs[0]
    assign(outputs[0], req[0], data[_last_index(xp, attrs, data, _lengths(xp, attrs, inputs,
                                                                           data))])


def _last_back(attrs, ctx, inputs, req, outputs):
    xp, g, data = ctx.xp, inputs[0], inputs[1]
    grad = xp.zeros(data.shape, dtype=g.dtype)
    grad[_last_index(xp, attrs, data, _lengths(xp, attrs, inputs[1:], data))] = g
    assign(outputs[0], req[0], grad)
    _zero_length_grad(req, outputs)


# -- SequenceReverse ------------------------------------------------------------------------
def _reversed(xp: Any, attrs: SequenceParam, x: Any, lengths: Any) -> Any:
    steps = x.shape[0]
    t = xp.arange(steps)[:, None]
    # inside a sequence step t takes step length-1-t; padding stays where it is
    source = xp.where(t < lengths[None, :], lengths[None, :] - 1 - t, t)
    batch = xp.arange(x.shape[1])[None, :]
    return x[source, batch]


def _reverse(attrs, ctx, inputs, req, outputs):
    xp, data = ctx.xp, inputs[0]
    assign(outputs[0], req[0], _reversed(xp, attrs, data, _lengths(xp, attrs, inputs, data)))


def _reverse_back(attrs, ctx, inputs, req, outputs):
    xp, g, data = ctx.xp, inputs[0], inputs[1]
    assign(outputs[0], req[0], _reversed(xp, attrs, g, _lengths(xp, attrs, inputs[1:], data)))
    _zero_length_grad(req, outputs)


def _reverse_infer(attrs, ins, outs):
    if attrs.axis != 0:
        raise ShapeError("operator 'SequenceReverse': only axis=0 (time first) is supported, "
                         "as in MXNet; transpose the input to put time first")
    return _same_infer("SequenceReverse")(attrs, ins, outs)


# -- conformance cases ----------------------------------------------------------------------
def _case(draw, with_value: bool, axis_choices=(0, 1)) -> Case:
    d = Draw(draw)
    axis = d.choice(axis_choices, "axis")
    steps, batch = d.int(1, 4, "steps"), d.int(1, 3, "batch")
    shape = ((steps, batch) if axis == 0 else (batch, steps)) + d.shape(d.int(0, 2))
    params: dict[str, Any] = {"axis": axis}
    inputs = [d.uniform(shape, -2, 2)]
    if d.bool("use_sequence_length"):
        params["use_sequence_length"] = True
        inputs.append(np.array([d.int(1, steps) for _ in range(batch)], dtype=np.float64))
    if with_value:
        params["value"] = d.float(-2, 2, "value")
    return Case(inputs, params)


def _np_lengths(p, data, rest):
    steps, batch = (data.shape[0], data.shape[1]) if p.axis == 0 else \
        (data.shape[1], data.shape[0])
    return rest[0].astype(np.int64) if rest else np.full(batch, steps)


def _np_mask(raw, data, *rest):
    p = SequenceMaskParam.parse("SequenceMask", raw)
    out = data.copy()
    for b, n in enumerate(_np_lengths(p, data, rest)):
        if p.axis == 0:
            out[n:, b] = p.value
        else:
            out[b, n:] = p.value
    return out


def _np_last(raw, data, *rest):
    p = SequenceParam.parse("SequenceLast", raw)
    lengths = _np_lengths(p, data, rest)
    return np.stack([data[n - 1, b] if p.axis == 0 else data[b, n - 1]
                     for b, n in enumerate(lengths)])


def _np_reverse(raw, data, *rest):
    p = SequenceParam.parse("SequenceReverse", raw)
    out = data.copy()
    for b, n in enumerate(_np_lengths(p, data, rest)):
        out[:n, b] = data[:n, b][::-1]
    return out


def _forward_op(name, params, infer, compute, uses, reference, case, desc):
    return Op(name, params=params, num_inputs=lambda a: len(_inputs(a)), input_names=_inputs,
              infer_shape=infer, infer_type=_infer_type, compute={XP: compute},
              gradient=Gradient(f"_backward_{name}", uses),
              domain=Domain(case, reference=reference, differentiable=(0,)), description=desc)


def _backward_op(name, params, compute):
    return Op(f"_backward_{name}", params=params, num_inputs=lambda a: 1 + len(_inputs(a)),
              num_outputs=lambda a: len(_inputs(a)), compute={XP: compute}, is_backward=True,
              forward_op=name)


OPS = [
    _forward_op("SequenceMask", SequenceMaskParam, _same_infer("SequenceMask"), _mask,
                ("out_grad", "in_data"), _np_mask, lambda draw: _case(draw, True),
                "Set every step past each sequence's length to ``value``: with time on "
                "``axis`` (0 or 1) and batch on the other, ``out[t, b] = value`` for "
                "``t >= sequence_length[b]``, else data.  Without use_sequence_length the "
                "input passes unchanged.  Dtype = data's.  Gradient: the head gradient inside "
                "the sequences, 0 in the masked steps; lengths get zero."),
    _backward_op("SequenceMask", SequenceMaskParam, _mask_back),
    _forward_op("SequenceLast", SequenceParam, _last_infer, _last, ("out_grad", "in_data"),
                _np_last, lambda draw: _case(draw, False),
                "The last step of each sequence: ``out[b] = data[sequence_length[b] - 1, b]`` "
                "(time on ``axis``, which the output drops; the final step without "
                "use_sequence_length).  Dtype = data's.  Gradient: the head gradient at each "
                "sequence's last step, zero elsewhere; lengths get zero."),
    _backward_op("SequenceLast", SequenceParam, _last_back),
    _forward_op("SequenceReverse", SequenceParam, _reverse_infer, _reverse,
                ("out_grad", "in_data"), _np_reverse, lambda draw: _case(draw, False, (0,)),
                "Reverse each sequence in time: the first ``sequence_length[b]`` steps of "
                "batch entry b in reverse order, padding steps left in place (time must be "
                "axis 0).  Dtype = data's.  Gradient: the head gradient reversed the same way; "
                "lengths get zero."),
    _backward_op("SequenceReverse", SequenceParam, _reverse_back),
]
