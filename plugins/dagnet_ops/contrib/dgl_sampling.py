"""Neighbourhood sampling of MXNet's ``dgl_graph.cc`` on a graph held as a square CSR
matrix (row = vertex, its stored columns = its neighbours, stored values = edge ids):

- ``_contrib_dgl_csr_neighbor_uniform_sample`` (``contrib.dgl_csr_neighbor_uniform_sample``)
  and ``_contrib_dgl_csr_neighbor_non_uniform_sample`` (``..._non_uniform_sample``, which
  takes a ``probability`` per vertex after the graph): for each seed array, a breadth-first
  walk from the seeds that keeps, for every vertex fewer than ``num_hops`` steps away, at
  most ``num_neighbor`` of its edges -- all of them when it has no more, else a random
  choice: uniform, or weighted by the neighbours' probabilities (drawn one after another
  without replacement) -- and adds the chosen neighbours, until ``max_num_vertices``
  vertices are found.  Per seed array the outputs are, in this order over all seed arrays:
  the vertex ids found, ascending, padded with 0 to ``max_num_vertices`` and followed by
  their count (``max_num_vertices + 1`` values, the seeds' dtype); the sampled edges as a
  ``(max_num_vertices, n)`` CSR matrix whose row ``i`` holds the edges kept from the
  ``i``-th vertex found (original columns and edge ids, the graph's dtype; rows past the
  count are empty); for the non-uniform sampler, the probabilities of the vertices found
  (padded with 0); and each vertex's hop count from the seeds (padded with 0).  The
  random choices start from one draw of the device's generator per call, so
  ``mx.random.seed`` makes them reproducible.
- ``_contrib_dgl_graph_compact`` (``contrib.dgl_graph_compact``): renumbers such a sampled
  CSR matrix by the vertex ids found (its ``graph_sizes`` first rows and the columns that
  are those vertices): a ``(size, size)`` CSR matrix with edges numbered 0, 1, ... row
  by row, and with ``return_mapping`` the same matrix holding the original edge ids
  (MXNet declares this second output but leaves it unwritten).

A uniform choice keeps the chosen edges in the row's order, a weighted one orders them by
neighbour (MXNet sorts their vertex ids and edge ids apart, which pairs them wrongly unless
the ids grow with the columns).  On dense input the kernels (what the conformance suite
runs) read the nonzero entries as the edges and write dense views of the CSR results.
None is differentiable (the outputs are ids and counts): the gradient is zero.
"""

from __future__ import annotations

import numpy as np

from dagnet.ndarray import sparse
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    Op,
    Params,
    Shape,
    ZeroGradient,
)
from dagnet.resource import ResourceRequest

from ._common import contrib_error, host, kernel_error, put
from .dgl_graph import csr_parts, dense_of, graph_sample, square_csr

__all__ = ["OPS"]

_UNIFORM = "_contrib_dgl_csr_neighbor_uniform_sample"
_NON_UNIFORM = "_contrib_dgl_csr_neighbor_non_uniform_sample"
_COMPACT = "_contrib_dgl_graph_compact"


class NeighborSampleParam(Params):
    num_args = Field(int, REQUIRED, "Number of inputs: the graph, the probability (non-uniform "
                                    "sampler only) and the seed arrays.", low=2)
    num_hops = Field(int, 1, "How many steps from the seeds the walk goes.", low=0)
    num_neighbor = Field(int, 2, "The most edges kept from each vertex.", low=0)
    max_num_vertices = Field(int, 100, "The most vertices a sampled subgraph holds (the "
                                       "outputs' length).", low=1)


class _Sampler:
    """What tells the two samplers apart: the inputs before the seed arrays, and whether a
    probability output comes before the hop counts."""

    def __init__(self, name: str, weighted: bool):
        self.name = name
        self.weighted = weighted
        self.lead = 2 if weighted else 1  # the graph (and the probability)
        self.kinds = 4 if weighted else 3  # output sets

    def count(self, attrs) -> int:
        """How many seed arrays (subgraphs)."""
        return attrs.num_args - self.lead

    def input_names(self, attrs) -> list[str]:
        return (["csr_matrix", "probability"][:self.lead]
                + [f"seed_array{i}" for i in range(self.count(attrs))])

    def infer_shape(self, attrs, ins, outs):
        k, top = self.count(attrs), attrs.max_num_vertices
        if k < 1:
            raise contrib_error(self.name, f"num_args={attrs.num_args} leaves no seed array; "
                                           f"give at least one after the first {self.lead} "
                                           f"input(s)")
        square_csr(self.name, ins[0])
        for i, s in enumerate(ins[1:]):
            if s is not None and len(s) != 1:
                name = self.input_names(attrs)[i + 1]
                raise contrib_error(self.name, f"{name} must be 1-D, got shape {tuple(s)}")
        n = None if ins[0] is None else ins[0][1]
        sets = [(top + 1,), None if n is None else (top, n), (top,)]
        if self.weighted:
            sets.append((top,))
        return ins, [shape for shape in sets for _ in range(k)]

    def infer_type(self, attrs, ins, outs):
        k = self.count(attrs)
        seeds = [t if t is not None else np.dtype(np.int64) for t in ins[self.lead:]]
        sets = [seeds, [ins[0]] * k]
        if self.weighted:
            sets.append([ins[1]] * k)
        sets.append(seeds)
        return ins[:self.lead] + seeds, [t for kind in sets for t in kind]

    def samples(self, attrs, graph, probability, seed_arrays, rng):
        """(ids, (values, indices, indptr), probabilities or None, hops) per seed array."""
        parts = csr_parts(graph)
        n = graph.shape[0]
        weights = None if probability is None else np.asarray(probability, np.float64)
        if weights is not None and weights.shape != (n,):
            raise kernel_error(self.name, f"probability must hold one value per vertex "
                                          f"({n}), got shape {weights.shape}")
        return [_sample(self.name, parts, n, np.asarray(seeds), weights, attrs, rng)
                for seeds in seed_arrays]

    def kernel(self, attrs, ctx, inputs, req, outputs):
        k, xp = self.count(attrs), ctx.xp
        probability = host(inputs[1]) if self.weighted else None
        results = self.samples(attrs, host(inputs[0]), probability,
                               [host(s) for s in inputs[self.lead:]],
                               _host_rng(ctx.requested[0].generator))
        for i, (ids, (values, indices, indptr), chances, hops) in enumerate(results):
            sub = outputs[k + i]
            sets = [ids, dense_of(values, indices, indptr, sub.shape, sub.dtype)]
            if self.weighted:
                sets.append(chances)
            sets.append(hops)
            for kind, value in enumerate(sets):
                put(outputs[kind * k + i], req[kind * k + i], xp.asarray(value))

    def storage(self, attrs, stypes):
        if stypes[0] != "csr":
            return None
        k = self.count(attrs)
        return ["default"] * k + ["csr"] * k + ["default"] * (k * (self.kinds - 2))

    def impl(self, call, inputs, out):
        attrs, graph, k = call.attrs, inputs[0], self.count(call.attrs)
        if self.storage(attrs, [a.stype for a in inputs]) is None:
            return NotImplemented
        _, shapes = self.infer_shape(attrs, [a.shape for a in inputs], [])
        _, dtypes = self.infer_type(attrs, [a.dtype for a in inputs], [])
        probability = inputs[1].asnumpy() if self.weighted else None
        results = self.samples(attrs, graph, probability,
                               [s.asnumpy() for s in inputs[self.lead:]], _draw_rng(graph))
        arrays = []
        for kind in range(self.kinds):
            for i, (ids, parts, chances, hops) in enumerate(results):
                index = kind * k + i
                if kind == 1:
                    values, indices, indptr = parts
                    arrays.append(sparse.csr_matrix((values, indices, indptr),
                                                    shape=shapes[index], ctx=graph.context,
                                                    dtype=dtypes[index]))
                    continue
                value = ids if kind == 0 else hops if kind == self.kinds - 1 else chances
                arrays.append(_array(value, graph.context, dtypes[index]))
        return _finish_all(arrays, out)

    def domain_sample(self, draw):
        """Cases whose result involves no chance: every vertex keeps all its edges
        (num_neighbor >= its degree) and the walk never reaches max_num_vertices."""
        d, n, graph = graph_sample(draw)
        k = d.int(1, 2, "seed arrays")
        seeds = [np.array([d.int(0, n - 1, "seed") for _ in range(d.int(1, n, "seeds"))],
                          np.float64) for _ in range(k)]
        params = {"num_args": self.lead + k, "num_hops": d.int(0, 2, "num_hops"),
                  "num_neighbor": n + d.int(0, 1, "num_neighbor - n"),
                  "max_num_vertices": n + d.int(1, 2, "max_num_vertices - n")}
        lead = [graph]
        if self.weighted:
            lead.append(d.uniform((n,), 0.1, 1.0))
        return Case(lead + seeds, params)

    def reference(self, raw, graph, *rest):
        """The walk as distances: the vertices within num_hops of the seeds, each vertex
        nearer than num_hops keeping every edge."""
        attrs = NeighborSampleParam.parse(self.name, raw)
        probability = rest[0] if self.weighted else None
        top = attrs.max_num_vertices
        ids, subs, chances, hops = [], [], [], []
        for seeds in rest[self.lead - 1:]:
            distance = _distances(graph != 0, seeds.astype(np.int64))
            found = np.flatnonzero(distance <= attrs.num_hops)
            ids.append(np.concatenate([found, np.zeros(top - len(found)), [len(found)]]))
            sub = np.zeros((top, graph.shape[1]), graph.dtype)
            for i, v in enumerate(found):
                if distance[v] < attrs.num_hops:
                    sub[i] = graph[v]
            subs.append(sub)
            if probability is not None:
                chances.append(np.concatenate([probability[found],
                                               np.zeros(top - len(found))]))
            hops.append(np.concatenate([distance[found], np.zeros(top - len(found))]))
        return ids + subs + chances + hops

    def op(self, description: str) -> Op:
        return Op(self.name, params=NeighborSampleParam,
                  num_inputs=lambda attrs: attrs.num_args,
                  num_outputs=lambda attrs: self.kinds * self.count(attrs),
                  key_var_num_args="num_args", input_names=self.input_names,
                  infer_shape=self.infer_shape, infer_type=self.infer_type,
                  compute={XP: self.kernel}, gradient=ZeroGradient(),
                  resources=[ResourceRequest("random")],
                  domain=Domain(self.domain_sample, reference=self.reference,
                                differentiable=()),
                  description=description)


def _sample(op, parts, n, seeds, weights, attrs, rng):
    """One subgraph: MXNet's breadth-first walk (a vertex is expanded while fewer than
    max_num_vertices are found; its kept neighbours join until that many are)."""
    values, indices, indptr = parts
    top = attrs.max_num_vertices
    seeds = seeds.astype(np.int64).reshape(-1)
    if seeds.size > top:
        raise kernel_error(op, f"{seeds.size} seeds but max_num_vertices={top}; give fewer "
                               f"seeds or a larger max_num_vertices")
    if seeds.size and (seeds.min() < 0 or seeds.max() >= n):
        raise kernel_error(op, f"the seeds hold vertex ids outside [0, {n}) of the graph")
    hop = dict.fromkeys(seeds.tolist(), 0)  # vertex -> hops; insertion order is the queue
    queue = list(hop)
    kept = {}
    position = 0
    while position < len(queue) and len(hop) < top:
        vertex = queue[position]
        position += 1
        if hop[vertex] >= attrs.num_hops:
            continue
        lo, hi = int(indptr[vertex]), int(indptr[vertex + 1])
        chosen = _choose(rng, hi - lo, attrs.num_neighbor,
                         None if weights is None else weights[indices[lo:hi]])
        columns, edges = indices[lo:hi][chosen], values[lo:hi][chosen]
        if weights is not None:  # a weighted choice: by neighbour
            order = np.argsort(columns, kind="stable")
            columns, edges = columns[order], edges[order]
        kept[vertex] = (columns, edges)
        for column in columns.tolist():
            if len(hop) >= top:
                break
            if column not in hop:
                hop[column] = hop[vertex] + 1
                queue.append(column)
    found = np.array(sorted(hop), np.int64)
    count = len(found)
    ids = np.zeros(top + 1, np.int64)
    ids[:count], ids[top] = found, count
    hops = np.zeros(top, np.int64)
    hops[:count] = [hop[v] for v in found.tolist()]
    rows = [kept.get(v, (indices[:0], values[:0])) for v in found.tolist()]
    indptr_out = np.zeros(top + 1, np.int64)
    indptr_out[1:count + 1] = np.cumsum([len(c) for c, _ in rows])
    indptr_out[count + 1:] = indptr_out[count]
    sub = (np.concatenate([e for _, e in rows]) if rows else values[:0],
           np.concatenate([c for c, _ in rows]) if rows else indices[:0], indptr_out)
    chances = None
    if weights is not None:
        chances = np.zeros(top, np.float64)
        chances[:count] = weights[found]
    return ids, sub, chances, hops


def _choose(rng, degree: int, most: int, weights) -> np.ndarray:
    """Positions (ascending) of the edges a vertex keeps: all when it has at most ``most``,
    else ``most`` of them drawn without replacement, uniformly or by ``weights``."""
    if degree <= most:
        return np.arange(degree)
    if weights is None:
        return np.sort(rng.choice(degree, most, replace=False))
    left = np.array(weights, np.float64)
    chosen = []
    for _ in range(most):
        total = left.sum()
        if total > 0:
            pick = int(np.searchsorted(np.cumsum(left), rng.random() * total, side="right"))
            pick = min(pick, degree - 1)
        else:  # only zero weights left: any edge not taken yet
            pick = int(rng.choice(np.setdiff1d(np.arange(degree), chosen)))
        chosen.append(pick)
        left[pick] = 0.0
    return np.sort(np.array(chosen, np.int64))


def _host_rng(generator) -> np.random.Generator:
    """A host generator started from one draw of a device generator (numpy's or cupy's)."""
    draw = host(generator.random((1,)))
    return np.random.default_rng(int(draw[0] * 2**53))


def _draw_rng(like) -> np.random.Generator:
    """A host generator started from one draw of ``like``'s device generator (through the
    engine, so it follows ``mx.random.seed``)."""
    from dagnet.ndarray import random

    draw = random.uniform(0, 1, shape=(1,), ctx=like.context, dtype="float64").asnumpy()
    return np.random.default_rng(int(draw[0] * 2**53))


def _distances(adjacency: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """Hops from the nearest seed along ``adjacency`` (a large number where unreachable)."""
    n = adjacency.shape[0]
    distance = np.full(n, n + 1, np.int64)
    distance[seeds] = 0
    frontier = np.zeros(n, bool)
    frontier[seeds] = True
    for step in range(1, n + 1):
        reached = adjacency[frontier].any(axis=0) & (distance > step)
        if not reached.any():
            break
        distance[reached] = step
        frontier = reached
    return distance


def _array(values, ctx, dtype):
    from dagnet.ndarray import array

    return array(values, ctx=ctx, dtype=dtype)


def _finish_all(results, out):
    if out is None:
        return results[0] if len(results) == 1 else results
    for result, target in zip(results, out if isinstance(out, (list, tuple)) else [out]):
        result.copyto(target)
    return out


# -- dgl_graph_compact ------------------------------------------------------------------------
class GraphCompactParam(Params):
    num_args = Field(int, REQUIRED, "Number of inputs: the sampled graphs, then their vertex "
                                    "id arrays.", low=2)
    return_mapping = Field(bool, REQUIRED, "Also return each compacted graph holding the "
                                           "original edge ids.")
    graph_sizes = Field(Shape, REQUIRED, "The number of vertices of each graph.")


def _graphs(attrs) -> int:
    return attrs.num_args // 2


def _compact_names(attrs) -> list[str]:
    g = _graphs(attrs)
    return [f"graph{i}" for i in range(g)] + [f"varray{i}" for i in range(g)]


def _compact_shape(attrs, ins, outs):
    g, sizes = _graphs(attrs), tuple(attrs.graph_sizes)
    if attrs.num_args != 2 * g or len(sizes) != g:
        raise contrib_error(_COMPACT, f"num_args={attrs.num_args} must count one graph and one "
                                      f"vertex id array per graph, and graph_sizes {sizes} "
                                      f"one size per graph")
    for i, size in enumerate(sizes):
        graph, ids = ins[i], ins[g + i]
        if graph is not None and (len(graph) != 2 or min(graph) < size):
            raise contrib_error(_COMPACT, f"graph{i} must be 2-D with at least {size} rows and "
                                          f"columns, got shape {tuple(graph)}")
        if ids is not None and (len(ids) != 1 or ids[0] <= size):
            raise contrib_error(_COMPACT, f"varray{i} must be 1-D, longer than its graph's "
                                          f"size {size} (the count comes last), got shape "
                                          f"{tuple(ids)}")
    shapes = [(size, size) for size in sizes]
    return ins, shapes * (2 if attrs.return_mapping else 1)


def _compact_type(attrs, ins, outs):
    dtype = next((t for t in ins if t is not None), np.dtype(np.int64))
    return [dtype if t is None else t for t in ins], [dtype] * len(outs)


def _compacted(attrs, graphs, id_arrays):
    """(new ids, original ids, indices, indptr) of each graph renumbered by its ids."""
    results = []
    for i, (graph, ids, size) in enumerate(zip(graphs, id_arrays, attrs.graph_sizes)):
        values, indices, indptr = csr_parts(graph)
        ids = np.asarray(ids).astype(np.int64)
        if len(ids) != len(indptr) or ids[-1] != size:
            raise kernel_error(_COMPACT, f"varray{i} must be what the sampler gave graph{i}: "
                                         f"one id per row and the count {size} last, got "
                                         f"length {len(ids)} ending in {ids[-1]}")
        position = {v: p for p, v in enumerate(ids[:size].tolist())}
        end = int(indptr[size])
        try:
            renumbered = np.array([position[c] for c in indices[:end].tolist()], np.int64)
        except KeyError as missing:
            raise kernel_error(_COMPACT, f"graph{i} has an edge to vertex {missing.args[0]}, "
                                         f"which is not among the {size} vertex ids of "
                                         f"varray{i}") from None
        results.append((np.arange(end), values[:end], renumbered, indptr[:size + 1]))
    return results


def _compact_parts(attrs, graphs, id_arrays):
    compacted = _compacted(attrs, graphs, id_arrays)
    parts = [(new, idx, ptr) for new, _, idx, ptr in compacted]
    if attrs.return_mapping:
        parts += [(orig, idx, ptr) for _, orig, idx, ptr in compacted]
    return parts


def _compact(attrs, ctx, inputs, req, outputs):
    g = _graphs(attrs)
    parts = _compact_parts(attrs, [host(a) for a in inputs[:g]],
                           [host(a) for a in inputs[g:]])
    for out, r, (values, indices, indptr) in zip(outputs, req, parts):
        put(out, r, ctx.xp.asarray(dense_of(values, indices, indptr, out.shape, out.dtype)))


def _compact_storage(attrs, stypes):
    g = _graphs(attrs)
    if any(s != "csr" for s in stypes[:g]):
        return None
    return ["csr"] * (g * (2 if attrs.return_mapping else 1))


def _compact_impl(call, inputs, out):
    attrs, g = call.attrs, _graphs(call.attrs)
    if _compact_storage(attrs, [a.stype for a in inputs]) is None:
        return NotImplemented
    parts = _compact_parts(attrs, inputs[:g], [a.asnumpy() for a in inputs[g:]])
    dtype = inputs[0].dtype
    results = [sparse.csr_matrix((values, indices, indptr), shape=(len(indptr) - 1,) * 2,
                                 ctx=inputs[0].context, dtype=dtype)
               for values, indices, indptr in parts]
    return _finish_all(results, out)


def _compact_sample(draw):
    """Graphs as the sampler leaves them: ``top`` rows, the first ``size`` holding edges
    (nonzero ids) into the ``size`` vertices found, the ids padded, their count last."""
    d, n, _ = graph_sample(draw)
    k = d.int(1, 2, "graphs")
    graphs, id_arrays, sizes = [], [], []
    for _ in range(k):
        found = np.unique([d.int(0, n - 1, "vertex") for _ in range(d.int(1, n, "found"))])
        size, top = len(found), len(found) + d.int(0, 2, "padding")
        graph = np.zeros((top, n))
        mask = d.uniform((size, size), 0, 1) < 0.5
        graph[np.ix_(np.arange(size), found)] = np.where(mask, np.cumsum(mask).reshape(
            mask.shape), 0)
        graphs.append(graph)
        id_arrays.append(np.concatenate([found, np.zeros(top - size), [size]]))
        sizes.append(size)
    return Case(graphs + id_arrays, {"num_args": 2 * k, "graph_sizes": tuple(sizes),
                                     "return_mapping": d.bool("return_mapping")})


def _compact_reference(raw, *arrays):
    """Row-major numbering of the edges, columns renumbered by their rank among the ids."""
    attrs = GraphCompactParam.parse(_COMPACT, raw)
    g = _graphs(attrs)
    new, original = [], []
    for graph, ids, size in zip(arrays[:g], arrays[g:], attrs.graph_sizes):
        rank = {int(v): p for p, v in enumerate(ids[:size])}
        numbered, kept = np.zeros((size, size), graph.dtype), np.zeros((size, size), graph.dtype)
        for e, (r, c) in enumerate(zip(*np.nonzero(graph[:size]))):
            numbered[r, rank[int(c)]] = e
            kept[r, rank[int(c)]] = graph[r, c]
        new.append(numbered)
        original.append(kept)
    return new + (original if attrs.return_mapping else [])


_SAMPLERS = (_Sampler(_UNIFORM, weighted=False), _Sampler(_NON_UNIFORM, weighted=True))

OPS = [
    _SAMPLERS[0].op("Samples subgraphs of a CSR graph around each seed array, keeping at "
                    "most num_neighbor edges of a vertex, chosen uniformly.  Outputs, each "
                    "set one array per seed array: vertex ids found (padded, the count "
                    "last), the sampled edges as a (max_num_vertices, n) CSR matrix, hop "
                    "counts.  Gradient zero."),
    _SAMPLERS[1].op("Samples subgraphs of a CSR graph around each seed array, keeping at "
                    "most num_neighbor edges of a vertex, chosen with the probability of "
                    "their neighbour.  Outputs, each set one array per seed array: vertex "
                    "ids found (padded, the count last), the sampled edges as a "
                    "(max_num_vertices, n) CSR matrix, the probabilities of the vertices "
                    "found, hop counts.  Gradient zero."),
    Op(_COMPACT, params=GraphCompactParam, num_inputs=lambda attrs: attrs.num_args,
       num_outputs=lambda attrs: _graphs(attrs) * (2 if attrs.return_mapping else 1),
       key_var_num_args="num_args", input_names=_compact_names, infer_shape=_compact_shape,
       infer_type=_compact_type, compute={XP: _compact}, gradient=ZeroGradient(),
       domain=Domain(_compact_sample, reference=_compact_reference, differentiable=()),
       description="Renumbers sampled CSR graphs by their vertex id arrays: (size, size) CSR "
                   "matrices with edges numbered 0, 1, ... row by row; with return_mapping, "
                   "then the same matrices holding the original edge ids.  Gradient zero."),
]

for _sampler in _SAMPLERS:
    sparse.register_storage_impl(_sampler.name, _sampler.impl, infer_storage=_sampler.storage)
sparse.register_storage_impl(_COMPACT, _compact_impl, infer_storage=_compact_storage)
