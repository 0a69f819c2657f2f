"""Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, the norms
(ReduceL1, ReduceL2, ReduceSumSquare), ReduceLogSum(Exp), ArgMax and ArgMin."""

from __future__ import annotations

import numpy as np

from ... import symbol as sym
from ._context import ImportNode
from ._table import IMPORTS


def _axes_of(node: ImportNode) -> tuple[int, ...] | None | str:
    """The reduced axes; None for all of them; "none" when the node reduces nothing."""
    axes = node.axes()
    if axes is None or len(axes) == 0:
        return "none" if node.attr("noop_with_empty_axes", 0) else None
    return tuple(axes)


def _numpy(node: ImportNode, function, axes) -> np.ndarray:
    keep = bool(node.attr("keepdims", 1))
    return np.asarray(function(node.const(0), axis=axes, keepdims=keep))


def _reduction(numpy_fn, build):
    def convert(node: ImportNode):
        axes = _axes_of(node)
        if axes == "none":
            return node.values[0] if node.is_const(0) else sym.identity(node.sym(0))
        if node.is_const(0):
            return _numpy(node, numpy_fn, axes)
        return build(node, node.sym(0), axes, bool(node.attr("keepdims", 1)))

    return convert


def _simple(op_name: str):
    def build(node, x, axes, keepdims):
        return getattr(sym, op_name)(x, axis=axes, keepdims=keepdims, name=node.sym_name)

    return build


REDUCE = {
    "ReduceSum": (np.sum, _simple("sum")),
    "ReduceMean": (np.mean, _simple("mean")),
    "ReduceMax": (np.max, _simple("max")),
    "ReduceMin": (np.min, _simple("min")),
    "ReduceProd": (np.prod, _simple("prod")),
    "ReduceL1": (lambda x, axis, keepdims: np.sum(np.abs(x), axis=axis, keepdims=keepdims),
                 lambda n, x, a, k: sym.norm(x, ord=1, axis=a, keepdims=k, name=n.sym_name)),
    "ReduceL2": (lambda x, axis, keepdims: np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims)),
                 lambda n, x, a, k: sym.norm(x, ord=2, axis=a, keepdims=k, name=n.sym_name)),
    "ReduceSumSquare": (lambda x, axis, keepdims: np.sum(x * x, axis=axis, keepdims=keepdims),
                        lambda n, x, a, k: sym.sum(sym.square(x), axis=a, keepdims=k,
                                                   name=n.sym_name)),
    "ReduceLogSum": (lambda x, axis, keepdims: np.log(np.sum(x, axis=axis, keepdims=keepdims)),
                     lambda n, x, a, k: sym.log(sym.sum(x, axis=a, keepdims=k),
                                                name=n.sym_name)),
    "ReduceLogSumExp": (
        lambda x, axis, keepdims: np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims)),
        lambda n, x, a, k: sym.log(sym.sum(sym.exp(x), axis=a, keepdims=k), name=n.sym_name)),
}

for _name, (_numpy_fn, _build) in REDUCE.items():
    _convert = _reduction(_numpy_fn, _build)
    _convert.__doc__ = f"{_name} over the axes (attribute or input), keepdims."
    IMPORTS.add(_name, _convert)


def _arg(op_name: str, numpy_fn):
    def convert(node: ImportNode):
        axis = int(node.attr("axis", 0))
        keepdims = bool(node.attr("keepdims", 1))
        if node.attr("select_last_index", 0):
            raise node.fail("select_last_index=1 (ties resolved to the last index)")
        if node.is_const(0):
            found = numpy_fn(node.const(0), axis=axis)
            return np.expand_dims(found, axis) if keepdims else np.asarray(found)
        found = getattr(sym, op_name)(node.sym(0), axis=axis, keepdims=keepdims)
        return sym.Cast(found, dtype="int64", name=node.sym_name)

    convert.__doc__ = f"{op_name} along the axis, as int64."
    return convert


IMPORTS.add("ArgMax", _arg("argmax", np.argmax))
IMPORTS.add("ArgMin", _arg("argmin", np.argmin))
