"""Operators that make arrays: constants (zeros, ones, full, arange, eye), arrays
shaped like an input, and random samplers."""

from __future__ import annotations

import numpy as np

from ... import ndarray as nd
from ._context import ExportNode, OnnxBuilder
from ._table import EXPORTS

INT64 = np.int64


def _tensor(g: OnnxBuilder, value: np.ndarray) -> object:
    return g.onnx.numpy_helper.from_array(np.ascontiguousarray(value))


@EXPORTS.register("_zeros", "_ones", "_full")
def filled(node: ExportNode, g: OnnxBuilder) -> None:
    """ConstantOfShape with the fill value in the dtype."""
    dtype = node.out_dtypes[0]
    value = {"_zeros": 0, "_ones": 1}.get(node.op)
    if value is None:
        value = node.attrs.value
    fill = np.array([value], dtype=np.float64).astype(dtype)
    shape = [int(d) for d in node.out_shapes[0]]
    g.op("ConstantOfShape", [g.ints(shape)], [node.outputs[0]], value=_tensor(g, fill))


@EXPORTS.register("_arange", "_eye", "_linspace")
def evaluated_constant(node: ExportNode, g: OnnxBuilder) -> None:
    """A Constant holding the operator's result, computed by dagnet (it has no inputs
    and no randomness, so the values are fixed)."""
    if getattr(node.attrs, "infer_range", False):
        raise node.fail("arange with infer_range takes its length from the graph; give stop")
    attrs = {k: v for k, v in node.raw_attrs.items() if not k.startswith("__")}
    value = getattr(nd.op, node.op)(**attrs).asnumpy()
    g.op("Constant", [], [node.outputs[0]], value=_tensor(g, value))


@EXPORTS.register("zeros_like", "ones_like")
def filled_like(node: ExportNode, g: OnnxBuilder) -> None:
    """ConstantOfShape of the input's shape, in the output's dtype."""
    fill = np.array([0 if node.op == "zeros_like" else 1]).astype(node.out_dtypes[0])
    g.op("ConstantOfShape", [g.shape(node.inputs[0])], [node.outputs[0]],
         value=_tensor(g, fill))


@EXPORTS.register("_contrib_arange_like")
def arange_like(node: ExportNode, g: OnnxBuilder) -> None:
    """start + step * (i // repeat) for i over the input's elements (shaped like it), or
    over one axis of it."""
    a = node.attrs
    x, dtype = node.inputs[0], node.out_dtypes[0]
    if a.axis is None:
        count = g.op("Size", [x])
    else:
        axis = int(a.axis) % node.rank(0)
        count = g.op("Gather", [g.shape(x), g.scalar(axis, INT64)])
    index = g.cast(g.op("Range", [g.scalar(0, INT64), count, g.scalar(1, INT64)]), np.float64)
    if int(a.repeat) != 1:
        index = g.op("Floor", [g.op("Div", [index, g.scalar(float(a.repeat), np.float64)])])
    values = g.op("Add", [g.op("Mul", [index, g.scalar(float(a.step), np.float64)]),
                          g.scalar(float(a.start), np.float64)])
    if a.axis is None:
        values = g.reshape(values, g.shape(x))
    g.cast(values, dtype, node.outputs[0])


def _onnx_dtype(g: OnnxBuilder, dtype: np.dtype | None) -> int:
    return g.onnx_dtype(np.float32 if dtype is None else dtype)


@EXPORTS.register("_random_uniform", "_random_normal")
def random_fixed_shape(node: ExportNode, g: OnnxBuilder) -> None:
    """RandomUniform (low, high) or RandomNormal (loc as mean, scale) of the shape."""
    a = node.attrs
    shape = [int(d) for d in node.out_shapes[0]]
    dtype = _onnx_dtype(g, node.out_dtypes[0])
    if node.op == "_random_uniform":
        g.op("RandomUniform", [], [node.outputs[0]], low=float(a.low), high=float(a.high),
             shape=shape, dtype=dtype)
    else:
        g.op("RandomNormal", [], [node.outputs[0]], mean=float(a.loc), scale=float(a.scale),
             shape=shape, dtype=dtype)


@EXPORTS.register("_random_uniform_like", "_random_normal_like")
def random_like(node: ExportNode, g: OnnxBuilder) -> None:
    """RandomUniformLike or RandomNormalLike of the input."""
    a = node.attrs
    dtype = _onnx_dtype(g, node.out_dtypes[0])
    if node.op == "_random_uniform_like":
        g.op("RandomUniformLike", node.inputs[:1], [node.outputs[0]], low=float(a.low),
             high=float(a.high), dtype=dtype)
    else:
        g.op("RandomNormalLike", node.inputs[:1], [node.outputs[0]], mean=float(a.loc),
             scale=float(a.scale), dtype=dtype)


@EXPORTS.register("_sample_multinomial")
def sample_multinomial(node: ExportNode, g: OnnxBuilder) -> None:
    """Multinomial on the log of the probabilities, sample_size = the product of shape,
    reshaped to data.shape[:-1] + shape."""
    a = node.attrs
    if a.get_prob and 1 in node.used_outputs:
        raise node.fail("get_prob: the log-likelihood output is not exported")
    probabilities = node.inputs[0]
    rank = node.rank(0)
    if rank == 1:
        probabilities = g.unsqueeze(probabilities, [0])
    samples = int(np.prod(a.shape)) if a.shape else 1
    drawn = g.op("Multinomial", [g.op("Log", [probabilities])], sample_size=samples,
                 dtype=g.onnx_dtype(node.out_dtypes[0]))
    leading = [g.dims(node.inputs[0], 0, rank - 1)] if rank > 1 else []
    parts = leading + ([g.ints([int(d) for d in a.shape])] if a.shape else [])
    if not parts:  # a single draw from one distribution: MXNet's shape (1,) or ()
        parts = [g.ints([int(d) for d in node.out_shapes[0]])]
    g.reshape(drawn, g.concat(parts, 0), node.outputs[0])
