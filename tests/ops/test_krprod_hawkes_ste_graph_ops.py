"""``khatri_rao``, ``_contrib_hawkesll``, the straight-through estimators
``_contrib_round_ste`` / ``_contrib_sign_ste`` and the DGL graph operators: values worked
out by hand or taken from MXNet 1.9.1 (written down here), gradients, and errors.  Forward
against numpy and gradients against central differences run in test_conformance.py."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


# -- khatri_rao -------------------------------------------------------------------------------
def test_khatri_rao_is_the_column_wise_kronecker_product():
    a = np.array([[1.0, -1.0], [2.0, -3.0]])
    b = np.array([[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]])
    out = mx.nd.khatri_rao(mx.nd.array(a), mx.nd.array(b)).asnumpy()
    want = np.stack([np.kron(a[:, k], b[:, k]) for k in range(2)], axis=1)
    np.testing.assert_array_equal(out, want)
    one = mx.nd.khatri_rao(mx.nd.array(a))
    np.testing.assert_array_equal(one.asnumpy(), a)


def test_khatri_rao_symbolic_shape_and_gradient():
    sym = mx.sym.khatri_rao(mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c"))
    assert sym.list_arguments() == ["a", "b", "c"]
    _, outs, _ = sym.infer_shape(a=(3, 2), b=(1, 2), c=(2, 2))
    assert outs == [(6, 2)]
    a, b = mx.nd.array(np.arange(6.0).reshape(3, 2)), mx.nd.array([[2.0, 3.0], [4.0, 5.0]])
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.khatri_rao(a, b)
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), np.tile([[6.0, 8.0]], (3, 1)))


def test_khatri_rao_refuses_mismatched_columns():
    with pytest.raises(mx.base.MXNetError, match="same number of columns"):
        mx.nd.khatri_rao(mx.nd.ones((2, 3)), mx.nd.ones((2, 2)))
    with pytest.raises(mx.base.MXNetError, match="matrix"):
        mx.nd.khatri_rao(mx.nd.ones((2, 3, 1)))


# -- hawkesll ---------------------------------------------------------------------------------
def _hawkes_inputs(marks, valid, k=3, max_time=100.0):
    n, t = np.shape(marks)
    lags = mx.nd.array(np.arange(1, n * t + 1).reshape(n, t) % 5 + 1)
    return (mx.nd.array(np.tile([1.5, 2.0, 3.0][:k], (n, 1))), mx.nd.array([0.2, 0.3, 0.4][:k]),
            mx.nd.array([2.0, 2.0, 2.0][:k]), mx.nd.zeros((n, k)), lags,
            mx.nd.array(marks).astype(np.int32), mx.nd.array(valid),
            mx.nd.ones((n,)) * max_time)


def test_hawkesll_without_events_is_minus_the_background_mass():
    inputs = _hawkes_inputs([[0, 1]], [0])
    ll, state = mx.nd.contrib.hawkesll(*inputs)
    np.testing.assert_allclose(ll.asnumpy(), [-(1.5 + 2.0 + 3.0) * 100.0], rtol=1e-6)
    np.testing.assert_array_equal(state.asnumpy(), np.zeros((1, 3)))


def test_hawkesll_one_event_by_hand():
    inputs = _hawkes_inputs([[1, 0]], [1], max_time=4.0)  # one event of mark 1 at t=2
    ll, state = mx.nd.contrib.hawkesll(*inputs)
    e = np.exp(-2.0 * 2.0)
    # the event: log(mu_1) - mu_1 * 2; after it, up to t=4: mark 1 adds mu_1 * 2 and the
    # excitation's alpha_1 (1 - e); marks 0 and 2 only their background over [0, 4]
    want = np.log(2.0) - 2.0 * 2.0 - (2.0 * 2.0 + 0.3 * (1 - e)) - 1.5 * 4.0 - 3.0 * 4.0
    np.testing.assert_allclose(ll.asnumpy(), [want], rtol=1e-5)
    np.testing.assert_allclose(state.asnumpy(), [[0.0, e, 0.0]], rtol=1e-5)


def test_hawkesll_gradient_matches_mxnet():
    # MXNet 1.9.1's test_hawkesll_backward_correct
    mu, alpha, beta = mx.nd.array([1.5, 2.0, 3.0]), mx.nd.array([0.2, 0.3, 0.4]), \
        mx.nd.array([2.0, 2.0, 2.0])
    lags = mx.nd.array([[6, 7, 8, 9, 3, 2, 5, 1, 7], [1, 2, 3, 4, 2, 1, 2, 1, 4]])
    marks = mx.nd.array([[0, 0, 0, 1, 0, 0, 1, 2, 0],
                         [1, 2, 0, 0, 0, 2, 2, 1, 0]]).astype(np.int32)
    for p in (mu, alpha, beta):
        p.attach_grad()
    with mx.autograd.record():
        ll, _ = mx.nd.contrib.hawkesll(mu.tile((2, 1)), alpha, beta, mx.nd.zeros((2, 3)), lags,
                                       marks, mx.nd.array([9, 9]), mx.nd.ones((2,)) * 100.0)
    ll.backward()
    np.testing.assert_allclose(mu.grad.asnumpy(), [-193.33987481, -198.0, -198.66828681],
                               rtol=1e-5)
    np.testing.assert_allclose(alpha.grad.asnumpy(), [-9.95093892, -4.0, -3.98784892],
                               rtol=1e-5)
    np.testing.assert_allclose(beta.grad.asnumpy(), [-1.49052169e-02, -5.87469511e-09,
                                                     -7.29065224e-03], rtol=1e-4, atol=1e-9)


def test_hawkesll_state_gradient_by_central_differences():
    inputs = list(_hawkes_inputs([[0, 1, 0, 2]], [4], max_time=20.0))
    base = np.array([[0.5, 0.2, 0.1]])
    inputs[3] = mx.nd.array(base, dtype=np.float64)
    inputs = [x.astype(np.float64) if i != 5 else x for i, x in enumerate(inputs)]
    inputs[3].attach_grad()
    with mx.autograd.record():
        ll, state = mx.nd.contrib.hawkesll(*inputs)
        total = ll.sum() + state.sum()
    total.backward()

    def f(s):
        args = list(inputs)
        args[3] = mx.nd.array(s, dtype=np.float64)
        a, b = mx.nd.contrib.hawkesll(*args)
        return float(a.sum().asscalar() + b.sum().asscalar())

    eps = 1e-6
    numeric = [(f(base + eps * np.eye(3)[i]) - f(base - eps * np.eye(3)[i])) / (2 * eps)
               for i in range(3)]
    np.testing.assert_allclose(inputs[3].grad.asnumpy()[0], numeric, rtol=1e-5)


def test_hawkesll_errors_name_the_input():
    inputs = list(_hawkes_inputs([[0, 1]], [2]))
    bad = list(inputs)
    bad[1] = mx.nd.array([0.2, 0.3])
    with pytest.raises(mx.base.MXNetError, match="alpha has shape"):
        mx.nd.contrib.hawkesll(*bad)
    bad = list(inputs)
    bad[5] = mx.nd.array([[0, 1]])
    with pytest.raises(mx.base.MXNetError, match="marks must be int32"):
        mx.nd.contrib.hawkesll(*bad)


# -- straight-through estimators --------------------------------------------------------------
@pytest.mark.parametrize(("op", "want"), [("round_ste", [2.0, -3.0, 0.0, 1.0]),
                                          ("sign_ste", [1.0, -1.0, 0.0, 1.0])])
def test_ste_forward_is_round_or_sign_and_gradient_passes_through(op, want):
    x = mx.nd.array([1.5, -2.5, 0.0, 0.7])
    x.attach_grad()
    head = mx.nd.array([1.0, 2.0, 3.0, 4.0])
    with mx.autograd.record():
        y = getattr(mx.nd.contrib, op)(x)
    y.backward(head)
    np.testing.assert_array_equal(y.asnumpy(), want)
    np.testing.assert_array_equal(x.grad.asnumpy(), head.asnumpy())


def test_ste_in_a_symbolic_graph():
    x = mx.sym.var("x")
    y = mx.sym.contrib.round_ste(x) * x
    exe = y.simple_bind(mx.cpu(), x=(3,))
    exe.arg_dict["x"][:] = mx.nd.array([0.4, 1.6, -1.5])
    exe.forward(is_train=True)
    exe.backward(mx.nd.ones((3,)))
    # d/dx round_ste(x) * x = 1 * x + round(x)
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), [0.4 + 0, 1.6 + 2, -1.5 - 2])


# -- graph operators (dgl_graph.cc) -----------------------------------------------------------
_GRAPH = [[1, 0, 0, 2], [3, 0, 4, 0], [0, 5, 0, 0], [0, 6, 7, 0]]


def _csr_graph(dtype=np.int64):
    return mx.nd.array(_GRAPH).tostype("csr").astype(dtype)


def test_dgl_subgraph_matches_mxnet():
    # values from MXNet 1.9.1 for this graph and vertices [0, 1, 2]
    new, orig = mx.nd.contrib.dgl_subgraph(_csr_graph(), mx.nd.array([0, 1, 2], dtype=np.int64),
                                           return_mapping=True)
    assert new.stype == orig.stype == "csr" and new.shape == (3, 3) and new.dtype == np.int64
    np.testing.assert_array_equal(new.data.asnumpy(), [0, 1, 2, 3])
    np.testing.assert_array_equal(new.indices.asnumpy(), [0, 0, 2, 1])
    np.testing.assert_array_equal(new.indptr.asnumpy(), [0, 1, 3, 4])
    np.testing.assert_array_equal(orig.data.asnumpy(), [1, 3, 4, 5])
    only = mx.nd.contrib.dgl_subgraph(_csr_graph(), mx.nd.array([1, 3], dtype=np.int64),
                                      return_mapping=False)
    np.testing.assert_array_equal(only.asnumpy(), [[0, 0], [0, 0]])  # edge 1->3 absent


def test_dgl_subgraph_needs_sorted_vertices():
    with pytest.raises(mx.base.MXNetError, match="sorted in ascending order"):
        mx.nd.contrib.dgl_subgraph(_csr_graph(), mx.nd.array([2, 0], dtype=np.int64),
                                   return_mapping=False).asnumpy()


def test_edge_id_and_adjacency_on_csr():
    graph = _csr_graph(np.float32)
    ids = mx.nd.contrib.edge_id(graph, mx.nd.array([0, 0, 1, 3]), mx.nd.array([0, 1, 2, 2]))
    np.testing.assert_array_equal(ids.asnumpy(), [1, -1, 4, 7])
    adj = mx.nd.contrib.dgl_adjacency(_csr_graph())
    assert adj.stype == "csr" and adj.dtype == np.float32
    np.testing.assert_array_equal(adj.indices.asnumpy(), _csr_graph().indices.asnumpy())
    np.testing.assert_array_equal(adj.data.asnumpy(), np.ones(7))


def test_graph_operators_refuse_a_non_square_graph():
    with pytest.raises(mx.base.MXNetError, match="square"):
        mx.nd.contrib.dgl_adjacency(mx.nd.ones((2, 3)).tostype("csr"))
    with pytest.raises(mx.base.MXNetError, match="outside \\[0, 4\\)"):
        mx.nd.contrib.edge_id(_csr_graph(np.float32), mx.nd.array([5]),
                              mx.nd.array([0])).asnumpy()


def test_edge_id_takes_a_rectangular_matrix():
    graph = mx.nd.array([[0, 2, 0], [3, 0, 0]]).tostype("csr")
    ids = mx.nd.contrib.edge_id(graph, mx.nd.array([0, 1, 1]), mx.nd.array([1, 0, 2]))
    np.testing.assert_array_equal(ids.asnumpy(), [2, 3, -1])
