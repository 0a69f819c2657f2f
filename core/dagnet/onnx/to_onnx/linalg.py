"""Matrix products: dot, batch_dot, linalg.gemm and gemm2, and the attention
products of transformer models (interleaved q k^T and attention @ v)."""

from __future__ import annotations

import math

import numpy as np

from ._context import ExportNode, OnnxBuilder
from ._table import EXPORTS


def _swap_last(g: OnnxBuilder, x: str, rank: int) -> str:
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return g.op("Transpose", [x], perm=perm)


@EXPORTS.register("dot")
def dot(node: ExportNode, g: OnnxBuilder) -> None:
    """MatMul for vectors and matrices (with their transposes); higher ranks contract
    a's last axis with b's first, through 2-D views."""
    a, b = node.inputs[:2]
    ra, rb = node.rank(0), node.rank(1)
    out = node.outputs[0]
    if node.attrs.transpose_a:
        if ra > 2:
            raise node.fail("transpose_a on more than two dimensions")
        a = g.op("Transpose", [a], perm=[1, 0]) if ra == 2 else a
    if node.attrs.transpose_b:
        if rb > 2:
            raise node.fail("transpose_b on more than two dimensions")
        b = g.op("Transpose", [b], perm=[1, 0]) if rb == 2 else b
    if ra <= 2 and rb <= 2:
        g.op("MatMul", [a, b], [out])
        return
    flat_a = g.reshape(a, [-1, int(node.in_shapes[0][-1])])
    flat_b = g.reshape(b, [int(node.in_shapes[1][0]), -1])
    product = g.op("MatMul", [flat_a, flat_b])
    target = g.concat([g.dims(a, 0, ra - 1), g.dims(b, 1, rb)], 0)
    g.reshape(product, target, out)


@EXPORTS.register("batch_dot")
def batch_dot(node: ExportNode, g: OnnxBuilder) -> None:
    """MatMul over the leading (batch) axes, the last two transposed as asked."""
    a, b = node.inputs[:2]
    if node.attrs.transpose_a:
        a = _swap_last(g, a, node.rank(0))
    if node.attrs.transpose_b:
        b = _swap_last(g, b, node.rank(1))
    g.op("MatMul", [a, b], [node.outputs[0]])


@EXPORTS.register("_linalg_gemm2")
def gemm2(node: ExportNode, g: OnnxBuilder) -> None:
    """alpha * op(A) @ op(B) over the last two axes."""
    a, b = node.inputs[:2]
    if int(node.attrs.axis) not in (-2, node.rank(0) - 2):
        raise node.fail("gemm2 with a matrix axis other than -2")
    if node.attrs.transpose_a:
        a = _swap_last(g, a, node.rank(0))
    if node.attrs.transpose_b:
        b = _swap_last(g, b, node.rank(1))
    alpha = float(node.attrs.alpha)
    if alpha == 1.0:
        g.op("MatMul", [a, b], [node.outputs[0]])
        return
    product = g.op("MatMul", [a, b])
    g.op("Mul", [product, g.scalar(alpha, node.in_dtypes[0])], [node.outputs[0]])


@EXPORTS.register("_linalg_gemm")
def gemm(node: ExportNode, g: OnnxBuilder) -> None:
    """alpha * op(A) @ op(B) + beta * C over the last two axes."""
    a, b, c = node.inputs[:3]
    dtype = node.in_dtypes[0]
    if int(node.attrs.axis) not in (-2, node.rank(0) - 2):
        raise node.fail("gemm with a matrix axis other than -2")
    if node.attrs.transpose_a:
        a = _swap_last(g, a, node.rank(0))
    if node.attrs.transpose_b:
        b = _swap_last(g, b, node.rank(1))
    product = g.op("Mul", [g.op("MatMul", [a, b]), g.scalar(float(node.attrs.alpha), dtype)])
    shifted = g.op("Mul", [c, g.scalar(float(node.attrs.beta), dtype)])
    g.op("Add", [product, shifted], [node.outputs[0]])


@EXPORTS.register("_contrib_div_sqrt_dim")
def div_sqrt_dim(node: ExportNode, g: OnnxBuilder) -> None:
    """x divided by the square root of its last dimension."""
    size = node.in_shapes[0][-1]
    g.op("Div", [node.inputs[0], g.scalar(math.sqrt(size), node.in_dtypes[0])],
         [node.outputs[0]])


def _merge_first_two(g: OnnxBuilder, x: str) -> str:
    """(a, b, rest...) -> (a * b, rest...)."""
    return g.reshape(x, g.concat([g.ints(-1), g.dims(x, 2)], 0))


@EXPORTS.register("_contrib_interleaved_matmul_selfatt_qk")
def selfatt_qk(node: ExportNode, g: OnnxBuilder) -> None:
    """q k^T / sqrt(D) per batch entry and head, q and k read from the packed
    (seq, batch, heads * 3 * D) projections; shape (batch * heads, seq, seq)."""
    heads = int(node.attrs.heads)
    depth = int(node.in_shapes[0][-1]) // (heads * 3)
    packed = g.reshape(node.inputs[0], [0, 0, heads, 3, depth])
    q = g.op("Gather", [packed, g.scalar(0, np.int64)], axis=3)
    k = g.op("Gather", [packed, g.scalar(1, np.int64)], axis=3)
    q = _merge_first_two(g, g.op("Transpose", [q], perm=[1, 2, 0, 3]))  # (batch H, seq, D)
    k = _merge_first_two(g, g.op("Transpose", [k], perm=[1, 2, 3, 0]))  # (batch H, D, seq)
    scaled = g.op("Div", [q, g.scalar(math.sqrt(depth), node.in_dtypes[0])])
    g.op("MatMul", [scaled, k], [node.outputs[0]])


@EXPORTS.register("_contrib_interleaved_matmul_selfatt_valatt")
def selfatt_valatt(node: ExportNode, g: OnnxBuilder) -> None:
    """attention @ v per batch entry and head, v read from the packed projections; back
    in (seq, batch, heads * D)."""
    heads = int(node.attrs.heads)
    depth = int(node.in_shapes[0][-1]) // (heads * 3)
    packed = g.reshape(node.inputs[0], [0, 0, heads, 3, depth])
    v = g.op("Gather", [packed, g.scalar(2, np.int64)], axis=3)          # (seq, batch, H, D)
    v = _merge_first_two(g, g.op("Transpose", [v], perm=[1, 2, 0, 3]))
    weighted = g.op("MatMul", [node.inputs[1], v])                         # (batch H, seq, D)
    batch = g.dims(node.inputs[0], 1, 2)
    split = g.reshape(weighted, g.concat([batch, g.ints([heads, -1, depth])], 0))
    moved = g.op("Transpose", [split], perm=[2, 0, 1, 3])                 # (seq, batch, H, D)
    g.reshape(moved, [0, 0, heads * depth], node.outputs[0])
