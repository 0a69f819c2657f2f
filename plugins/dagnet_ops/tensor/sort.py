"""Sorting (MXNet's ``ordering_op.cc``): ``sort``, ``argsort``, ``topk``.

Sorts are stable in both directions (equal elements keep their order, as
MXNet's), ``axis=None`` works on the flattened array, and indices come back
as floats by default (``dtype='float32'``, MXNet's convention).

Gradients: ``sort`` and topk's values route the head gradient back to the
elements' original positions (MXNet's own ``sort`` backward fails; this one
works); ``argsort`` and topk's indices and mask are piecewise constant, so
their gradient is zero.  The backward recomputes the order from the input
instead of keeping MXNet's hidden index output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet.operator import XP, Case, Domain, DType, Field, Gradient, Op, Params, ZeroGradient

from . import _sampling as S
from ._common import (
    backward_op,
    fixed_out_type,
    norm_axis,
    put,
    shape_error,
    stable_argsort,
    with_attrs,
)

_INDEX_DTYPES = ("float16", "float32", "float64", "int32", "int64", "uint8")


class SortParam(Params):
    axis = Field(int, -1, "Axis along which to choose sort the input tensor. If not given, the "
                          "flattened array is used. Default is -1.", optional=True)
    is_ascend = Field(bool, True, "Whether to sort in ascending or descending order.")


class ArgSortParam(SortParam):
    dtype = Field(DType, "float32", "DType of the output indices. It is only valid when "
                                    "ret_typ is \"indices\" or \"both\". An error will be raised "
                                    "if the selected data type cannot precisely represent the "
                                    "indices.", choices=_INDEX_DTYPES)


class TopKParam(Params):
    axis = Field(int, -1, "Axis along which to choose the top k indices. If not given, the "
                          "flattened array is used. Default is -1.", optional=True)
    k = Field(int, 1, "Number of top elements to select, should be always smaller than or equal "
                      "to the element number in the given axis. A global sort is performed if "
                      "set k < 1.")
    ret_typ = Field(str, "indices", "The return type. \"value\" means to return the top k "
                                    "values, \"indices\" means to return the indices of the top "
                                    "k values, \"mask\" means to return a mask array containing "
                                    "0 and 1. 1 means the top k values. \"both\" means to return "
                                    "a list of both values and indices of top k elements.",
                    choices=("both", "indices", "mask", "value"))
    is_ascend = Field(bool, False, "Whether to choose k largest or k smallest elements. Top K "
                                   "largest elements will be chosen if set to false.")
    dtype = Field(DType, "float32", "DType of the output indices when ret_typ is \"indices\" or "
                                    "\"both\". An error will be raised if the selected data type "
                                    "cannot precisely represent the indices.",
                  choices=_INDEX_DTYPES)


def _order(op: str, xp: Any, attrs: Params, x: Any) -> tuple[Any, int, Any]:
    """(the array sorted over, its axis, the stable permutation along it)."""
    if attrs.axis is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = norm_axis(op, attrs.axis, x.ndim)
    return x, axis, stable_argsort(xp, x, axis, attrs.is_ascend)


def _sorted_shape(attrs: Params, shape: tuple) -> tuple:
    return (int(np.prod(shape)),) if attrs.axis is None else tuple(shape)


def _k(attrs: TopKParam, shape: tuple) -> tuple[int, int]:
    """(axis, k) for topk; k < 1 means the whole axis."""
    axis = 0 if attrs.axis is None else norm_axis("topk", attrs.axis, len(shape))
    n = int(np.prod(shape)) if attrs.axis is None else shape[axis]
    if attrs.k > n:
        raise shape_error("topk", f"k={attrs.k} is larger than the {n} elements along the axis")
    return axis, attrs.k if attrs.k >= 1 else n


def _route_back(xp: Any, g: Any, perm: Any, axis: int) -> Any:
    """The gradient of ``take_along_axis(x, perm[:k])``: ``g`` padded to the axis length and
    put back at each element's original position (through the inverse permutation)."""
    n = perm.shape[axis]
    if g.shape[axis] < n:
        pad = list(g.shape)
        pad[axis] = n - g.shape[axis]
        g = xp.concatenate([g, xp.zeros(pad, dtype=g.dtype)], axis=axis)
    return xp.take_along_axis(g, xp.argsort(perm, axis=axis), axis=axis)


# -- sort, argsort --------------------------------------------------------------------------------
def _sort(attrs, ctx, inputs, req, outputs):
    x, axis, perm = _order("sort", ctx.xp, attrs, inputs[0])
    put(outputs[0], req[0], ctx.xp.take_along_axis(x, perm, axis=axis))


def _sort_back(attrs, ctx, inputs, req, outputs):
    g, x = inputs
    flat, axis, perm = _order("sort", ctx.xp, attrs, x)
    put(outputs[0], req[0], _route_back(ctx.xp, g.reshape(flat.shape), perm, axis).reshape(x.shape))


def _argsort(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], _order("argsort", ctx.xp, attrs, inputs[0])[2])


def _sort_sample(draw, dtype: bool = False):
    shape = S.shape(draw)
    params: dict[str, Any] = {"is_ascend": S.boolean(draw, "is_ascend")}
    params["axis"] = None if S.boolean(draw, "axis None") else S.axis(draw, len(shape))
    if dtype:
        params["dtype"] = S.choice(draw, ["float32", "float64", "int32", "int64"], "dtype")
    return Case([S.grid(draw, shape)], params)  # distinct values: one correct order


def _np_order(p, x):
    """Reference order: numpy's stable sort; descending by negating (distinct values)."""
    flat = x.reshape(-1) if p.axis is None else x
    axis = 0 if p.axis is None else p.axis
    return flat, axis, np.argsort(flat if p.is_ascend else -flat, axis=axis, kind="stable")


# -- topk -----------------------------------------------------------------------------------------
def _topk_infer(attrs, ins, outs):
    data = ins[0]
    if data is None or not all(data):
        return ins, outs
    if attrs.ret_typ == "mask":
        return ins, [tuple(data)]
    axis, k = _k(attrs, tuple(data))
    shape = list(_sorted_shape(attrs, tuple(data)))
    shape[axis] = k
    return ins, [tuple(shape)] * (2 if attrs.ret_typ == "both" else 1)


def _topk_type(attrs, ins):
    return {"value": [ins[0]], "mask": [ins[0]], "indices": [attrs.dtype],
            "both": [ins[0], attrs.dtype]}[attrs.ret_typ]


def _topk(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    data = inputs[0]
    x, axis, perm = _order("topk", xp, attrs, data)
    _, k = _k(attrs, data.shape)
    if attrs.ret_typ == "mask":
        rank = xp.argsort(perm, axis=axis)
        put(outputs[0], req[0], (rank < k).reshape(data.shape))
        return
    top = xp.take(perm, xp.arange(k), axis=axis)
    results = {"value": [xp.take_along_axis(x, top, axis=axis)], "indices": [top],
               "both": [xp.take_along_axis(x, top, axis=axis), top]}[attrs.ret_typ]
    for out, r, value in zip(outputs, req, results):
        put(out, r, value)


def _topk_back(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    if attrs.ret_typ in ("indices", "mask"):
        put(outputs[0], req[0], 0)
        return
    g, data = inputs[0], inputs[-1]
    x, axis, perm = _order("topk", xp, attrs, data)
    put(outputs[0], req[0], _route_back(xp, g, perm, axis).reshape(data.shape))


def _topk_sample(draw):
    shape = S.shape(draw)
    axis = None if S.boolean(draw, "axis None") else S.axis(draw, len(shape))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    return Case([S.grid(draw, shape)], {
        "axis": axis, "k": S.integer(draw, 0, n, "k"),
        "ret_typ": S.choice(draw, ["value", "indices", "mask", "both"], "ret_typ"),
        "is_ascend": S.boolean(draw, "is_ascend"),
        "dtype": S.choice(draw, ["float32", "int32", "int64"], "dtype")})


def _np_topk(p, x):
    flat, axis, order = _np_order(p, x)
    n = flat.shape[axis]
    k = p.k if p.k >= 1 else n
    top = np.take(order, np.arange(k), axis=axis)
    if p.ret_typ == "mask":
        mask = np.zeros(flat.shape, x.dtype)
        np.put_along_axis(mask, top, 1, axis=axis)
        return mask.reshape(x.shape)
    values = np.take_along_axis(flat, top, axis=axis)
    indices = top.astype(p.dtype)
    return {"value": values, "indices": indices, "both": [values, indices]}[p.ret_typ]


def _np_sort(p, x):
    flat, axis, order = _np_order(p, x)
    return np.take_along_axis(flat, order, axis=axis)


_SORT_NOTE = ("Stable in both directions (equal elements keep their order); axis=None sorts "
              "the flattened array.")

OPS: list[Op] = [
    Op("sort", params=SortParam, input_names=["data"], output_names=["output0"],
       infer_shape=lambda attrs, ins, outs: (ins, [_sorted_shape(attrs, ins[0])])
       if ins[0] is not None else (ins, outs),
       compute={XP: _sort}, gradient=Gradient("_backward_sort", ("out_grad", "in_data")),
       domain=Domain(_sort_sample, reference=with_attrs(SortParam, "sort", _np_sort)),
       description="Sort along ``axis`` (default -1), ascending unless is_ascend=False.  "
                   + _SORT_NOTE + "  Dtype unchanged.  Gradient: the head gradient routed back "
                   "to each element's original position."),
    backward_op("sort", SortParam, 2, 1, _sort_back),
    Op("argsort", params=ArgSortParam, input_names=["data"],
       infer_shape=lambda attrs, ins, outs: (ins, [_sorted_shape(attrs, ins[0])])
       if ins[0] is not None else (ins, outs),
       infer_type=fixed_out_type(lambda attrs, ins: attrs.dtype), compute={XP: _argsort},
       gradient=ZeroGradient(),
       domain=Domain(lambda draw: _sort_sample(draw, dtype=True), reference=with_attrs(
           ArgSortParam, "argsort", lambda p, x: _np_order(p, x)[2].astype(p.dtype))),
       description="Indices that sort the input along ``axis`` (default -1).  " + _SORT_NOTE
                   + "  The indices have ``dtype`` (default float32, as MXNet).  Gradient zero."),
    Op("topk", params=TopKParam, input_names=["data"],
       num_outputs=lambda attrs: 2 if attrs.ret_typ == "both" else 1,
       output_names=lambda attrs: {"both": ["output0", "output1"], "value": ["output0"]}.get(
           attrs.ret_typ, ["output"]),
       infer_shape=_topk_infer, infer_type=fixed_out_type(_topk_type), compute={XP: _topk},
       gradient=Gradient("_backward_topk", ("out_grad", "in_data")),
       domain=Domain(_topk_sample, reference=with_attrs(TopKParam, "topk", _np_topk)),
       description="The k largest (is_ascend=False, default) or smallest elements along "
                   "``axis`` (default -1; None: the flattened array; k < 1: all of them).  "
                   "ret_typ picks the result: 'indices' (default; in ``dtype``, default "
                   "float32), 'value' (the elements, sorted), 'both' ([value, indices]) or "
                   "'mask' (1 at the chosen elements, 0 elsewhere, input's shape and dtype).  "
                   "Ties keep index order.  Gradient: for 'value'/'both' the values' head "
                   "gradient routed back to the chosen elements; zero for indices and mask."),
    backward_op("topk", TopKParam, lambda attrs: 3 if attrs.ret_typ == "both" else 2, 1,
                _topk_back),
]
