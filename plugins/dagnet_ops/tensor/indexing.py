"""Indexing operators (MXNet's ``indexing_op.cc``, ``control_flow_op.cc``):
``take``, ``pick``, ``batch_take``, ``one_hot``, ``gather_nd``, ``where``.

Indices may be given in any dtype (MXNet passes float32 arrays); a
fractional index is truncated toward zero.  Out-of-range indices follow
``mode``: ``clip`` to the valid range, ``wrap`` around (Python's modulo), or
``raise`` an error.  Indices and conditions get a zero gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import OperatorError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    DType,
    Field,
    Gradient,
    NoParams,
    Op,
    Params,
    ZeroGradient,
    merge_dtype,
    merge_shape,
)
from dagnet.util import dim_is_known

from . import _sampling as S
from ._common import (
    backward_op,
    first_input_type,
    fixed_out_type,
    known,
    norm_axis,
    put,
    scatter_add,
    shape_error,
    shape_str,
    with_attrs,
)


def _index(xp: Any, indices: Any, size: int, mode: str, op: str) -> Any:
    """Integer indices into an axis of ``size`` elements, out-of-range ones handled by ``mode``."""
    i = indices.astype(np.int64)  # truncation toward zero, as MXNet's cast
    if mode == "clip":
        return xp.clip(i, 0, size - 1)
    if mode == "wrap":
        return xp.mod(i, size)
    if bool(xp.any((i < 0) | (i >= size))):
        raise OperatorError(f"operator {op!r}: an index is out of bounds for an axis of size "
                            f"{size} (mode='raise'; use mode='clip' or 'wrap' to allow it)")
    return i


# -- take ---------------------------------------------------------------------------------------
class TakeParam(Params):
    axis = Field(int, 0, "The axis of input array to be taken. For input tensor of rank r, it "
                         "could be in the range of [-r, r-1]")
    mode = Field(str, "clip", "Specify how out-of-bound indices bahave. Default is \"clip\". "
                              "\"clip\" means clip to the range. So, if all indices mentioned are "
                              "too large, they are replaced by the index that addresses the last "
                              "element along an axis. \"wrap\" means to wrap around. \"raise\" "
                              "means to raise an error.", choices=("clip", "raise", "wrap"))


def _take_infer(attrs, ins, outs):
    a, idx = ins
    if not (known(a) and idx is not None):
        return ins, outs
    axis = norm_axis("take", attrs.axis, len(a))
    return ins, [tuple(a[:axis]) + tuple(idx) + tuple(a[axis + 1:])]


def _take(attrs, ctx, inputs, req, outputs):
    a, idx = inputs
    axis = norm_axis("take", attrs.axis, a.ndim)
    i = _index(ctx.xp, idx, a.shape[axis], attrs.mode, "take")
    put(outputs[0], req[0], ctx.xp.take(a, i, axis=axis))


def _take_back(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, a, idx = inputs
    axis = norm_axis("take", attrs.axis, a.ndim)
    i = _index(xp, idx, a.shape[axis], attrs.mode, "take").ravel()
    # with the taken axis first, row i of the gradient collects every head-gradient row
    # taken from it (accumulating repeated indices)
    rows = xp.moveaxis(g.reshape(a.shape[:axis] + (i.size,) + a.shape[axis + 1:]), axis, 0)
    grad = xp.zeros((a.shape[axis],) + rows.shape[1:], dtype=outputs[0].dtype)
    scatter_add(xp, grad, i, rows)
    put(outputs[0], req[0], xp.moveaxis(grad, 0, axis))
    put(outputs[1], req[1], 0)


def _take_sample(draw):
    shape = S.shape(draw)
    axis = S.axis(draw, len(shape))
    mode = S.choice(draw, ["clip", "wrap", "raise"], "mode")
    n = shape[axis]
    lo, hi = (0, n - 1) if mode == "raise" else (-n - 1, 2 * n)
    return Case([S.floats(draw, shape), S.integers(draw, S.shape(draw, max_dims=2), lo, hi)],
                {"axis": axis, "mode": mode})


def _np_take(p, a, idx):
    n = a.shape[p.axis]
    i = idx.astype(np.int64)
    i = np.clip(i, 0, n - 1) if p.mode == "clip" else np.mod(i, n)
    return np.take(a, i, axis=p.axis)


# -- pick ---------------------------------------------------------------------------------------
class PickParam(Params):
    axis = Field(int, -1, "int or None. The axis to picking the elements. Negative values means "
                          "indexing from right to left. If is `None`, the elements in the index "
                          "w.r.t the flattened input will be picked.", optional=True)
    keepdims = Field(bool, False, "If true, the axis where we pick the elements is left in the "
                                  "result as dimension with size one.")
    mode = Field(str, "clip", "Specify how out-of-bound indices behave. Default is \"clip\". "
                              "\"clip\" means clip to the range. So, if all indices mentioned are "
                              "too large, they are replaced by the index that addresses the last "
                              "element along an axis.  \"wrap\" means to wrap around.",
                 choices=("clip", "wrap"))


def _pick_axis(attrs: PickParam, ndim: int) -> int:
    if attrs.axis is None:
        raise shape_error("pick", "axis=None is not supported by pick (as in MXNet); give an axis")
    return norm_axis("pick", attrs.axis, ndim)


def _pick_infer(attrs, ins, outs):
    data, idx = ins
    if data is None:
        return ins, outs
    axis = _pick_axis(attrs, len(data))
    out = tuple(1 if i == axis else d for i, d in enumerate(data)) if attrs.keepdims else \
        (tuple(d for i, d in enumerate(data) if i != axis) or (1,))
    if not known(data):  # partial: the known dimensions pass through, index takes them too
        return [tuple(data), merge_shape(idx, out, "pick index") if idx is not None and
                len(idx) == len(out) else idx], [merge_shape(out, outs[0], "pick output")]
    if idx is not None and int(np.prod(idx)) != int(np.prod(out)):
        raise shape_error("pick", f"index has shape {tuple(idx)} but picking along axis {axis} "
                                  f"of data {tuple(data)} needs {out}")
    return [tuple(data), idx if idx is not None else out], [out]


def _picked(xp: Any, attrs: PickParam, data: Any, idx: Any) -> tuple[int, Any]:
    """The axis and the indices shaped like data with size 1 at that axis."""
    axis = _pick_axis(attrs, data.ndim)
    kept = tuple(1 if i == axis else d for i, d in enumerate(data.shape))
    return axis, _index(xp, idx, data.shape[axis], attrs.mode, "pick").reshape(kept)


def _pick(attrs, ctx, inputs, req, outputs):
    data, idx = inputs
    axis, i = _picked(ctx.xp, attrs, data, idx)
    put(outputs[0], req[0], ctx.xp.take_along_axis(data, i, axis=axis))


def _pick_back(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, data, idx = inputs
    axis, i = _picked(xp, attrs, data, idx)
    positions = xp.arange(data.shape[axis]).reshape(
        [-1 if d == axis else 1 for d in range(data.ndim)])
    put(outputs[0], req[0], (positions == i) * g.reshape(i.shape))
    put(outputs[1], req[1], 0)


def _pick_sample(draw):
    shape = S.shape(draw)
    axis = S.axis(draw, len(shape))
    mode = S.choice(draw, ["clip", "wrap"], "mode")
    keepdims = S.boolean(draw, "keepdims")
    n = shape[axis]
    out = tuple(1 if i == axis % len(shape) else d for i, d in enumerate(shape)) if keepdims else \
        (tuple(d for i, d in enumerate(shape) if i != axis % len(shape)) or (1,))
    return Case([S.floats(draw, shape), S.integers(draw, out, -n - 1, 2 * n)],
                {"axis": axis, "mode": mode, "keepdims": keepdims})


def _np_pick(p, data, idx):
    axis = p.axis % data.ndim
    n = data.shape[axis]
    i = idx.astype(np.int64)
    i = np.clip(i, 0, n - 1) if p.mode == "clip" else np.mod(i, n)
    out = np.take_along_axis(data, np.expand_dims(i.reshape(
        [d for k, d in enumerate(data.shape) if k != axis]), axis), axis=axis)
    return out if p.keepdims else out.reshape(out.shape[:axis] + out.shape[axis + 1:] or (1,))


# -- batch_take ---------------------------------------------------------------------------------
def _batch_take_infer(attrs, ins, outs):
    a, idx = ins
    if known(a) and idx is not None and int(np.prod(idx)) * a[-1] != int(np.prod(a)):
        raise shape_error("batch_take", f"indices of shape {tuple(idx)} must have one entry per "
                                        f"row of a {tuple(a)} (all but its last axis: "
                                        f"{int(np.prod(a)) // a[-1]})")
    return ins, [idx] if idx is not None else outs


def _batch_rows(xp: Any, a: Any, idx: Any) -> tuple[Any, Any]:
    n = a.shape[-1]
    i = _index(xp, idx, n, "clip", "batch_take").ravel()
    return xp.arange(i.size), i


def _batch_take(attrs, ctx, inputs, req, outputs):
    a, idx = inputs
    rows, cols = _batch_rows(ctx.xp, a, idx)
    put(outputs[0], req[0], a.reshape(-1, a.shape[-1])[rows, cols])


def _batch_take_back(attrs, ctx, inputs, req, outputs):
    g, a, idx = inputs
    rows, cols = _batch_rows(ctx.xp, a, idx)
    grad = ctx.xp.zeros((rows.size, a.shape[-1]), dtype=outputs[0].dtype)
    grad[rows, cols] = g.ravel()  # one entry per row: no index repeats
    put(outputs[0], req[0], grad.reshape(a.shape))
    put(outputs[1], req[1], 0)


def _batch_take_sample(draw):
    shape = S.shape(draw, min_dims=2)
    rows = int(np.prod(shape[:-1]))
    return Case([S.floats(draw, shape), S.integers(draw, (rows,), -1, shape[-1])])


def _np_batch_take(raw, a, idx):
    a2 = a.reshape(-1, a.shape[-1])
    i = np.clip(idx.astype(np.int64).ravel(), 0, a.shape[-1] - 1)
    return a2[np.arange(i.size), i].reshape(idx.shape)


# -- one_hot ------------------------------------------------------------------------------------
class OneHotParam(Params):
    depth = Field(int, REQUIRED, "Depth of the one hot dimension.", low=0)
    on_value = Field(float, 1.0, "The value assigned to the locations represented by indices.")
    off_value = Field(float, 0.0, "The value assigned to the locations not represented by "
                                  "indices.")
    dtype = Field(DType, "float32", "DType of the output",
                  choices=("bfloat16", "float16", "float32", "float64", "int32", "int64", "int8",
                           "uint8"))


def _one_hot(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    i = inputs[0].astype(np.int64)[..., None]
    # negative and too-large indices match no position: the whole row is off_value
    put(outputs[0], req[0], xp.where(i == xp.arange(attrs.depth), attrs.on_value, attrs.off_value))


def _one_hot_sample(draw):
    depth = S.integer(draw, 1, 4, "depth")
    return Case([S.integers(draw, S.shape(draw, max_dims=2), -1, depth)],
                {"depth": depth, "on_value": S.number(draw, -2, 2, label="on"),
                 "off_value": S.number(draw, -2, 2, label="off"),
                 "dtype": S.choice(draw, ["float32", "float64", "int32"], "dtype")})


def _np_one_hot(p, idx):
    i = idx.astype(np.int64)[..., None]
    return np.where(i == np.arange(p.depth), p.on_value, p.off_value).astype(p.dtype)


# -- gather_nd ----------------------------------------------------------------------------------
def _gather_infer(attrs, ins, outs):
    data, idx = ins
    if not (known(data) and known(idx)):
        return ins, outs
    m = idx[0]
    if m > len(data):
        raise shape_error("gather_nd", f"indices of shape {tuple(idx)} index {m} axes but data "
                                       f"{tuple(data)} has {len(data)}")
    return ins, [tuple(idx[1:]) + tuple(data[m:]) or (1,)]


def _gather_index(idx: Any) -> tuple:
    i = idx.astype(np.int64)
    return tuple(i[k] for k in range(i.shape[0]))


def _gather(attrs, ctx, inputs, req, outputs):
    data, idx = inputs
    put(outputs[0], req[0], data[_gather_index(idx)])


def _gather_back(attrs, ctx, inputs, req, outputs):
    g, data, idx = inputs
    grad = ctx.xp.zeros(data.shape, dtype=outputs[0].dtype)
    scatter_add(ctx.xp, grad, _gather_index(idx), g)
    put(outputs[0], req[0], grad)
    put(outputs[1], req[1], 0)


def _gather_sample(draw):
    shape = S.shape(draw)
    m = S.integer(draw, 1, len(shape), "indexed axes")
    rest = S.shape(draw, max_dims=2)
    rows = [S.integers(draw, rest, -d, d - 1) for d in shape[:m]]
    return Case([S.floats(draw, shape), np.stack(rows)])


# -- where --------------------------------------------------------------------------------------
def _where_infer(attrs, ins, outs):
    cond, x, y = ins
    merged = None
    for label, s in (("x", x), ("y", y), ("output", outs[0])):
        try:
            merged = merge_shape(merged, s, "")
        except Exception:
            raise shape_error("where", f"argument {label!r} has shape {tuple(s)} but "
                                       f"{shape_str(merged)} was inferred for x, y and the "
                                       f"output") from None
    if cond is not None and merged is not None:
        # 0 is an unknown dimension: compare only what both sides know
        rows = len(cond) == 1 and len(merged) > 1 and not (
            dim_is_known(cond[0]) and dim_is_known(merged[0]) and cond[0] != merged[0])
        if not rows:
            try:
                merged = merge_shape(merged, cond, "")
            except Exception:
                raise shape_error("where", f"condition has shape {tuple(cond)}; it must be x's "
                                           f"shape {tuple(merged)} or 1-D of length "
                                           f"{merged[0]}") from None
            cond = merged
    # as MXNet, the output is inferred only once the condition's shape is fully known
    out = merged if known(cond) else outs[0]
    return [cond if cond is not None else merged, merged, merged], [out]


def _where_type(attrs, ins, outs):
    merged = None
    for t in (ins[1], ins[2], outs[0]):
        merged = merge_dtype(merged, t, "operator 'where' x, y and output")
    return [ins[0] if ins[0] is not None else merged, merged, merged], [merged]


def _condition(cond: Any, like: Any) -> Any:
    """Nonzero condition, shaped to broadcast against ``like`` (a 1-D condition picks rows)."""
    c = cond != 0
    return c.reshape(c.shape + (1,) * (like.ndim - c.ndim))


def _where(attrs, ctx, inputs, req, outputs):
    cond, x, y = inputs
    put(outputs[0], req[0], ctx.xp.where(_condition(cond, x), x, y))


def _where_back(attrs, ctx, inputs, req, outputs):
    g, cond, x, _ = inputs
    c = _condition(cond, x)
    put(outputs[0], req[0], 0)
    put(outputs[1], req[1], g * c)
    put(outputs[2], req[2], g * ~c)


def _where_sample(draw):
    shape = S.shape(draw)
    cshape = shape if S.boolean(draw, "full condition") else shape[:1]
    return Case([S.integers(draw, cshape, -1, 1), S.floats(draw, shape), S.floats(draw, shape)])


def _np_where(raw, cond, x, y):
    c = (cond != 0).reshape(cond.shape + (1,) * (x.ndim - cond.ndim))
    return np.where(c, x, y)


OPS: list[Op] = [
    Op("take", params=TakeParam, num_inputs=2, input_names=["a", "indices"],
       infer_shape=_take_infer, infer_type=first_input_type(1), compute={XP: _take},
       gradient=Gradient("_backward_take", ("out_grad", "in_data")),
       domain=Domain(_take_sample, differentiable=(0,),
                     reference=with_attrs(TakeParam, "take", _np_take)),
       description="Take elements of ``a`` along ``axis`` at ``indices``: the output has shape "
                   "``a.shape[:axis] + indices.shape + a.shape[axis+1:]``.  Indices of any dtype "
                   "are truncated to integers; out-of-range ones are clipped (default), wrapped "
                   "or raise an error, per ``mode``.  Dtype = a's.  Gradient: a gets the head "
                   "gradient summed into the taken positions (repeated indices accumulate); "
                   "indices get zero."),
    backward_op("take", TakeParam, 3, 2, _take_back),
    Op("pick", params=PickParam, num_inputs=2, input_names=["data", "index"],
       aliases=("choose_element_0index",), infer_shape=_pick_infer,
       infer_type=first_input_type(1), compute={XP: _pick},
       gradient=Gradient("_backward_pick", ("out_grad", "in_data")),
       domain=Domain(_pick_sample, differentiable=(0,),
                     reference=with_attrs(PickParam, "pick", _np_pick)),
       description="Pick one element per position along ``axis``: ``out[i, j] = data[i, "
                   "index[i, j], j]`` for axis 1 (index has the output's shape; a 1-D input "
                   "gives shape (1,)).  Indices are "
                   "truncated to integers and clipped or wrapped per ``mode``; axis=None is an "
                   "error (as MXNet).  Dtype = data's.  Gradient: the head gradient at the "
                   "picked positions, zero elsewhere; index gets zero."),
    backward_op("pick", PickParam, 3, 2, _pick_back),
    Op("batch_take", num_inputs=2, input_names=["a", "indices"], infer_shape=_batch_take_infer,
       infer_type=first_input_type(1), compute={XP: _batch_take},
       gradient=Gradient("_backward_batch_take", ("out_grad", "in_data")),
       domain=Domain(_batch_take_sample, differentiable=(0,), reference=_np_batch_take),
       description="One element per row: with ``a`` viewed as rows of its last axis, "
                   "``out[i] = a[i, indices[i]]`` (indices clipped to the row).  The output has "
                   "indices' shape and a's dtype.  Gradient: the head gradient at the taken "
                   "positions; indices get zero."),
    backward_op("batch_take", NoParams, 3, 2, _batch_take_back),
    Op("one_hot", params=OneHotParam, input_names=["indices"],
       infer_shape=lambda attrs, ins, outs: (ins, [tuple(ins[0]) + (attrs.depth,)])
       if ins[0] is not None else (ins, outs),
       infer_type=fixed_out_type(lambda attrs, ins: attrs.dtype), compute={XP: _one_hot},
       gradient=ZeroGradient(),
       domain=Domain(_one_hot_sample, reference=with_attrs(OneHotParam, "one_hot", _np_one_hot)),
       description="One-hot encoding: the output has shape ``indices.shape + (depth,)``, "
                   "``on_value`` at each index and ``off_value`` elsewhere, in ``dtype`` "
                   "(default float32).  Indices are truncated to integers; a negative or too "
                   "large index gives a row of off_value.  Gradient zero."),
    Op("gather_nd", num_inputs=2, input_names=["data", "indices"], infer_shape=_gather_infer,
       infer_type=first_input_type(1), compute={XP: _gather},
       gradient=Gradient("_backward_gather_nd", ("out_grad", "in_data")),
       domain=Domain(_gather_sample, differentiable=(0,),
                     reference=lambda raw, data, idx: data[tuple(idx.astype(np.int64))]),
       description="Gather slices: indices of shape (M, Y...) address the first M axes of "
                   "data, ``out[y...] = data[indices[0, y...], ..., indices[M-1, y...]]``, shape "
                   "``indices.shape[1:] + data.shape[M:]`` ((1,) if that is empty).  Negative "
                   "indices count from the end.  Dtype = data's.  Gradient: the head gradient "
                   "summed into the gathered positions (scatter_nd with accumulation); indices "
                   "get zero."),
    backward_op("gather_nd", NoParams, 3, 2, _gather_back),
    Op("where", num_inputs=3, input_names=["condition", "x", "y"], infer_shape=_where_infer,
       infer_type=_where_type, compute={XP: _where},
       gradient=Gradient("_backward_where", ("out_grad", "in_data")),
       domain=Domain(_where_sample, differentiable=(1, 2), reference=_np_where),
       description="Elements of x where condition is nonzero, else of y.  condition has x's "
                   "shape or is 1-D of length x.shape[0] (then it selects whole rows); x and y "
                   "share shape and dtype, which the output keeps; condition may have any "
                   "dtype.  Gradient: x gets the head gradient where condition is nonzero, y "
                   "where it is zero, condition gets zero."),
    backward_op("where", NoParams, 4, 3, _where_back),
]
