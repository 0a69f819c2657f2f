"""Operators of sparse storage (MXNet's ``cast_storage.cc``, ``sparse_retain.cc``,
``square_sum.cc``) and the sparse implementations of the dense operators that keep
sparse results in MXNet 1.x (its ``FComputeEx``).

Registered operators, each with a dense kernel (what runs on dense arrays and in
graphs) and a sparse implementation:

- ``cast_storage`` (``sparse.cast_storage``): convert between ``default``,
  ``row_sparse`` and ``csr``; its gradient is the head gradient.
- ``_sparse_retain`` (``sparse.retain``): the rows of a row_sparse array whose
  indices are listed; the others become zero.
- ``_square_sum``: the sum of squares along ``axis`` (a row_sparse result for a
  row_sparse input summed along axis 1 with ``keepdims``).
- ``_contrib_getnnz`` (``contrib.getnnz``): how many values a csr matrix stores, in all
  or per row.
- ``_contrib_SparseEmbedding`` (``contrib.SparseEmbedding``): ``Embedding`` whose
  weight MXNet keeps row_sparse; here it computes as ``Embedding`` (a sparse weight
  falls back to dense).
- ``_scatter_elemwise_div``, ``_scatter_plus_scalar``, ``_scatter_minus_scalar``
  (MXNet's ``elemwise_scatter_op.cc``): ``elemwise_div``, ``_plus_scalar`` and
  ``_minus_scalar`` on dense arrays (the same records under other names: kernels,
  gradients, conformance domains); on a sparse lhs they compute only where the lhs
  stores values and keep its storage (a row_sparse lhs for the division, row_sparse or
  csr for the scalar ones), leaving every other element zero.

Sparse implementations (:func:`dagnet.ndarray.sparse.register_storage_impl`) of
``dot`` (csr lhs: dense result; ``transpose_a``: row_sparse result), the
same-shape elementwise operators that keep sparse storage in MXNet 1.9.1
(``elemwise_add``/``sub``/``mul``, ``_maximum``/``_minimum``/``_hypot``,
``add_n``; ``broadcast_mul``/``div`` of a csr matrix by a dense array broadcast to its
shape), multiplication and division by a scalar, the
unary operators that map zero to zero (``square``, ``sqrt``, ``abs``, ``sign``,
``relu`` ...), ``zeros_like``, row ``slice`` of a csr matrix and ``take`` of its
rows, ``contrib.quadratic`` of a csr matrix with ``c == 0``.  Anything else falls back to
dense.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.ndarray import NDArray, new_array, sparse
from dagnet.operator import (
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    NoGradient,
    NoParams,
    Op,
    OpReqType,
    Params,
)

from ..nn.embedding import (
    BackwardEmbedding,
    Embedding,
    EmbeddingParam,
    embedding_backward,
    embedding_rows,
)
from . import _sampling as S
from . import elemwise_binary, scalar
from ._common import backward_op, first_input_type, put, same_shape, scatter_add
from .reduce import reduction

_STYPES = ("default", "row_sparse", "csr")


# -- cast_storage --------------------------------------------------------------------------
class CastStorageParam(Params):
    stype = Field(str, None, "Output storage type.", choices=_STYPES)


def _copy_forward(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], inputs[0])


def _copy_backward(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], inputs[0])


def _cast_sample(draw):
    x = S.floats(draw, S.shape(draw, 2, 2)) * (S.integers(draw, (1,), 0, 1)[0])
    return Case([x], {"stype": "default"})


# -- _sparse_retain -------------------------------------------------------------------------
def _retain_mask(xp, n_rows, indices):
    keep = xp.zeros((n_rows,), bool)
    rows = indices.astype(np.int64)
    rows = rows[(rows >= 0) & (rows < n_rows)]
    keep[rows] = True
    return keep


def _retain_forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    data, indices = inputs
    keep = _retain_mask(xp, data.shape[0], indices).reshape((-1,) + (1,) * (data.ndim - 1))
    put(outputs[0], req[0], xp.where(keep, data, xp.zeros((), data.dtype)))


def _retain_backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    head, indices = inputs
    keep = _retain_mask(xp, head.shape[0], indices).reshape((-1,) + (1,) * (head.ndim - 1))
    put(outputs[0], req[0], xp.where(keep, head, xp.zeros((), head.dtype)))
    put(outputs[1], req[1], 0)


def _retain_shape(attrs, ins, outs):
    data = ins[0] if ins[0] is not None else outs[0]
    return [data, ins[1]], [data]


def _retain_type(attrs, ins, outs):
    return [ins[0] if ins[0] is not None else outs[0], ins[1]], [ins[0] or outs[0]]


def _retain_sample(draw):
    shape = S.shape(draw, 2, 2)
    rows = np.unique(S.integers(draw, (shape[0],), 0, shape[0] - 1)).astype(np.float64)
    return Case([S.floats(draw, shape), rows])


def _retain_reference(raw, data, indices):
    out = np.zeros_like(data)
    rows = indices.astype(np.int64)
    out[rows] = data[rows]
    return out


# -- _square_sum ---------------------------------------------------------------------------
def _square_sum_forward(xp, x, axes):
    return xp.sum(x * x, axis=axes, keepdims=True, dtype=x.dtype)


def _square_sum_grad(xp, g, x, y, axes):
    return 2 * x * g


# -- _contrib_getnnz -------------------------------------------------------------------------
class GetNnzParam(Params):
    axis = Field(int, None, "None: the stored values of the whole matrix (shape (1,)); 1: "
                            "those of each row.", optional=True, choices=(1,))


def _getnnz_shape(attrs, ins, outs):
    data = ins[0]
    if data is not None and len(data) != 2:
        raise ShapeError(f"operator '_contrib_getnnz': data must be a 2-D (csr) matrix, got "
                         f"shape {data}")
    if attrs.axis is None:
        return ins, [(1,)]
    return ins, [None if data is None else (data[0],)]


def _getnnz_type(attrs, ins, outs):
    return ins, [np.dtype(np.int64)]


def _getnnz_forward(attrs, ctx, inputs, req, outputs):
    # a dense matrix stores what its csr form would: its nonzero entries
    stored = inputs[0] != 0
    put(outputs[0], req[0], stored.sum() if attrs.axis is None else stored.sum(axis=1))


def _getnnz_sample(draw):
    x = S.floats(draw, S.shape(draw, 2, 2)) * S.integers(draw, (1,), 0, 1)[0]
    axis = S.choice(draw, [None, 1], "axis")
    return Case([x], {} if axis is None else {"axis": axis})


def _getnnz_reference(raw, x):
    counts = np.count_nonzero(x, axis=raw.get("axis"))
    return np.asarray(counts, np.int64).reshape(-1)


class SparseEmbeddingParam(EmbeddingParam):
    deterministic = Field(bool, False, "Sum the weight's gradient rows in a fixed order "
                                       "(no atomic adds), so that repeated backward passes "
                                       "agree bit for bit on every device.")


def _sparse_embedding_backward(attrs, ctx, inputs, req, outputs):
    """Embedding's backward; with ``deterministic`` the weight gradient sums each row's
    head-gradient rows by a stable sort and a running sum, with no atomic adds (whose
    order, and so whose rounding, varies on a GPU)."""
    if not attrs.deterministic:
        return embedding_backward(attrs, ctx, inputs, req, outputs)
    xp = ctx.xp
    dy, data, weight = inputs
    put(outputs[0], req[0], 0)
    if req[1] is OpReqType.NULL:
        return
    rows = embedding_rows(xp, attrs, data).reshape(-1)
    heads = dy.reshape(-1, attrs.output_dim)
    order = xp.argsort(rows, kind="stable")
    rows, heads = rows[order], heads[order]
    grad = xp.zeros(weight.shape, dtype=dy.dtype)
    if len(rows):
        ends = xp.flatnonzero(xp.concatenate([rows[1:] != rows[:-1], xp.ones(1, bool)]))
        running = xp.cumsum(heads, axis=0, dtype=dy.dtype)
        sums = running[ends]
        sums[1:] -= running[ends[:-1]]
        grad[rows[ends]] = sums
    put(outputs[1], req[1], grad)


def _sparse_embedding_sample(draw):
    case = Embedding.domain.sample(draw)
    case.params["deterministic"] = S.boolean(draw, "deterministic")
    return case


SparseEmbedding = replace(
    Embedding, domain=replace(Embedding.domain, sample=_sparse_embedding_sample),
    name="_contrib_SparseEmbedding", aliases=(), params=SparseEmbeddingParam,
    gradient=Gradient("_backward_SparseEmbedding", uses=("out_grad", "in_data")),
    description="MXNet's contrib.SparseEmbedding: Embedding (same inputs and gradient, and "
                "``deterministic``) for a weight MXNet stores row_sparse; a sparse weight is "
                "read densely here.")
BackwardSparseEmbedding = replace(
    BackwardEmbedding, name="_backward_SparseEmbedding", params=SparseEmbeddingParam,
    forward_op="_contrib_SparseEmbedding", compute={XP: _sparse_embedding_backward})

# -- the scatter operators: dense records of other names ----------------------------------------
def _renamed(ops: list[Op], name: str, new_name: str, sparse_desc: str) -> Op:
    """The forward record ``name`` of ``ops`` as operator ``new_name`` (same gradient)."""
    record = next(op for op in ops if op.name == name)
    return replace(record, name=new_name, aliases=(),
                   description=f"{record.description}\n\n{sparse_desc}")


_SCATTERED = ("Only the values the sparse lhs stores are computed: the result keeps the "
              "lhs's {}storage, every other element zero.  Dense inputs compute as ``{}``.")

OPS: list[Op] = [
    _renamed(elemwise_binary.OPS, "elemwise_div", "_scatter_elemwise_div",
             _SCATTERED.format("row_sparse ", "elemwise_div")
             + "  Other storage types compute densely."),
    _renamed(scalar.OPS, "_plus_scalar", "_scatter_plus_scalar",
             _SCATTERED.format("row_sparse or csr ", "_plus_scalar")),
    _renamed(scalar.OPS, "_minus_scalar", "_scatter_minus_scalar",
             _SCATTERED.format("row_sparse or csr ", "_minus_scalar")),
    SparseEmbedding,
    BackwardSparseEmbedding,
    Op("cast_storage", params=CastStorageParam, input_names=["data"],
       infer_shape=same_shape("cast_storage", ["data"]), infer_type=first_input_type(1),
       compute={XP: _copy_forward}, aliases=("_sparse_cast_storage",),
       gradient=Gradient("_backward_cast_storage", ("out_grad",)),
       domain=Domain(_cast_sample, reference=lambda raw, x: x),
       description="The input with storage type ``stype`` ('default', 'row_sparse' or "
                   "'csr'; csr needs a 2-D input; csr and row_sparse do not convert into each "
                   "other).  Values and dtype are kept.  Gradient: the head gradient."),
    backward_op("cast_storage", CastStorageParam, 1, 1, _copy_backward),
    Op("_sparse_retain", num_inputs=2, input_names=["data", "indices"],
       infer_shape=_retain_shape, infer_type=_retain_type, compute={XP: _retain_forward},
       gradient=Gradient("_backward_sparse_retain", ("out_grad", "in_data")),
       domain=Domain(_retain_sample, reference=_retain_reference, differentiable=(0,)),
       description="The rows of ``data`` whose indices are in ``indices``; every other row "
                   "is zero (a row_sparse result for a row_sparse input).  Gradient: the head "
                   "gradient of the kept rows."),
    # reads (out_grad, data, indices): what the gradient's uses name
    backward_op("sparse_retain", NoParams, 3, 2,
                lambda attrs, ctx, inputs, req, outputs: _retain_backward(
                    attrs, ctx, [inputs[0], inputs[2]], req, outputs)),
    Op("_contrib_getnnz", params=GetNnzParam, input_names=["data"],
       infer_shape=_getnnz_shape, infer_type=_getnnz_type, compute={XP: _getnnz_forward},
       gradient=NoGradient("getnnz counts stored values; the count is not differentiable"),
       domain=Domain(_getnnz_sample, reference=_getnnz_reference, differentiable=()),
       description="The number of values a csr matrix stores (explicit zeros included): in "
                   "all (``axis=None``, shape (1,)) or per row (``axis=1``), as int64.  A "
                   "dense matrix counts as its csr form: its nonzero entries."),
    *reduction("_square_sum", _square_sum_forward,
               desc="The sum of the squares of ``data`` along ``axis`` (a row_sparse result "
                    "for a row_sparse input with axis=1 and keepdims).",
               grad=_square_sum_grad, uses=("out_grad", "in_data"),
               reference=lambda x, axes: np.sum(x * x, axis=axes, keepdims=True)),
]


# -- sparse implementations ------------------------------------------------------------------
# Each implementation is registered with its storage rule (MXNet's FInferStorageType): the
# output storage types for the input storage types it computes sparsely, or None to leave
# the call to the dense fallback.  The rule decides for imperative calls and bound graphs
# alike; a compute function meets only inputs its rule accepted.
def _register(name: str, compute, rule, dense_inputs: bool = False) -> None:
    def impl(call, inputs, out):
        if rule(call.attrs, [a.stype for a in inputs]) is None:
            return NotImplemented
        return compute(call, inputs, out)

    sparse.register_storage_impl(name, impl, dense_inputs=dense_inputs, infer_storage=rule)


def _same_sparse(attrs, stypes):
    """A sparse input keeps its storage (an operator mapping 0 to 0)."""
    return [stypes[0]] if stypes[0] != "default" else None


def _finish(result: NDArray, out: Any) -> Any:
    if out is None:
        return result
    if isinstance(out, (list, tuple)):
        result.copyto(out[0])
    else:
        result.copyto(out)
    return out


def _cast_storage_impl(call, inputs, out):
    return _finish(inputs[0].tostype(call.attrs.stype), out)


def _retain_rule(attrs, stypes):
    return ["row_sparse"] if stypes == ["row_sparse", "default"] else None


def _retain_impl(call, inputs, out):
    data, indices = inputs
    result = sparse.new_sparse("row_sparse", data.shape, data.dtype, data._chunk.dev)
    wanted = indices._xp()

    def retain(xp):
        values, (rows,) = sparse.components(data)
        keep = xp.isin(rows, wanted.astype(np.int64))
        sparse.set_components(result, values[keep], [rows[keep]])

    sparse.push_sparse(retain, [data, indices], [result], "_sparse_retain")
    return _finish(result, out)


def _dense_of(xp, array_stype, shape, dtype, values, aux):
    dense = xp.zeros(shape, dtype)
    if array_stype == "row_sparse":
        if len(aux[0]):
            dense[aux[0]] = values
    else:
        indptr, indices = aux
        if len(indices):
            dense[xp.repeat(xp.arange(shape[0]), xp.diff(indptr)), indices] = values
    return dense


def _dot_rule(attrs, stypes):
    """A csr lhs: a dense result, row_sparse with ``transpose_a``; ``forward_stype``
    overrides."""
    if stypes[0] != "csr" or attrs.transpose_b:
        return None
    natural = "row_sparse" if attrs.transpose_a else "default"
    return [attrs.forward_stype or natural]


def _dot_impl(call, inputs, out):
    lhs, rhs = inputs
    attrs = call.attrs
    if rhs.ndim not in (1, 2):
        return NotImplemented
    rhs = sparse.to_dense_array(rhs)
    if lhs.shape[1 if not attrs.transpose_a else 0] != rhs.shape[0]:
        return NotImplemented  # the dense path explains the shape error
    n_rows, n_cols = lhs.shape
    vector = rhs.ndim == 1
    k = 1 if vector else rhs.shape[1]
    dtype = lhs._dtype
    rhs_view = rhs._xp()
    dev = lhs._chunk.dev
    if not attrs.transpose_a:
        result = new_array((n_rows,) if vector else (n_rows, k), dtype, dev)
        out_view = result._xp()

        def dot_csr_dns(xp):
            values, (indptr, cols) = sparse.components(lhs)
            r = rhs_view.reshape(-1, k)
            rows = xp.repeat(xp.arange(n_rows), xp.diff(indptr))
            total = xp.zeros((n_rows, k), dtype)
            if len(cols):
                scatter_add(xp, total, rows, (values[:, None] * r[cols]).astype(dtype))
            out_view[...] = total.reshape(out_view.shape)

        sparse.push_sparse(dot_csr_dns, [lhs, rhs], [result], "dot")
    else:
        shape = (n_cols,) if vector else (n_cols, k)
        # the function runs later: it keeps its own name for the array (result is rebound)
        result = rsp_result = sparse.new_sparse("row_sparse", shape, dtype, dev)

        def dot_csrT_dns(xp):
            values, (indptr, cols) = sparse.components(lhs)
            r = rhs_view.reshape(-1, k)
            rows = xp.repeat(xp.arange(n_rows), xp.diff(indptr))
            total = xp.zeros((n_cols, k), dtype)
            if len(cols):
                scatter_add(xp, total, cols, (values[:, None] * r[rows]).astype(dtype))
            kept = xp.unique(cols)
            sparse.set_components(rsp_result, total[kept].reshape((len(kept),) + shape[1:]),
                                  [kept])

        sparse.push_sparse(dot_csrT_dns, [lhs, rhs], [result], "dot")
    wanted = attrs.forward_stype
    if wanted is not None and wanted != result.stype:
        # csr from row_sparse goes through dense storage
        dense = result.tostype("default")
        result = dense if wanted == "default" else dense.tostype(wanted)
    return _finish(result, out)


# the elementwise binary functions with sparse implementations
_BINARY = {
    "add": lambda xp, a, b: a + b,
    "sub": lambda xp, a, b: a - b,
    "maximum": lambda xp, a, b: xp.maximum(a, b),
    "minimum": lambda xp, a, b: xp.minimum(a, b),
    "hypot": lambda xp, a, b: xp.hypot(a, b),
    "mul": lambda xp, a, b: a * b,
    "div": lambda xp, a, b: a / b,
}


def _union_rule(attrs, stypes):
    """A function mapping (0, 0) to 0 keeps a storage both sides share (the rows, or
    entries, either side stores)."""
    ls, rs = stypes
    return [ls] if ls == rs != "default" else None


def _mul_rule(attrs, stypes):
    """A product keeps the storage of a sparse side times one of its storage or dense."""
    ls, rs = stypes
    sparse_side = rs if ls == "default" else ls
    return [sparse_side] if sparse_side != "default" and {ls, rs} <= {
        sparse_side, "default"} else None


def _csr_by_dense_rule(attrs, stypes):
    """A csr matrix times (or over) a dense array broadcast to its shape stays csr."""
    return ["csr"] if stypes == ["csr", "default"] else None


def _binary(kind: str):
    """Elementwise ``_BINARY[kind]`` of arrays of one shape (or a csr lhs and a dense rhs
    broadcast to its shape), keeping sparse storage where MXNet does."""
    fn = _BINARY[kind]

    def impl(call, inputs, out):
        lhs, rhs = inputs
        if kind == "mul" and lhs.stype == "default":  # dense * sparse: the same product
            lhs, rhs = rhs, lhs
        ls, rs = lhs.stype, rhs.stype
        if lhs.shape != rhs.shape and not (
                ls == "csr" and rs == "default" and rhs.ndim <= 2
                and np.broadcast_shapes(lhs.shape, rhs.shape) == lhs.shape):
            return NotImplemented
        stype = ls
        shape, dtype = lhs.shape, lhs._dtype
        result = sparse.new_sparse(stype, shape, dtype, lhs._chunk.dev)
        rhs_view = rhs._xp() if rs == "default" else None

        def compute(xp):
            lv, la = sparse.components(lhs)
            if stype == "csr" and rhs_view is not None:  # only the stored positions
                b = xp.broadcast_to(rhs_view, shape)
                at = b[xp.repeat(xp.arange(shape[0]), xp.diff(la[0])), la[1]]
                sparse.set_components(result, fn(xp, lv, at), [a.copy() for a in la])
                return
            a = _dense_of(xp, ls, shape, dtype, lv, la)
            if rhs_view is not None:
                b = rhs_view
            else:
                rv, ra = sparse.components(rhs)
                b = _dense_of(xp, rs, shape, dtype, rv, ra)
            c = fn(xp, a, b)
            if stype == "row_sparse":
                keep = la[0] if rhs_view is not None or kind == "mul" else xp.union1d(
                    la[0], sparse.components(rhs)[1][0])
                keep = keep.astype(np.int64)
                sparse.set_components(result, c[keep], [keep])
            else:
                mask = c != 0
                indptr = xp.zeros((shape[0] + 1,), np.int64)
                xp.cumsum(mask.sum(axis=1), out=indptr[1:])
                _, cols = xp.nonzero(mask)
                sparse.set_components(result, c[mask], [indptr, cols])

        sparse.push_sparse(compute, [lhs, rhs], [result], call.name)
        return _finish(result, out)

    return impl


def _add_n_rule(attrs, stypes):
    return ["row_sparse"] if stypes and all(s == "row_sparse" for s in stypes) else None


def _add_n_impl(call, inputs, out):
    shape, dtype = inputs[0].shape, inputs[0]._dtype
    if any(a.shape != shape for a in inputs):
        return NotImplemented
    result = sparse.new_sparse("row_sparse", shape, dtype, inputs[0]._chunk.dev)

    def add_n(xp):
        parts = [sparse.components(a) for a in inputs]
        rows = parts[0][1][0]
        for _, (idx,) in parts[1:]:
            rows = xp.union1d(rows, idx)
        rows = rows.astype(np.int64)
        total = xp.zeros((len(rows),) + tuple(shape[1:]), dtype)
        for values, (idx,) in parts:
            total[xp.searchsorted(rows, idx)] += values
        sparse.set_components(result, total, [rows])

    sparse.push_sparse(add_n, list(inputs), [result], "add_n")
    return _finish(result, out)


def _map_values(name: str, fn):
    """An operator mapping 0 to 0, applied to the stored values only."""
    def impl(call, inputs, out):
        (data,) = inputs
        result = sparse.new_sparse(data.stype, data.shape, data._dtype, data._chunk.dev)
        attrs = call.attrs

        def apply(xp):
            values, aux = sparse.components(data)
            sparse.set_components(result, fn(xp, values, attrs), [a.copy() for a in aux])

        sparse.push_sparse(apply, [data], [result], name)
        return _finish(result, out)

    return impl


def _scalar_compare_rule(fn):
    """A comparison with a scalar whose result at 0 is 0 keeps the storage (MXNet's rule);
    otherwise every element changes and the fallback computes densely."""
    def rule(attrs, stypes):
        if fn(np.zeros(()), np.asarray(attrs.scalar)):
            return None
        return _same_sparse(attrs, stypes)

    return rule


def _scalar_compare(name: str, fn):
    return _map_values(name, lambda xp, v, a: fn(v, xp.asarray(a.scalar, v.dtype))
                       .astype(v.dtype))


def _scatter_div_rule(attrs, stypes):
    return ["row_sparse"] if stypes[0] == "row_sparse" else None


def _scatter_div_impl(call, inputs, out):
    """The lhs's stored rows divided by the same rows of the rhs (of any storage)."""
    lhs, rhs = inputs
    if lhs.shape != rhs.shape:
        return NotImplemented
    shape, dtype = lhs.shape, lhs._dtype
    result = sparse.new_sparse("row_sparse", shape, dtype, lhs._chunk.dev)
    rhs_view = rhs._xp() if rhs.stype == "default" else None

    def divide(xp):
        values, (rows,) = sparse.components(lhs)
        b = rhs_view if rhs_view is not None else _dense_of(xp, rhs.stype, shape, dtype,
                                                            *sparse.components(rhs))
        sparse.set_components(result, values / b[rows], [rows.copy()])

    sparse.push_sparse(divide, [lhs, rhs], [result], call.name)
    return _finish(result, out)


def _zeros_like_impl(call, inputs, out):
    (data,) = inputs
    return _finish(sparse.zeros(data.stype, data.shape, data.context, data.dtype), out)


def _slice_rule(attrs, stypes):
    """Rows of a csr matrix (begin/end along axis 0 only, step 1) stay csr."""
    if stypes[0] != "csr" or len(tuple(attrs.begin)) != 1 or (
            attrs.step and any(s not in (None, 1) for s in attrs.step)):
        return None
    return ["csr"]


def _slice_impl(call, inputs, out):
    (data,) = inputs
    attrs = call.attrs
    begin, end = tuple(attrs.begin), tuple(attrs.end)
    n_rows = data.shape[0]
    start = 0 if begin[0] is None else begin[0] % n_rows if begin[0] < 0 else min(begin[0],
                                                                                  n_rows)
    stop = n_rows if end[0] is None else end[0] % n_rows if end[0] < 0 else min(end[0], n_rows)
    if stop <= start:
        return NotImplemented
    result = sparse.new_sparse("csr", (stop - start, data.shape[1]), data._dtype,
                               data._chunk.dev)

    def rows(xp):
        values, (indptr, cols) = sparse.components(data)
        lo, hi = int(indptr[start]), int(indptr[stop])
        sparse.set_components(result, values[lo:hi].copy(),
                              [indptr[start:stop + 1] - lo, cols[lo:hi].copy()])

    sparse.push_sparse(rows, [data], [result], "slice")
    return _finish(result, out)


def _take_rule(attrs, stypes):
    """Rows of a csr matrix picked by dense indices along axis 0 (modes clip and wrap)
    stay csr."""
    if stypes != ["csr", "default"] or attrs.axis not in (0, -2) or attrs.mode == "raise":
        return None
    return ["csr"]


def _take_impl(call, inputs, out):
    """Rows of a csr matrix picked by 1-D indices (``take`` along axis 0, modes clip and
    wrap): a csr result, as MXNet's."""
    data, indices = inputs
    attrs = call.attrs
    if indices.ndim != 1 or data.shape[0] == 0:
        return NotImplemented
    n_rows, n_cols = data.shape
    result = sparse.new_sparse("csr", (indices.shape[0], n_cols), data._dtype, data._chunk.dev)
    wanted = indices._xp()

    def take_rows(xp):
        values, (indptr, cols) = sparse.components(data)
        rows = wanted.astype(np.int64)
        rows = xp.clip(rows, 0, n_rows - 1) if attrs.mode == "clip" else xp.mod(rows, n_rows)
        starts, counts = indptr[rows], indptr[rows + 1] - indptr[rows]
        new_indptr = xp.zeros((len(rows) + 1,), np.int64)
        xp.cumsum(counts, out=new_indptr[1:])
        # the position in ``values`` of each stored value of the result, row after row
        offsets = xp.arange(int(new_indptr[-1])) - xp.repeat(new_indptr[:-1], counts)
        picked = xp.repeat(starts, counts) + offsets
        sparse.set_components(result, values[picked], [new_indptr, cols[picked]])

    sparse.push_sparse(take_rows, [data, indices], [result], "take")
    return _finish(result, out)


def _getnnz_rule(attrs, stypes):
    return ["default"] if stypes[0] == "csr" else None


def _getnnz_impl(call, inputs, out):
    (data,) = inputs
    axis = call.attrs.axis
    n_rows = data.shape[0]
    result = new_array((1,) if axis is None else (n_rows,), np.dtype(np.int64), data._chunk.dev)
    out_view = result._xp()

    def count(xp):
        _, (indptr, _) = sparse.components(data)
        out_view[...] = (indptr[-1:] if axis is None else xp.diff(indptr)).astype(np.int64)

    sparse.push_sparse(count, [data], [result], "_contrib_getnnz")
    return _finish(result, out)


def _square_sum_rule(attrs, stypes):
    """A row_sparse input summed along axis 1 with keepdims stays row_sparse."""
    if stypes[0] != "row_sparse" or attrs.exclude or not attrs.keepdims \
            or tuple(attrs.axis or ()) not in ((1,), (-1,)):
        return None
    return ["row_sparse"]


def _square_sum_impl(call, inputs, out):
    (data,) = inputs
    if data.ndim != 2:
        return NotImplemented
    result = sparse.new_sparse("row_sparse", (data.shape[0], 1), data._dtype, data._chunk.dev)

    def square_sum(xp):
        values, (rows,) = sparse.components(data)
        sparse.set_components(result, xp.sum(values * values, axis=1, keepdims=True),
                              [rows.copy()])

    sparse.push_sparse(square_sum, [data], [result], "_square_sum")
    return _finish(result, out)


def _quadratic_rule(attrs, stypes):
    """``contrib.quadratic`` with ``c == 0`` maps zero to zero: a csr input stays csr (as in
    MXNet; row_sparse and ``c != 0`` compute densely)."""
    return ["csr"] if stypes[0] == "csr" and attrs.c == 0.0 else None


def _batchnorm_storage(attrs, stypes):
    """BatchNorm computes sparse inputs densely, except with ``fix_gamma``, which MXNet
    refuses for sparse arrays (its issue #11647)."""
    if attrs.fix_gamma:
        raise sparse.SparseStorageError(
            "BatchNorm: fix_gamma=True is not supported for sparse arrays (inputs: "
            f"{', '.join(stypes)}); pass fix_gamma=False, or convert the inputs with "
            ".tostype('default')")


def _round_half_away(xp, v, attrs):
    return xp.sign(v) * xp.floor(xp.abs(v) + 0.5)


_ZERO_PRESERVING = {
    "abs": lambda xp, v, a: xp.abs(v),
    "sign": lambda xp, v, a: xp.sign(v),
    "square": lambda xp, v, a: v * v,
    "sqrt": lambda xp, v, a: xp.sqrt(v),
    "cbrt": lambda xp, v, a: xp.cbrt(v),
    "relu": lambda xp, v, a: xp.maximum(v, 0),
    "negative": lambda xp, v, a: -v,
    "sin": lambda xp, v, a: xp.sin(v),
    "tan": lambda xp, v, a: xp.tan(v),
    "arcsin": lambda xp, v, a: xp.arcsin(v),
    "arctan": lambda xp, v, a: xp.arctan(v),
    "sinh": lambda xp, v, a: xp.sinh(v),
    "tanh": lambda xp, v, a: xp.tanh(v),
    "arcsinh": lambda xp, v, a: xp.arcsinh(v),
    "arctanh": lambda xp, v, a: xp.arctanh(v),
    "expm1": lambda xp, v, a: xp.expm1(v),
    "log1p": lambda xp, v, a: xp.log1p(v),
    "degrees": lambda xp, v, a: xp.degrees(v),
    "radians": lambda xp, v, a: xp.radians(v),
    "floor": lambda xp, v, a: xp.floor(v),
    "ceil": lambda xp, v, a: xp.ceil(v),
    "trunc": lambda xp, v, a: xp.trunc(v),
    "fix": lambda xp, v, a: xp.fix(v),
    "rint": lambda xp, v, a: xp.rint(v),
    "round": _round_half_away,
    "_copy": lambda xp, v, a: v.copy(),
    "_mul_scalar": lambda xp, v, a: v * xp.asarray(a.scalar, v.dtype),
    "_div_scalar": lambda xp, v, a: v / xp.asarray(a.scalar, v.dtype),
}

for _name, _fn in _ZERO_PRESERVING.items():
    _register(_name, _map_values(_name, _fn), _same_sparse)
# as MXNet 1.9.1: elemwise_div and broadcast_add/sub give dense results for sparse inputs
for _name, _kind, _rule in (("elemwise_add", "add", _union_rule),
                            ("elemwise_sub", "sub", _union_rule),
                            ("_maximum", "maximum", _union_rule),
                            ("_minimum", "minimum", _union_rule),
                            ("_hypot", "hypot", _union_rule),
                            ("elemwise_mul", "mul", _mul_rule),
                            ("broadcast_mul", "mul", _csr_by_dense_rule),
                            ("broadcast_div", "div", _csr_by_dense_rule)):
    _register(_name, _binary(_kind), _rule)
for _name, _fn in (("_equal_scalar", np.equal), ("_not_equal_scalar", np.not_equal),
                   ("_greater_scalar", np.greater), ("_greater_equal_scalar", np.greater_equal),
                   ("_lesser_scalar", np.less), ("_lesser_equal_scalar", np.less_equal)):
    _register(_name, _scalar_compare(_name, _fn), _scalar_compare_rule(_fn))
_register("cast_storage", _cast_storage_impl, lambda attrs, stypes: [attrs.stype],
          dense_inputs=True)
_register("_sparse_retain", _retain_impl, _retain_rule)
_register("dot", _dot_impl, _dot_rule)
_register("add_n", _add_n_impl, _add_n_rule)
_register("zeros_like", _zeros_like_impl, _same_sparse)
_register("slice", _slice_impl, _slice_rule)
_register("_square_sum", _square_sum_impl, _square_sum_rule)
_register("take", _take_impl, _take_rule)
_register("_contrib_quadratic", _map_values("_contrib_quadratic",
                                            lambda xp, v, a: v * (a.a * v + a.b)),
          _quadratic_rule)
_register("_contrib_getnnz", _getnnz_impl, _getnnz_rule)
_register("_scatter_elemwise_div", _scatter_div_impl, _scatter_div_rule)
_register("_scatter_plus_scalar", _map_values("_scatter_plus_scalar",
                                              lambda xp, v, a: v + xp.asarray(a.scalar, v.dtype)),
          _same_sparse)
_register("_scatter_minus_scalar", _map_values("_scatter_minus_scalar",
                                               lambda xp, v, a: v - xp.asarray(a.scalar, v.dtype)),
          _same_sparse)
sparse.register_storage_check("BatchNorm", _batchnorm_storage)
# the weight's gradient: row_sparse with sparse_grad (always for SparseEmbedding)
sparse.register_grad_storage(
    "Embedding", lambda attrs, stypes: [None, "row_sparse" if attrs.sparse_grad else None])
sparse.register_grad_storage("_contrib_SparseEmbedding",
                             lambda attrs, stypes: [None, "row_sparse"])
del _name, _fn, _kind, _rule
