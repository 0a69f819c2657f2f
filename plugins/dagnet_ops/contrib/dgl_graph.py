"""Graph operators of MXNet's ``dgl_graph.cc`` on a graph held as a square CSR matrix
(row = source vertex, column = destination, stored value = the edge's id):

- ``_contrib_edge_id`` (``contrib.edge_id``): the stored value of edge ``(u[i], v[i])``,
  -1 where there is none (any 2-D matrix: u indexes rows, v columns).
- ``_contrib_dgl_adjacency`` (``contrib.dgl_adjacency``): the same edges, every value
  1.0 (float32).
- ``_contrib_dgl_subgraph`` (``contrib.dgl_subgraph``): for each sorted vertex list, the
  induced subgraph on those vertices (row and column i = the list's i-th vertex), edges
  numbered 0, 1, ... in row-major order; with ``return_mapping`` also the same subgraph
  carrying the original edge ids.

On CSR input (what MXNet accepts), imperative or bound in a graph, the results keep every
stored edge, a stored 0 included, and are CSR (edge_id's dense); the dense kernels, which
dense input and the conformance suite run, read a dense matrix's nonzero entries as its
edges and return the dense view of the CSR result.  None of them
is differentiable (edge ids are labels): their gradient is zero, as MXNet has none.
"""

from __future__ import annotations

import numpy as np

from dagnet.ndarray import sparse
from dagnet.operator import REQUIRED, XP, Case, Domain, Field, Op, Params, ZeroGradient

from .._draw import Draw
from ._common import contrib_error, host, kernel_error, put

__all__ = ["OPS", "csr_parts", "dense_of", "graph_sample", "square_csr"]


def square_csr(op: str, shape) -> None:
    """Refuse a graph ``shape`` that is not a square 2-D matrix (operator ``op``)."""
    if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
        raise contrib_error(op, f"the graph must be a square 2-D (CSR) matrix, got shape "
                                f"{tuple(shape)}")


def csr_parts(graph):
    """(values, indices, indptr) of a CSR NDArray, or of a dense matrix's nonzeros."""
    if getattr(graph, "stype", "default") == "csr":
        return graph.data.asnumpy(), graph.indices.asnumpy().astype(np.int64), \
            graph.indptr.asnumpy().astype(np.int64)
    dense = graph if isinstance(graph, np.ndarray) else graph.asnumpy()
    rows, cols = np.nonzero(dense)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=dense.shape[0]))])
    return dense[rows, cols], cols.astype(np.int64), indptr.astype(np.int64)


def dense_of(values, indices, indptr, shape, dtype):
    """The dense matrix of CSR parts."""
    out = np.zeros(shape, dtype)
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    out[rows, indices] = values
    return out


# -- edge_id ----------------------------------------------------------------------------------
_EDGE_ID = "_contrib_edge_id"


def _edge_id_values(values, indices, indptr, u, v):
    out = np.full(len(u), -1, dtype=values.dtype)
    for i, (a, b) in enumerate(zip(u.astype(np.int64), v.astype(np.int64))):
        row = indices[indptr[a]:indptr[a + 1]]
        hit = np.nonzero(row == b)[0]
        if hit.size:
            out[i] = values[indptr[a] + hit[0]]
    return out


def _check_vertices(op, n, *arrays):
    for name, arr in arrays:
        if arr.size and (arr.min() < 0 or arr.max() >= n):
            raise kernel_error(op, f"{name} holds vertex ids outside [0, {n}) of the graph")


def _matrix(op: str, shape) -> None:
    if shape is not None and len(shape) != 2:
        raise contrib_error(op, f"the graph must be a 2-D (CSR) matrix, got shape "
                                f"{tuple(shape)}")


def _edge_id_infer(attrs, ins, outs):
    _matrix(_EDGE_ID, ins[0])
    u, v = ins[1], ins[2]
    for name, s in (("u", u), ("v", v)):
        if s is not None and len(s) != 1:
            raise contrib_error(_EDGE_ID, f"{name} must be 1-D, got shape {tuple(s)}")
    if u is not None and v is not None and tuple(u) != tuple(v):
        raise contrib_error(_EDGE_ID, f"u and v must have one length, got {u[0]} and {v[0]}")
    length = u if u is not None else v
    return [ins[0], length, length], [length]


def _edge_id(attrs, ctx, inputs, req, outputs):
    graph, u, v = (host(a) for a in inputs)
    _check_vertices(_EDGE_ID, graph.shape[0], ("u", u))
    _check_vertices(_EDGE_ID, graph.shape[1], ("v", v))
    put(outputs[0], req[0], ctx.xp.asarray(_edge_id_values(*csr_parts(graph), u, v)))


def _edge_id_impl(call, inputs, out):
    graph, u, v = inputs
    if graph.stype != "csr" or u.stype != "default" or v.stype != "default":
        return NotImplemented
    _matrix(_EDGE_ID, graph.shape)
    u_np, v_np = u.asnumpy(), v.asnumpy()
    _check_vertices(_EDGE_ID, graph.shape[0], ("u", u_np))
    _check_vertices(_EDGE_ID, graph.shape[1], ("v", v_np))
    result = _edge_id_values(*csr_parts(graph), u_np, v_np)
    return _finish(_nd_array(result, graph), out)


def graph_sample(draw, n_max=5, dtype=np.float64):
    """A random graph for the conformance suite's examples: ``(draw helper, vertex count,
    dense matrix with the edge ids 1, 2 ... as its nonzeros)``."""
    d = Draw(draw)
    n = d.int(1, n_max, "vertices")
    mask = d.uniform((n, n), 0, 1) < 0.5
    values = np.zeros((n, n), dtype)
    values[mask] = np.arange(1, mask.sum() + 1)  # nonzero ids: the dense view keeps them
    return d, n, values


def _edge_id_sample(draw):
    d, n, graph = graph_sample(draw)
    k = d.int(1, 4, "pairs")
    u = np.array([d.int(0, n - 1, "u") for _ in range(k)], dtype=np.float64)
    v = np.array([d.int(0, n - 1, "v") for _ in range(k)], dtype=np.float64)
    return Case([graph, u, v])


def _edge_id_reference(raw, graph, u, v):
    got = graph[u.astype(np.int64), v.astype(np.int64)]
    return np.where(got != 0, got, -1).astype(graph.dtype)


# -- dgl_adjacency ----------------------------------------------------------------------------
_ADJACENCY = "_contrib_dgl_adjacency"


def _adjacency_infer(attrs, ins, outs):
    square_csr(_ADJACENCY, ins[0])
    return ins, [ins[0]]


def _adjacency(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], (inputs[0] != 0).astype(np.float32))


def _adjacency_impl(call, inputs, out):
    (graph,) = inputs
    if graph.stype != "csr":
        return NotImplemented
    square_csr(_ADJACENCY, graph.shape)
    _, indices, indptr = csr_parts(graph)
    result = sparse.csr_matrix((np.ones(len(indices), np.float32), indices, indptr),
                               shape=graph.shape, ctx=graph.context, dtype=np.float32)
    return _finish(result, out)


# -- dgl_subgraph -----------------------------------------------------------------------------
_SUBGRAPH = "_contrib_dgl_subgraph"


class DGLSubgraphParam(Params):
    num_args = Field(int, REQUIRED, "Number of input arguments: the graph and the vertex "
                                    "lists.", low=2)
    return_mapping = Field(bool, REQUIRED, "Also return, for each vertex list, the subgraph "
                                           "with the original edge ids.")


def _num_outputs(attrs) -> int:
    return (attrs.num_args - 1) * (2 if attrs.return_mapping else 1)


def _subgraph_infer(attrs, ins, outs):
    square_csr(_SUBGRAPH, ins[0])
    shapes = []
    for i, s in enumerate(ins[1:]):
        if s is not None and len(s) != 1:
            raise contrib_error(_SUBGRAPH, f"varray{i} must be a 1-D list of vertex ids, got "
                                           f"shape {tuple(s)}")
        shapes.append(None if s is None else (s[0], s[0]))
    return ins, shapes * (2 if attrs.return_mapping else 1)


def _subgraph_infer_type(attrs, ins, outs):
    dtype = ins[0] if ins[0] is not None else next((t for t in outs if t is not None), None)
    rest = [t if t is not None else np.dtype(np.int64) for t in ins[1:]]
    return [dtype] + rest, [dtype] * len(outs)


def _induced(values, indices, indptr, n, vertices):
    """(new ids, original ids, sub indices, sub indptr) of the subgraph on ``vertices``."""
    vertices = vertices.astype(np.int64)
    if vertices.size and np.any(np.diff(vertices) < 0):
        raise kernel_error(_SUBGRAPH, "every vertex list must be sorted in ascending order; "
                                      "sort it (np.unique does) first")
    _check_vertices(_SUBGRAPH, n, ("a vertex list", vertices))
    position = np.full(n, -1, np.int64)
    position[vertices] = np.arange(len(vertices))
    sub_indices, original, sub_indptr = [], [], [0]
    for v in vertices:
        cols = indices[indptr[v]:indptr[v + 1]]
        keep = position[cols] >= 0
        sub_indices.append(position[cols[keep]])
        original.append(values[indptr[v]:indptr[v + 1]][keep])
        sub_indptr.append(sub_indptr[-1] + int(keep.sum()))
    sub_indices = np.concatenate(sub_indices) if sub_indices else np.zeros(0, np.int64)
    original = np.concatenate(original) if original else np.zeros(0, values.dtype)
    new_ids = np.arange(len(sub_indices))
    return new_ids, original, sub_indices, np.array(sub_indptr, np.int64)


def _subgraph_parts(attrs, graph, varrays):
    parts = csr_parts(graph)
    n = graph.shape[0]
    induced = [_induced(*parts, n, vs) for vs in varrays]
    ids = [(new, idx, ptr) for new, _, idx, ptr in induced]
    if attrs.return_mapping:
        ids += [(orig, idx, ptr) for _, orig, idx, ptr in induced]
    return ids


def _subgraph(attrs, ctx, inputs, req, outputs):
    graph = host(inputs[0])
    parts = _subgraph_parts(attrs, graph, [host(v) for v in inputs[1:]])
    for out, r, (vals, idx, ptr) in zip(outputs, req, parts):
        dense = dense_of(vals, idx, ptr, out.shape, out.dtype)
        put(out, r, ctx.xp.asarray(dense))


def _subgraph_impl(call, inputs, out):
    graph = inputs[0]
    if graph.stype != "csr":
        return NotImplemented
    square_csr(_SUBGRAPH, graph.shape)
    parts = _subgraph_parts(call.attrs, graph, [v.asnumpy() for v in inputs[1:]])
    results = [sparse.csr_matrix((vals.astype(graph.dtype), idx, ptr),
                                 shape=(len(ptr) - 1, len(ptr) - 1), ctx=graph.context,
                                 dtype=graph.dtype) for vals, idx, ptr in parts]
    if out is not None:
        for res, o in zip(results, out if isinstance(out, (list, tuple)) else [out]):
            res.copyto(o)
        return out
    return results[0] if len(results) == 1 else results


def _subgraph_sample(draw):
    d, n, graph = graph_sample(draw)
    lists = [np.unique([d.int(0, n - 1, "vertex") for _ in range(d.int(1, n, "size"))])
             for _ in range(d.int(1, 2, "lists"))]
    mapping = d.bool("return_mapping")
    return Case([graph] + [v.astype(np.float64) for v in lists],
                {"num_args": len(lists) + 1, "return_mapping": mapping})


def _subgraph_reference(raw, graph, *varrays):
    attrs = DGLSubgraphParam.parse(_SUBGRAPH, raw)
    return [dense_of(vals, idx, ptr, (len(ptr) - 1,) * 2, graph.dtype)
            for vals, idx, ptr in _subgraph_parts(attrs, graph, list(varrays))]


# -- shared -----------------------------------------------------------------------------------
def _nd_array(values, like):
    from dagnet.ndarray import array

    return array(values, ctx=like.context, dtype=like.dtype)


def _finish(result, out):
    if out is None:
        return result
    result.copyto(out[0] if isinstance(out, (list, tuple)) else out)
    return out


OPS = [
    Op(_EDGE_ID, num_inputs=3, input_names=["data", "u", "v"], infer_shape=_edge_id_infer,
       compute={XP: _edge_id}, gradient=ZeroGradient(),
       domain=Domain(_edge_id_sample, reference=_edge_id_reference, differentiable=()),
       description="For each pair ``(u[i], v[i])``, the stored value (edge id) of that edge "
                   "of the CSR graph ``data``, -1 where the edge does not exist.  Dtype = "
                   "data's.  Gradient zero."),
    Op(_ADJACENCY, input_names=["data"], infer_shape=_adjacency_infer,
       infer_type=lambda attrs, ins, outs: (ins, [np.dtype(np.float32)]),
       compute={XP: _adjacency}, gradient=ZeroGradient(),
       domain=Domain(lambda draw: Case([graph_sample(draw)[2]]),
                     reference=lambda raw, g: (g != 0).astype(np.float32), differentiable=()),
       description="The graph's adjacency matrix: its edges, each with value 1.0 (float32, "
                   "CSR for a CSR graph).  Gradient zero."),
    Op(_SUBGRAPH, params=DGLSubgraphParam, num_inputs=lambda attrs: attrs.num_args,
       num_outputs=_num_outputs, key_var_num_args="num_args",
       input_names=lambda attrs: ["graph"] + [f"varray{i}" for i in range(attrs.num_args - 1)],
       infer_shape=_subgraph_infer, infer_type=_subgraph_infer_type,
       compute={XP: _subgraph}, gradient=ZeroGradient(),
       domain=Domain(_subgraph_sample, reference=_subgraph_reference, differentiable=()),
       description="For each sorted vertex list, the subgraph induced on it (CSR for a CSR "
                   "graph), edges numbered 0, 1, ... row by row; with return_mapping, then "
                   "the same subgraphs holding the original edge ids.  Gradient zero."),
]



def _on_csr(outputs):
    """The storage rule of an operator of a CSR graph (its first input)."""
    return lambda attrs, stypes: outputs(attrs) if stypes[0] == "csr" else None


sparse.register_storage_impl(_EDGE_ID, _edge_id_impl,
                             infer_storage=_on_csr(lambda attrs: ["default"]))
sparse.register_storage_impl(_ADJACENCY, _adjacency_impl,
                             infer_storage=_on_csr(lambda attrs: ["csr"]))
sparse.register_storage_impl(_SUBGRAPH, _subgraph_impl,
                             infer_storage=_on_csr(lambda attrs: ["csr"] * _num_outputs(attrs)))
