"""Sparse operators and helpers added for MXNet 1.9.1's sparse unit tests: ``take`` of csr
rows, ``contrib.getnnz``, a column bias for ``FullyConnected``, the 'powerlaw' test matrix,
the scatter operators."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.test_utils import rand_sparse_ndarray

nd = mx.nd

DENSE = np.array([[0, 1, 0], [2, 0, 3], [0, 0, 0], [0, 0, 4]], dtype=np.float32)


@pytest.mark.parametrize("mode", ["clip", "wrap"])
def test_take_csr_rows_keeps_csr(mode):
    csr = nd.array(DENSE).tostype("csr")
    idx = np.array([3, -1, 0, 7, 1, 1])
    result = nd.take(csr, nd.array(idx), mode=mode)
    assert result.stype == "csr"
    np.testing.assert_array_equal(result.asnumpy(), np.take(DENSE, idx, axis=0, mode=mode))
    assert result.indptr[0].asscalar() == 0
    assert result.indptr.asnumpy()[-1] == len(result.data.asnumpy())


def test_take_csr_empty_and_other_axes():
    empty = nd.zeros((3, 2), stype="csr")
    result = nd.take(empty, nd.array([0, 2]))
    assert result.stype == "csr" and result.asnumpy().shape == (2, 2)
    assert not result.asnumpy().any()
    # along axis 1 the storage falls back to dense, with the dense result
    csr = nd.array(DENSE).tostype("csr")
    cols = nd.take(csr, nd.array([2, 0]), axis=1)
    assert cols.stype == "default"
    np.testing.assert_array_equal(cols.asnumpy(), DENSE[:, [2, 0]])


def test_getnnz_counts_stored_values():
    csr = nd.sparse.csr_matrix((np.array([1.0, 0.0, 3.0]), np.array([0, 2, 1]),
                                np.array([0, 2, 2, 3])), shape=(3, 3))
    total = nd.contrib.getnnz(csr)
    assert total.dtype == np.int64 and total.shape == (1,)
    assert total.asnumpy().tolist() == [3]  # the explicit zero counts
    assert nd.contrib.getnnz(csr, axis=1).asnumpy().tolist() == [2, 0, 1]


def test_getnnz_dense_and_bad_axis():
    assert nd.contrib.getnnz(nd.array(DENSE), axis=1).asnumpy().tolist() == [1, 2, 0, 1]
    with pytest.raises(mx.base.MXNetError, match="axis"):
        nd.contrib.getnnz(nd.array(DENSE).tostype("csr"), axis=0)
    with pytest.raises(mx.base.MXNetError, match="2-D"):
        nd.contrib.getnnz(nd.ones((2, 2, 2)))


def test_fully_connected_column_bias():
    x = nd.array(np.random.rand(5, 4))
    w = nd.array(np.random.rand(3, 4))
    b = np.random.rand(3, 1).astype(np.float32)
    out = nd.FullyConnected(x, w, nd.array(b), num_hidden=3)
    np.testing.assert_allclose(out.asnumpy(), x.asnumpy() @ w.asnumpy().T + b.ravel(),
                               rtol=1e-5)
    sparse_out = nd.sparse.FullyConnected(x, w.tostype("row_sparse"),
                                          nd.array(b).tostype("row_sparse"), num_hidden=3)
    np.testing.assert_allclose(sparse_out.asnumpy(), out.asnumpy(), rtol=1e-5)
    bias = nd.array(b)
    bias.attach_grad()
    with mx.autograd.record():
        y = nd.FullyConnected(x, w, bias, num_hidden=3)
    y.backward()
    assert bias.grad.shape == (3, 1)
    np.testing.assert_allclose(bias.grad.asnumpy().ravel(), np.full(3, 5.0))
    with pytest.raises(mx.base.MXNetError, match="bias"):
        nd.FullyConnected(x, w, nd.ones((3, 2)), num_hidden=3)


def test_powerlaw_rows_double():
    csr, _ = rand_sparse_ndarray((8, 64), "csr", density=0.25, distribution="powerlaw")
    counts = np.diff(csr.indptr.asnumpy())
    assert counts.sum() == int(8 * 64 * 0.25)
    assert counts[:4].tolist() == [2, 4, 8, 16]
    values = csr.data.asnumpy()
    assert (values >= 1.001).all() and (values < 3).all()
    with pytest.raises(ValueError, match="2 \\* rows"):
        rand_sparse_ndarray((4, 4), "csr", density=0.1, distribution="powerlaw")
    with pytest.raises(ValueError, match="csr"):
        rand_sparse_ndarray((4, 4), "row_sparse", density=0.5, distribution="powerlaw")


@pytest.mark.parametrize("fn", [lambda x, **k: nd.contrib.quadratic(x, **k),
                                lambda x, **k: nd.quadratic(x, **k)])
def test_quadratic_csr_keeps_csr_when_zero_maps_to_zero(fn):
    csr = nd.array(DENSE).tostype("csr")
    f = 0.5 * DENSE ** 2 + 2 * DENSE
    result = fn(csr, a=0.5, b=2.0)
    assert result.stype == "csr"
    np.testing.assert_allclose(result.asnumpy(), f)
    shifted = fn(csr, a=0.5, b=2.0, c=1.0)
    assert shifted.stype == "default"
    np.testing.assert_allclose(shifted.asnumpy(), f + 1)
    rsp = fn(nd.array(DENSE).tostype("row_sparse"), a=0.5, b=2.0)
    assert rsp.stype == "default"  # as in MXNet: only csr keeps its storage
    np.testing.assert_allclose(rsp.asnumpy(), f)


@pytest.mark.parametrize("deterministic", [True, False])
def test_sparse_embedding_deterministic_gradient(deterministic):
    idx = nd.array([1, 2, 1, 4, 1])
    heads = np.random.rand(5, 3).astype(np.float32)
    expected = np.zeros((5, 3), np.float32)
    np.add.at(expected, [1, 2, 1, 4, 1], heads)
    grads = []
    for _ in range(2):
        w = nd.ones((5, 3))
        w.attach_grad()
        with mx.autograd.record():
            y = nd.contrib.SparseEmbedding(idx, w, input_dim=5, output_dim=3,
                                           deterministic=deterministic)
        y.backward(nd.array(heads))
        grads.append(w.grad.asnumpy())
    np.testing.assert_allclose(grads[0], expected, rtol=1e-5)  # float32 sums, another order
    if deterministic:
        np.testing.assert_array_equal(grads[0], grads[1])


def test_sparse_embedding_symbol_takes_deterministic():
    data = mx.sym.Variable("data")
    weight = mx.sym.Variable("w", stype="row_sparse")
    embed = mx.sym.contrib.SparseEmbedding(data=data, weight=weight, input_dim=4, output_dim=2,
                                           deterministic=True)
    exe = embed.simple_bind(mx.cpu(), grad_req={"data": "null", "w": "write"}, data=(3,))
    exe.arg_dict["data"][:] = np.array([0, 3, 0])
    exe.arg_dict["w"][:] = np.arange(8).reshape(4, 2)
    exe.forward(is_train=True)
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), [[0, 1], [6, 7], [0, 1]])
    exe.backward([nd.ones((3, 2))])
    np.testing.assert_array_equal(exe.grad_dict["w"].asnumpy(), [[2, 2], [0, 0], [0, 0], [1, 1]])


def test_batchnorm_refuses_fix_gamma_on_sparse_input():
    x = nd.ones((2, 3)).tostype("row_sparse")
    gamma, beta, mean, var = nd.ones(3), nd.zeros(3), nd.zeros(3), nd.ones(3)
    out = nd.BatchNorm(x, gamma, beta, mean, var, fix_gamma=False)
    assert out.shape == (2, 3) and out.stype == "default"
    with pytest.raises(mx.base.MXNetError, match="fix_gamma=True is not supported"):
        nd.BatchNorm(x, gamma, beta, mean, var)
    sym = mx.sym.BatchNorm(mx.sym.Variable("data"), fix_gamma=True)
    with pytest.raises(mx.base.MXNetError, match="bind: operator .*fix_gamma=False"):
        sym.bind(mx.cpu(), [x, gamma, beta], aux_states=[mean, var])
    dense = sym.bind(mx.cpu(), [x.tostype("default"), gamma, beta], aux_states=[mean, var])
    assert dense.forward()[0].shape == (2, 3)
    nd.waitall()


def test_scatter_div_computes_only_the_stored_rows_of_a_row_sparse_lhs():
    lhs = nd.array(DENSE).tostype("row_sparse")  # rows 0, 1, 3
    rhs = np.array([[2, 2, 2], [4, 4, 4], [0, 0, 0], [0, 1, 2]], dtype=np.float32)
    for right in (nd.array(rhs), nd.array(rhs).tostype("row_sparse"),
                  nd.array(rhs).tostype("csr")):
        with np.errstate(divide="ignore", invalid="ignore"):
            result = nd._internal._scatter_elemwise_div(lhs, right)
            expected = DENSE / rhs
        assert result.stype == "row_sparse"
        np.testing.assert_array_equal(result.indices.asnumpy(), [0, 1, 3])
        expected[2] = 0  # a row the lhs does not store stays zero (not 0 / 0)
        np.testing.assert_array_equal(result.asnumpy(), expected)


def test_scatter_div_of_other_storage_types_is_elemwise_div():
    rhs = np.full(DENSE.shape, 2, np.float32)
    for lhs in (nd.array(DENSE), nd.array(DENSE).tostype("csr")):
        result = nd._internal._scatter_elemwise_div(lhs, nd.array(rhs))
        assert result.stype == "default"
        np.testing.assert_array_equal(result.asnumpy(), DENSE / 2)


@pytest.mark.parametrize("op, sign", [("_scatter_plus_scalar", 1), ("_scatter_minus_scalar", -1)])
@pytest.mark.parametrize("stype", ["row_sparse", "csr", "default"])
def test_scatter_scalar_ops_change_only_the_stored_values(op, sign, stype):
    x = nd.array(DENSE).tostype(stype)
    result = getattr(nd._internal, op)(x, scalar=5)
    assert result.stype == stype
    stored = {"row_sparse": np.any(DENSE != 0, axis=1, keepdims=True), "csr": DENSE != 0,
              "default": True}[stype]
    np.testing.assert_array_equal(result.asnumpy(), np.where(stored, DENSE + sign * 5, 0))
    # bound in a graph: the same storage and values
    sym = getattr(mx.sym._internal, op)(mx.sym.Variable("x", stype=stype), scalar=5)
    out = sym.bind(mx.cpu(), {"x": x}).forward()[0]
    assert out.stype == stype
    np.testing.assert_array_equal(out.asnumpy(), result.asnumpy())
