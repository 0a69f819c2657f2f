"""The DGL neighbourhood samplers and dgl_graph_compact on CSR graphs (the conformance
suite covers their dense kernels in the cases that involve no chance)."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet import OperatorError

nd = mx.nd

# MXNet's example: the complete graph on 5 vertices, edge ids 1..20 row by row
INDICES = np.array([1, 2, 3, 4, 0, 2, 3, 4, 0, 1, 3, 4, 0, 1, 2, 4, 0, 1, 2, 3])
INDPTR = np.array([0, 4, 8, 12, 16, 20])
DENSE = np.zeros((5, 5), np.int64)
DENSE[np.repeat(np.arange(5), 4), INDICES] = np.arange(1, 21)


def _graph():
    return nd.sparse.csr_matrix((np.arange(1, 21), INDICES, INDPTR), shape=(5, 5),
                                dtype=np.int64)


def _check_sample(ids, sub, hops, seeds, num_hops, num_neighbor, top):
    ids, hops = ids.asnumpy(), hops.asnumpy()
    count = int(ids[-1])
    assert ids.shape == (top + 1,) and hops.shape == (top,) and sub.shape == (top, 5)
    assert sub.stype == "csr" and 0 < count <= top
    found = ids[:count]
    assert np.all(np.diff(found) > 0) and set(seeds) <= set(found.tolist())
    assert not ids[count:-1].any() and not hops[count:].any()
    dense = sub.asnumpy()
    indptr = sub.indptr.asnumpy()
    assert np.all(indptr[count:] == indptr[count])
    for i, v in enumerate(found):
        row = dense[i]
        kept = np.flatnonzero(row)
        assert len(kept) <= num_neighbor
        np.testing.assert_array_equal(row[kept], DENSE[v, kept])  # real edges, their ids
        if hops[i] >= num_hops:
            assert not len(kept)
        assert hops[i] == (0 if v in seeds else 1 + min(
            hops[j] for j in range(count) if dense[j, v]))
    return count


@pytest.mark.parametrize("seeds, num_hops, num_neighbor, top", [
    ([0, 1, 2, 3, 4], 1, 2, 5), ([0], 1, 1, 4), ([0], 2, 1, 3), ([0, 4], 2, 2, 5),
    ([1, 1, 3], 1, 4, 6)])
def test_uniform_sample_keeps_real_edges_within_the_limits(seeds, num_hops, num_neighbor, top):
    out = nd.contrib.dgl_csr_neighbor_uniform_sample(
        _graph(), nd.array(seeds, dtype=np.int64), num_hops=num_hops,
        num_neighbor=num_neighbor, max_num_vertices=top)
    assert len(out) == 3 and out[0].dtype == np.int64 and out[1].dtype == np.int64
    _check_sample(out[0], out[1], out[2], seeds, num_hops, num_neighbor, top)


def test_uniform_sample_keeps_every_edge_of_a_vertex_with_few_and_follows_the_seed():
    out = nd.contrib.dgl_csr_neighbor_uniform_sample(
        _graph(), nd.array([2], dtype=np.int64), num_hops=1, num_neighbor=4,
        max_num_vertices=6)
    np.testing.assert_array_equal(out[0].asnumpy(), [0, 1, 2, 3, 4, 0, 5])
    np.testing.assert_array_equal(out[1].asnumpy()[2], DENSE[2])
    np.testing.assert_array_equal(out[2].asnumpy(), [1, 1, 0, 1, 1, 0])
    draws = []
    for _ in range(2):
        mx.random.seed(7)
        draws.append(nd.contrib.dgl_csr_neighbor_uniform_sample(
            _graph(), nd.array([0, 3], dtype=np.int64), num_neighbor=2,
            max_num_vertices=5)[1].asnumpy())
    np.testing.assert_array_equal(*draws)


def test_several_seed_arrays_give_one_subgraph_each():
    out = nd.contrib.dgl_csr_neighbor_uniform_sample(
        _graph(), nd.array([0], dtype=np.int64), nd.array([3, 4], dtype=np.int64),
        num_args=3, num_neighbor=1, max_num_vertices=4)
    assert len(out) == 6
    for k, seeds in enumerate(([0], [3, 4])):
        _check_sample(out[k], out[2 + k], out[4 + k], seeds, 1, 1, 4)


def test_non_uniform_sample_never_picks_a_neighbour_without_probability():
    prob = nd.array([0.9, 0.0, 0.5, 0.0, 0.2])
    for _ in range(5):
        out = nd.contrib.dgl_csr_neighbor_non_uniform_sample(
            _graph(), prob, nd.array([1], dtype=np.int64), num_args=3, num_hops=1,
            num_neighbor=2, max_num_vertices=5)
        assert len(out) == 4 and out[2].dtype == np.float32
        count = _check_sample(out[0], out[1], out[3], [1], 1, 2, 5)
        found = out[0].asnumpy()[:count]
        assert set(found.tolist()) <= {0, 1, 2, 4}
        np.testing.assert_allclose(out[2].asnumpy()[:count], prob.asnumpy()[found])
        assert not out[2].asnumpy()[count:].any()


def test_compact_renumbers_a_sample_by_its_vertices():
    out = nd.contrib.dgl_csr_neighbor_uniform_sample(
        _graph(), nd.array([0, 1, 2, 3, 4], dtype=np.int64), num_neighbor=2,
        max_num_vertices=6)
    size = int(out[0].asnumpy()[-1])
    compact, mapping = nd.contrib.dgl_graph_compact(out[1], out[0], graph_sizes=(size,),
                                                    return_mapping=True)
    assert compact.stype == mapping.stype == "csr" and compact.shape == (size, size)
    ids = out[0].asnumpy()[:size]
    np.testing.assert_array_equal(compact.indptr.asnumpy(), out[1].indptr.asnumpy()[:size + 1])
    np.testing.assert_array_equal(ids[compact.indices.asnumpy()], out[1].indices.asnumpy())
    np.testing.assert_array_equal(compact.data.asnumpy(), np.arange(10))
    np.testing.assert_array_equal(mapping.data.asnumpy(), out[1].data.asnumpy())


def test_compact_refuses_an_edge_to_a_vertex_not_found():
    graph = nd.sparse.csr_matrix(([7], [4], [0, 1, 1]), shape=(2, 5), dtype=np.int64)
    with pytest.raises(OperatorError, match="vertex 4"):
        nd.contrib.dgl_graph_compact(graph, nd.array([0, 1, 2], dtype=np.int64),
                                     graph_sizes=(2,), return_mapping=False).wait_to_read()


def test_sampler_errors_name_the_problem():
    with pytest.raises(OperatorError, match="max_num_vertices"):
        nd.contrib.dgl_csr_neighbor_uniform_sample(
            _graph(), nd.array([0, 1, 2], dtype=np.int64), max_num_vertices=2)
    with pytest.raises(mx.ShapeError, match="square"):
        nd.contrib.dgl_csr_neighbor_uniform_sample(
            nd.sparse.zeros("csr", (3, 4), dtype=np.int64), nd.array([0], dtype=np.int64))


def test_bound_samplers_give_csr_subgraphs():
    graph = mx.sym.Variable("graph", stype="csr")
    seeds = mx.sym.Variable("seeds")
    sym = mx.sym.contrib.dgl_csr_neighbor_uniform_sample(graph, seeds, num_neighbor=4,
                                                         max_num_vertices=6)
    exe = sym.bind(mx.cpu(), {"graph": _graph(), "seeds": nd.array([2], dtype=np.int64)})
    ids, sub, hops = exe.forward()
    assert [a.stype for a in exe.outputs] == ["default", "csr", "default"]
    np.testing.assert_array_equal(ids.asnumpy(), [0, 1, 2, 3, 4, 0, 5])
    np.testing.assert_array_equal(sub.asnumpy()[2], DENSE[2])


def test_bound_dgl_graph_operators_keep_csr_results():
    graph = mx.sym.Variable("graph", stype="csr")
    sym = mx.sym.Group([mx.sym.contrib.dgl_adjacency(graph),
                        mx.sym.contrib.dgl_subgraph(graph, mx.sym.Variable("v"), num_args=2,
                                                    return_mapping=False)])
    exe = sym.bind(mx.cpu(), {"graph": _graph(), "v": nd.array([0, 2], dtype=np.int64)})
    adjacency, subgraph = exe.forward()
    assert adjacency.stype == subgraph.stype == "csr"
    np.testing.assert_array_equal(adjacency.asnumpy(), DENSE != 0)
    np.testing.assert_array_equal(subgraph.data.asnumpy(), [0, 1])
