"""Matrix products (MXNet's ``dot.cc``): ``dot`` and ``batch_dot``.

``dot`` of N-D arrays contracts the *last* axis of lhs with the *first*
axis of rhs (not numpy's second-to-last): ``(2, 3, 4) . (4, 5) -> (2, 3, 5)``.
``transpose_a`` views lhs as ``(first axis, rest)`` transposed, so the
contraction is over lhs's first axis; ``transpose_b`` contracts over rhs's
last axis.  Two vectors give shape ``(1,)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from dagnet.operator import (
    XP,
    Case,
    ComposedGradient,
    Domain,
    Field,
    Gradient,
    Op,
    Params,
    merge_shape,
)
from dagnet.util import dim_is_known

from . import _sampling as S
from ._common import backward_op, known, put, shape_error, with_attrs
from ._second_order import bilinear


class DotParam(Params):
    transpose_a = Field(bool, False, "If true then transpose the first input before dot.")
    transpose_b = Field(bool, False, "If true then transpose the second input before dot.")
    forward_stype = Field(str, None, "The desired storage type of the forward output given by "
                                     "user (sparse storage is not implemented: dense results "
                                     "whatever the hint).",
                          choices=("csr", "default", "row_sparse"))


# -- dot ----------------------------------------------------------------------------------------
def _dot_dims(attrs: DotParam, ls: Sequence[int], rs: Sequence[int]) -> tuple[tuple, int, tuple]:
    """(rows, contracted size, cols) of ``dot(lhs, rhs)``."""
    if len(ls) == 1 and len(rs) == 1 and (attrs.transpose_a or attrs.transpose_b):
        raise shape_error("dot", "cannot transpose vectors (both inputs are 1-D)")
    k_l, rows = (ls[0], tuple(ls[1:])) if attrs.transpose_a else (ls[-1], tuple(ls[:-1]))
    k_r, cols = (rs[-1], tuple(rs[:-1])) if attrs.transpose_b else (rs[0], tuple(rs[1:]))
    if k_l != k_r:
        raise shape_error("dot", f"lhs {tuple(ls)} and rhs {tuple(rs)} cannot be multiplied: the "
                                 f"contracted dimensions are {k_l} and {k_r} (transpose_a="
                                 f"{attrs.transpose_a}, transpose_b={attrs.transpose_b})")
    return rows, k_l, cols


def _dot_infer(attrs, ins, outs):
    ls, rs = ins
    if ls is None or rs is None:
        return ins, outs
    if not (known(ls) and known(rs)):
        # partial shapes: an unknown contracted dimension is the other side's (a weight
        # whose input size is deferred), and the output follows once both are known
        k_l = ls[0] if attrs.transpose_a else ls[-1]
        k_r = rs[-1] if attrs.transpose_b else rs[0]
        if dim_is_known(k_l) and not dim_is_known(k_r) and len(rs) > 1:
            rs = tuple(rs[:-1]) + (k_l,) if attrs.transpose_b else (k_l,) + tuple(rs[1:])
            k_r = k_l
        elif dim_is_known(k_r) and not dim_is_known(k_l) and len(ls) > 1:
            ls = (k_r,) + tuple(ls[1:]) if attrs.transpose_a else tuple(ls[:-1]) + (k_r,)
            k_l = k_r
        if not (dim_is_known(k_l) and dim_is_known(k_r)):
            return ins, outs
        ins = [ls, rs]
    rows, _, cols = _dot_dims(attrs, ls, rs)
    return ins, [rows + cols or (1,)]


def _matrices(attrs: DotParam, lhs: Any, rhs: Any) -> tuple[Any, Any]:
    """lhs as (rows, k) and rhs as (k, cols), transposes applied."""
    _, k, _ = _dot_dims(attrs, lhs.shape, rhs.shape)
    a = lhs.reshape(k, -1).T if attrs.transpose_a else lhs.reshape(-1, k)
    b = rhs.reshape(-1, k).T if attrs.transpose_b else rhs.reshape(k, -1)
    return a, b


def _dot(attrs, ctx, inputs, req, outputs):
    a, b = _matrices(attrs, *inputs)
    put(outputs[0], req[0], ctx.xp.matmul(a, b))


def _dot_back(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, lhs, rhs = inputs
    a, b = _matrices(attrs, lhs, rhs)
    g = g.reshape(a.shape[0], b.shape[1])
    da, db = xp.matmul(g, b.T), xp.matmul(a.T, g)
    put(outputs[0], req[0], (da.T if attrs.transpose_a else da).reshape(lhs.shape))
    put(outputs[1], req[1], (db.T if attrs.transpose_b else db).reshape(rhs.shape))


def _dot_sample(draw):
    rows = S.shape(draw, min_dims=0, max_dims=2)
    cols = S.shape(draw, min_dims=0, max_dims=2)
    k = S.integer(draw, 1, 4, "contracted size")
    vectors = not rows and not cols
    ta = not vectors and S.boolean(draw, "transpose_a")
    tb = not vectors and S.boolean(draw, "transpose_b")
    lhs = (k,) + rows if ta else rows + (k,)
    rhs = cols + (k,) if tb else (k,) + cols
    return Case([S.floats(draw, lhs), S.floats(draw, rhs)], {"transpose_a": ta, "transpose_b": tb})


def _np_dot(p, lhs, rhs):
    a = np.moveaxis(lhs, 0, -1) if p.transpose_a else lhs
    b = np.moveaxis(rhs, -1, 0) if p.transpose_b else rhs
    out = np.tensordot(a, b, axes=([-1], [0]))
    return out.reshape(out.shape or (1,))


# -- batch_dot ----------------------------------------------------------------------------------
def _batch_infer(attrs, ins, outs):
    ls, rs = ins
    if ls is None or rs is None:
        return ins, outs
    if not (known(ls) and known(rs)):
        # partial shapes: the matrix dimensions must be known, the batch ones may not
        if len(ls) < 3 or not all(dim_is_known(d) for d in tuple(ls[-2:]) + tuple(rs[-2:])):
            return ins, outs
        batch = merge_shape(tuple(ls[:-2]), tuple(rs[:-2]), "batch_dot batch dimensions")
        ls, rs = batch + tuple(ls[-2:]), batch + tuple(rs[-2:])
    if len(ls) < 3 or len(ls) != len(rs) or tuple(ls[:-2]) != tuple(rs[:-2]):
        raise shape_error("batch_dot", f"lhs {tuple(ls)} and rhs {tuple(rs)} must both be "
                                       f"batches (ndim >= 3) with equal leading dimensions")
    m, k = (ls[-1], ls[-2]) if attrs.transpose_a else (ls[-2], ls[-1])
    k2, n = (rs[-1], rs[-2]) if attrs.transpose_b else (rs[-2], rs[-1])
    if k != k2:
        raise shape_error("batch_dot", f"lhs {tuple(ls)} and rhs {tuple(rs)}: contracted "
                                       f"dimensions {k} and {k2} differ (transpose_a="
                                       f"{attrs.transpose_a}, transpose_b={attrs.transpose_b})")
    return ins, [tuple(ls[:-2]) + (m, n)]


def _batch_operands(attrs: DotParam, xp: Any, lhs: Any, rhs: Any) -> tuple[Any, Any]:
    a = xp.swapaxes(lhs, -1, -2) if attrs.transpose_a else lhs
    b = xp.swapaxes(rhs, -1, -2) if attrs.transpose_b else rhs
    return a, b


def _batch_dot(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], ctx.xp.matmul(*_batch_operands(attrs, ctx.xp, *inputs)))


def _batch_dot_back(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, lhs, rhs = inputs
    a, b = _batch_operands(attrs, xp, lhs, rhs)
    da = xp.matmul(g, xp.swapaxes(b, -1, -2))
    db = xp.matmul(xp.swapaxes(a, -1, -2), g)
    put(outputs[0], req[0], xp.swapaxes(da, -1, -2) if attrs.transpose_a else da)
    put(outputs[1], req[1], xp.swapaxes(db, -1, -2) if attrs.transpose_b else db)


def _batch_sample(draw):
    batch = S.shape(draw, max_dims=2)
    m, k, n = (S.integer(draw, 1, 4, name) for name in "mkn")
    ta, tb = S.boolean(draw, "transpose_a"), S.boolean(draw, "transpose_b")
    lhs = batch + ((k, m) if ta else (m, k))
    rhs = batch + ((n, k) if tb else (k, n))
    return Case([S.floats(draw, lhs), S.floats(draw, rhs)], {"transpose_a": ta, "transpose_b": tb})


def _np_batch_dot(p, lhs, rhs):
    a = np.swapaxes(lhs, -1, -2) if p.transpose_a else lhs
    b = np.swapaxes(rhs, -1, -2) if p.transpose_b else rhs
    return np.einsum("...mk,...kn->...mn", a, b)


OPS: list[Op] = [
    Op("dot", params=DotParam, num_inputs=2, input_names=["lhs", "rhs"], infer_shape=_dot_infer,
       compute={XP: _dot}, gradient=Gradient("_backward_dot", ("out_grad", "in_data")),
       domain=Domain(_dot_sample, reference=with_attrs(DotParam, "dot", _np_dot)),
       description="Dot product.  1-D . 1-D is the inner product (shape (1,)); 2-D . 2-D the "
                   "matrix product; N-D arrays contract lhs's last axis with rhs's first: "
                   "``out[i..., j...] = sum_k lhs[i..., k] rhs[k, j...]``.  transpose_a contracts "
                   "over lhs's first axis instead (its other axes lead the output), transpose_b "
                   "over rhs's last axis.  Both operands share a dtype, kept by the output.  "
                   "Gradients: ``dy . rhs^T`` and ``lhs^T . dy`` in the same views."),
    replace(backward_op("dot", DotParam, 3, 2, _dot_back),
            gradient=ComposedGradient(bilinear("_backward_dot"))),
    Op("batch_dot", params=DotParam, num_inputs=2, input_names=["lhs", "rhs"],
       infer_shape=_batch_infer, compute={XP: _batch_dot},
       gradient=Gradient("_backward_batch_dot", ("out_grad", "in_data")),
       domain=Domain(_batch_sample, reference=with_attrs(DotParam, "batch_dot", _np_batch_dot)),
       description="Batched matrix product: lhs (B..., M, K) and rhs (B..., K, N) give (B..., M, "
                   "N), the leading batch dimensions equal (no broadcasting); transpose_a / "
                   "transpose_b swap the last two axes of an operand first.  Both operands "
                   "share a dtype, kept by the output.  Gradients: ``dy rhs^T`` and ``lhs^T dy`` "
                   "per batch."),
    replace(backward_op("batch_dot", DotParam, 3, 2, _batch_dot_back),
            gradient=ComposedGradient(bilinear("_backward_batch_dot"))),
]
