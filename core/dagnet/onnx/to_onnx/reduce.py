"""Reductions: sum, mean, max, min, prod (and the NaN-skipping sum and product),
norm and moments."""

from __future__ import annotations

import numpy as np

from ._context import ExportNode, OnnxBuilder
from ._table import EXPORTS

REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin",
          "prod": "ReduceProd", "nansum": "ReduceSum", "nanprod": "ReduceProd"}


def _axes(axis, rank: int, exclude: bool = False) -> list[int]:
    """The reduced axes, in order (None or () reduce all of them)."""
    if axis is None or (not isinstance(axis, int) and len(axis) == 0):
        chosen = set(range(rank))
    else:
        chosen = {int(a) % rank for a in np.atleast_1d(axis)}
    if exclude:
        chosen = set(range(rank)) - chosen
    return sorted(chosen)


def _finish(node: ExportNode, g: OnnxBuilder, reduced: str, every_axis: bool,
            keepdims: bool, out: str) -> None:
    """Give the result MXNet's shape: reducing every axis without keepdims is (1,) in
    MXNet 1.x, a scalar in ONNX."""
    if every_axis and not keepdims:
        g.reshape(reduced, [int(d) for d in node.out_shapes[0]], out)
    else:
        g.identity(reduced, out)


@EXPORTS.register(*REDUCE)
def reduction(node: ExportNode, g: OnnxBuilder) -> None:
    """The matching Reduce* over the axes (or all but them with exclude); nansum and
    nanprod first replace NaN with 0 or 1."""
    a = node.attrs
    rank = node.rank(0)
    axes = _axes(a.axis, rank, bool(a.exclude))
    x, dtype = node.inputs[0], node.in_dtypes[0]
    if node.op in ("nansum", "nanprod") and np.issubdtype(dtype, np.floating):
        neutral = g.scalar(0 if node.op == "nansum" else 1, dtype)
        x = g.op("Where", [g.op("IsNaN", [x]), neutral, x])
    if not axes:
        g.identity(x, node.outputs[0])
        return
    every = len(axes) == rank
    reduced = g.reduce(REDUCE[node.op], x, axes, bool(a.keepdims),
                       None if every and not a.keepdims else node.outputs[0])
    _finish(node, g, reduced, every, bool(a.keepdims), node.outputs[0])


@EXPORTS.register("norm")
def norm(node: ExportNode, g: OnnxBuilder) -> None:
    """ReduceL1 (ord 1) or ReduceL2 (ord 2) over the axes."""
    a = node.attrs
    rank = node.rank(0)
    order = int(a.ord)
    if order not in (1, 2):
        raise node.fail(f"ord={order}: only the L1 and L2 norms have ONNX reductions")
    axes = _axes(a.axis, rank)
    every = len(axes) == rank
    x = node.inputs[0]
    result = g.reduce("ReduceL1" if order == 1 else "ReduceL2", x, axes, bool(a.keepdims))
    out_dtype = node.out_dtypes[0]
    if out_dtype is not None and out_dtype != node.in_dtypes[0]:
        result = g.cast(result, out_dtype)
    _finish(node, g, result, every, bool(a.keepdims), node.outputs[0])


@EXPORTS.register("moments")
def moments(node: ExportNode, g: OnnxBuilder) -> None:
    """Mean and population variance over the axes (ReduceMean twice)."""
    a = node.attrs
    rank = node.rank(0)
    axes = _axes(a.axes, rank)
    every = len(axes) == rank
    x = node.inputs[0]
    mean_kept = g.reduce("ReduceMean", x, axes, True)
    centred = g.op("Sub", [x, mean_kept])
    variance = g.reduce("ReduceMean", g.op("Mul", [centred, centred]), axes, bool(a.keepdims))
    mean = mean_kept if a.keepdims else g.squeeze(mean_kept, axes)
    for value, index in ((mean, 0), (variance, 1)):
        if every and not a.keepdims:
            g.reshape(value, [int(d) for d in node.out_shapes[index]], node.outputs[index])
        else:
            g.identity(value, node.outputs[index])
