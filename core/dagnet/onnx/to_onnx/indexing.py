"""Indexing and selection: take, Embedding, gather_nd, pick, one_hot, where, and the
sorting family (topk, argsort, sort, argmax, argmin)."""

from __future__ import annotations

import numpy as np

from ._context import ExportNode, OnnxBuilder
from ._table import EXPORTS

INT64 = np.int64


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _bounded(g: OnnxBuilder, index: str, size: str, mode: str) -> str:
    """int64 ``index`` into an axis of ``size`` (1-D), as MXNet's clip or wrap mode."""
    if mode == "wrap":
        return g.op("Mod", [index, size], fmod=0)
    if mode == "clip":
        highest = g.op("Sub", [size, g.ints(1)])
        return g.op("Min", [g.op("Max", [index, g.ints(0)]), highest])
    return index


@EXPORTS.register("take")
def take(node: ExportNode, g: OnnxBuilder) -> None:
    """Gather along the axis, indices cast to int64 and clipped or wrapped by mode."""
    rank = node.rank(0)
    axis = _axis(int(node.attrs.axis), rank)
    size = g.dims(node.inputs[0], axis, axis + 1)
    index = _bounded(g, g.cast(node.inputs[1], INT64), size, node.attrs.mode)
    g.op("Gather", [node.inputs[0], index], [node.outputs[0]], axis=axis)


@EXPORTS.register("Embedding")
def embedding(node: ExportNode, g: OnnxBuilder) -> None:
    """Gather of weight rows, indices cast to int64 and clipped to the table."""
    size = g.dims(node.inputs[1], 0, 1)
    index = _bounded(g, g.cast(node.inputs[0], INT64), size, "clip")
    g.op("Gather", [node.inputs[1], index], [node.outputs[0]], axis=0)


@EXPORTS.register("gather_nd")
def gather_nd(node: ExportNode, g: OnnxBuilder) -> None:
    """GatherND; MXNet's index tuples run along the first axis of indices, ONNX's along
    the last, so indices are transposed."""
    rank = node.rank(1)
    index = g.cast(node.inputs[1], INT64)
    if rank > 1:
        index = g.op("Transpose", [index], perm=[*range(1, rank), 0])
    else:
        index = g.unsqueeze(index, [0])
    g.op("GatherND", [node.inputs[0], index], [node.outputs[0]])


@EXPORTS.register("pick", "batch_take")
def pick(node: ExportNode, g: OnnxBuilder) -> None:
    """GatherElements of one index per position along the axis (batch_take: axis 1)."""
    rank = node.rank(0)
    if node.op == "batch_take":
        axis, keepdims, mode = 1, False, "clip"
    else:
        axis = _axis(int(node.attrs.axis), rank) if node.attrs.axis is not None else None
        keepdims, mode = bool(node.attrs.keepdims), node.attrs.mode
    data = node.inputs[0]
    if axis is None:
        data, axis, rank = g.reshape(data, [-1]), 0, 1
    size = g.dims(data, axis, axis + 1)
    index = _bounded(g, g.cast(node.inputs[1], INT64), size, mode)
    if node.rank(1) < rank:
        index = g.unsqueeze(index, [axis])
    picked = g.op("GatherElements", [data, index], [node.outputs[0]] if keepdims else 1,
                  axis=axis)
    if not keepdims:
        g.squeeze(picked, [axis], node.outputs[0])


@EXPORTS.register("one_hot")
def one_hot(node: ExportNode, g: OnnxBuilder) -> None:
    """OneHot in float32 then cast to the dtype; negative indices are all off_value as
    in MXNet (ONNX would count them from the end)."""
    a = node.attrs
    depth = int(a.depth)
    index = g.cast(node.inputs[0], INT64)
    negative = g.op("Less", [index, g.scalar(0, INT64)])
    index = g.op("Where", [negative, g.scalar(depth, INT64), index])
    values = g.const(np.array([a.off_value, a.on_value], dtype=np.float32))
    hot = g.op("OneHot", [index, g.scalar(depth, INT64), values], axis=-1)
    g.cast_if(hot, np.float32, node.out_dtypes[0], node.outputs[0])


@EXPORTS.register("where")
def where(node: ExportNode, g: OnnxBuilder) -> None:
    """Where with the condition as booleans; a 1-D condition picks whole rows of
    higher-dimensional data (MXNet), so it gets trailing axes of size 1."""
    condition = g.op("Not", [g.op("Equal", [node.inputs[0],
                                            g.scalar(0, node.in_dtypes[0])])])
    rank = node.rank(1)
    if node.rank(0) == 1 and rank > 1:
        condition = g.unsqueeze(condition, list(range(1, rank)))
    g.op("Where", [condition, node.inputs[1], node.inputs[2]], [node.outputs[0]])


# sorting -------------------------------------------------------------------------------
def _top(g: OnnxBuilder, x: str, k: str, axis: int, largest: bool) -> list[str]:
    return g.op("TopK", [x, k], 2, axis=axis, largest=int(largest), sorted=1)


def _axis_size(g: OnnxBuilder, x: str, axis: int) -> str:
    return g.dims(x, axis, axis + 1)


@EXPORTS.register("topk")
def topk(node: ExportNode, g: OnnxBuilder) -> None:
    """TopK (k < 1: the whole axis); indices cast to the dtype; ret_typ 'mask' scatters
    ones at the chosen positions."""
    a = node.attrs
    rank = node.rank(0)
    x = node.inputs[0]
    if a.axis is None:
        x, axis = g.reshape(x, [-1]), 0
    else:
        axis = _axis(int(a.axis), rank)
    k = g.ints(int(a.k)) if int(a.k) >= 1 else _axis_size(g, x, axis)
    values, indices = _top(g, x, k, axis, not a.is_ascend)
    kind = a.ret_typ
    if kind == "value":
        g.identity(values, node.outputs[0])
    elif kind == "indices":
        g.cast(indices, node.out_dtypes[0], node.outputs[0])
    elif kind == "both":
        g.identity(values, node.outputs[0])
        g.cast(indices, node.out_dtypes[1], node.outputs[1])
    else:
        dtype = node.out_dtypes[0]
        zeros = g.op("ConstantOfShape", [g.shape(x)],
                     value=g.onnx.numpy_helper.from_array(np.zeros(1, dtype=dtype)))
        ones = g.op("Expand", [g.scalar(1, dtype), g.shape(indices)])
        g.op("ScatterElements", [zeros, indices, ones], [node.outputs[0]], axis=axis)


@EXPORTS.register("argsort", "sort")
def argsort(node: ExportNode, g: OnnxBuilder) -> None:
    """TopK over the whole axis: the indices (argsort, cast to the dtype) or values."""
    a = node.attrs
    x = node.inputs[0]
    if a.axis is None:
        x, axis = g.reshape(x, [-1]), 0
    else:
        axis = _axis(int(a.axis), node.rank(0))
    values, indices = _top(g, x, _axis_size(g, x, axis), axis, not a.is_ascend)
    if node.op == "sort":
        g.identity(values, node.outputs[0])
    else:
        g.cast(indices, node.out_dtypes[0], node.outputs[0])


@EXPORTS.register("argmax", "argmin", "argmax_channel")
def arg_extreme(node: ExportNode, g: OnnxBuilder) -> None:
    """ArgMax or ArgMin (first occurrence), as the float dtype MXNet returns; without an
    axis over the flattened data."""
    onnx_op = "ArgMin" if node.op == "argmin" else "ArgMax"
    x = node.inputs[0]
    if node.op == "argmax_channel":
        axis, keepdims = node.rank(0) - 1, False
    else:
        axis, keepdims = node.attrs.axis, bool(node.attrs.keepdims)
    if axis is None:
        found = g.op(onnx_op, [g.reshape(x, [-1])], axis=0, keepdims=1)
        found = g.reshape(found, [int(d) for d in node.out_shapes[0]])
    else:
        found = g.op(onnx_op, [x], axis=_axis(int(axis), node.rank(0)), keepdims=int(keepdims))
    g.cast(found, node.out_dtypes[0], node.outputs[0])
