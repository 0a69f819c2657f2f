"""Sparse storage: creation, conversion, engine ordering, operators and their fallback,
autograd through sparse arrays, and the errors for malformed input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dagnet as mx
from dagnet.ndarray import sparse

nd = mx.nd

DENSE = np.array([[0, 1, 0], [2, 0, 3], [0, 0, 0], [0, 0, 4]], dtype=np.float32)


# -- creation and conversion ------------------------------------------------------------------
def test_classes_and_public_names():
    c = nd.array(DENSE).tostype("csr")
    r = nd.array(DENSE).tostype("row_sparse")
    assert isinstance(c, nd.NDArray) and isinstance(c, sparse.CSRNDArray)
    assert isinstance(r, sparse.BaseSparseNDArray) and isinstance(r, nd.RowSparseNDArray)
    assert (c.stype, r.stype) == ("csr", "row_sparse")
    assert c.shape == r.shape == (4, 3) and c.dtype is np.float32
    assert mx.nd.sparse is sparse
    from dagnet.ndarray.ndarray import _STORAGE_TYPE_ID_TO_STR, _STORAGE_TYPE_STR_TO_ID

    assert _STORAGE_TYPE_STR_TO_ID == {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
    assert _STORAGE_TYPE_ID_TO_STR[2] == "csr"
    assert repr(c) == "\n<CSRNDArray 4x3 @cpu(0)>"


def test_csr_components_match_scipy():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    c = nd.array(DENSE).tostype("csr")
    expected = scipy_sparse.csr_matrix(DENSE)
    np.testing.assert_array_equal(c.data.asnumpy(), expected.data)
    np.testing.assert_array_equal(c.indices.asnumpy(), expected.indices)
    np.testing.assert_array_equal(c.indptr.asnumpy(), expected.indptr)
    assert c.indices.dtype is np.int64 and c.indptr.dtype is np.int64
    back = c.asscipy()
    assert (back != expected).nnz == 0
    from_scipy = nd.array(expected)
    assert from_scipy.stype == "csr"
    np.testing.assert_array_equal(from_scipy.asnumpy(), DENSE)


def test_row_sparse_components_and_round_trip():
    r = nd.array(DENSE).tostype("row_sparse")
    np.testing.assert_array_equal(r.indices.asnumpy(), [0, 1, 3])
    np.testing.assert_array_equal(r.data.asnumpy(), DENSE[[0, 1, 3]])
    np.testing.assert_array_equal(r.tostype("default").asnumpy(), DENSE)
    np.testing.assert_array_equal(r.asnumpy(), DENSE)


def test_creation_functions():
    c = sparse.csr_matrix(([1, 2, 3], [1, 0, 2], [0, 1, 2, 2, 3]), shape=(4, 3))
    np.testing.assert_array_equal(c.asnumpy(), [[0, 1, 0], [2, 0, 0], [0, 0, 0], [0, 0, 3]])
    assert c.dtype is np.float32
    inferred = sparse.csr_matrix((np.array([1.0, 2.0]), [1, 2], [0, 1, 2]))
    assert inferred.shape == (2, 3) and inferred.dtype is np.float64
    coo = sparse.csr_matrix(([5.0, 6.0], ([0, 2], [1, 0])), shape=(3, 2))
    np.testing.assert_array_equal(coo.asnumpy(), [[0, 5], [0, 0], [6, 0]])
    r = sparse.row_sparse_array(([[1, 2], [3, 4]], [1, 4]), shape=(6, 2))
    np.testing.assert_array_equal(r.asnumpy()[[1, 4]], [[1, 2], [3, 4]])
    assert r.asnumpy().sum() == 10
    for stype in ("csr", "row_sparse"):
        z = nd.zeros((2, 3), stype=stype, dtype="float16")
        assert z.stype == stype and z.dtype is np.float16
        assert not z.asnumpy().any() and z.data.shape[0] == 0
        assert sparse.zeros(stype, (2, 3)).stype == stype
        assert sparse.empty(stype, (2, 3)).stype == stype
    assert sparse.csr_matrix((2, 3)).shape == (2, 3)
    assert sparse.row_sparse_array((5, 2)).shape == (5, 2)
    dense_src = sparse.csr_matrix(DENSE)
    np.testing.assert_array_equal(dense_src.asnumpy(), DENSE)
    copy = sparse.array(dense_src, dtype="float64")
    assert copy.stype == "csr" and copy.dtype is np.float64


def test_copy_astype_pickle_and_setitem():
    c = nd.array(DENSE).tostype("csr")
    assert c.copy().stype == "csr" and c.astype("int32").dtype is np.int32
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(c)).asnumpy(), DENSE)
    r = nd.array(DENSE).tostype("row_sparse")
    r[:] = 2
    assert (r.asnumpy() == 2).all()
    r[:] = nd.array(DENSE)
    np.testing.assert_array_equal(r.asnumpy(), DENSE)
    dense = nd.zeros((4, 3))
    c.copyto(dense)
    np.testing.assert_array_equal(dense.asnumpy(), DENSE)
    assert c[1:3].stype == "csr"
    np.testing.assert_array_equal(c[1:3].asnumpy(), DENSE[1:3])
    np.testing.assert_array_equal(c[-1].asnumpy(), DENSE[3:])
    assert r[:] is r


# -- engine ordering --------------------------------------------------------------------------
def test_sparse_results_wait_for_their_writers():
    x = nd.zeros((64, 32))
    x[:] = 1  # pushed; the conversion below must see it
    r = x.tostype("row_sparse")
    y = r * 3
    x[:] = 5  # a later write to the source does not reach the conversion made before it
    assert y.stype == "row_sparse"
    np.testing.assert_array_equal(y.asnumpy(), np.full((64, 32), 3, np.float32))
    assert r.indices.shape == (64,)


# -- operators and the fallback ------------------------------------------------------------------
def test_storage_of_results_follows_mxnet():
    a = nd.array(DENSE)
    c, r = a.tostype("csr"), a.tostype("row_sparse")
    assert (r + r).stype == "row_sparse" and (c + c).stype == "csr"
    assert (r + a).stype == "default" and (c * a).stype == "csr"
    assert (r * 2).stype == "row_sparse" and (r + 1).stype == "default"
    assert nd.square(c).stype == "csr" and nd.exp(r).stype == "default"
    assert nd.add_n(r, r, r).stype == "row_sparse"
    np.testing.assert_allclose(nd.add_n(r, r, r).asnumpy(), 3 * DENSE)
    np.testing.assert_allclose((c * a).asnumpy(), DENSE * DENSE)
    np.testing.assert_allclose(nd.exp(r).asnumpy(), np.exp(DENSE), rtol=1e-6)
    np.testing.assert_allclose(nd.sum(c).asnumpy(), [DENSE.sum()])
    kept = sparse.retain(r, nd.array([1, 3]))
    assert kept.stype == "row_sparse"
    np.testing.assert_array_equal(kept.indices.asnumpy(), [1, 3])
    ssum = nd._internal._square_sum(r, axis=1, keepdims=True)
    assert ssum.stype == "row_sparse"
    np.testing.assert_allclose(ssum.asnumpy(), (DENSE ** 2).sum(1, keepdims=True))


def test_sparse_out_receives_a_cast():
    a = nd.array(DENSE)
    out = sparse.zeros("row_sparse", (4, 3))
    nd.exp(a, out=out)
    assert out.stype == "row_sparse"
    np.testing.assert_allclose(out.asnumpy(), np.exp(DENSE), rtol=1e-6)


def test_sparse_dot_matches_numpy():
    rng = np.random.default_rng(0)
    lhs = np.where(rng.random((5, 7)) < 0.4, rng.standard_normal((5, 7)), 0).astype(np.float32)
    rhs = rng.standard_normal((7, 3)).astype(np.float32)
    c = nd.array(lhs).tostype("csr")
    out = nd.dot(c, nd.array(rhs))
    assert out.stype == "default"
    np.testing.assert_allclose(out.asnumpy(), lhs @ rhs, rtol=1e-5, atol=1e-6)
    rhs_t = rng.standard_normal((5, 3)).astype(np.float32)
    out_t = sparse.dot(c, nd.array(rhs_t), transpose_a=True)
    assert out_t.stype == "row_sparse"
    np.testing.assert_allclose(out_t.asnumpy(), lhs.T @ rhs_t, rtol=1e-5, atol=1e-6)
    for forward_stype in ("default", "csr", "row_sparse"):  # any storage, the same values
        forced = nd.dot(c, nd.array(rhs_t), transpose_a=True, forward_stype=forward_stype)
        assert forced.stype == forward_stype
        np.testing.assert_allclose(forced.asnumpy(), lhs.T @ rhs_t, rtol=1e-5, atol=1e-6)
    vec = nd.dot(c, nd.array(rhs[:, 0]))
    np.testing.assert_allclose(vec.asnumpy(), lhs @ rhs[:, 0], rtol=1e-5, atol=1e-6)


def test_sparse_dot_gradient_matches_central_differences():
    rng = np.random.default_rng(1)
    lhs = np.where(rng.random((4, 6)) < 0.5, rng.standard_normal((4, 6)), 0)
    weight = rng.standard_normal((6, 2))
    head = rng.standard_normal((4, 2))
    c = nd.array(lhs, dtype="float64").tostype("csr")
    w = nd.array(weight, dtype="float64").tostype("row_sparse")
    w.attach_grad()
    with mx.autograd.record():
        y = nd.dot(c, w)
    y.backward(nd.array(head, dtype="float64"))
    assert w.grad.stype == "row_sparse"

    def loss(wv):
        return float(np.sum((lhs @ wv) * head))

    numeric = np.zeros_like(weight)
    eps = 1e-6
    for index in np.ndindex(weight.shape):
        up, down = weight.copy(), weight.copy()
        up[index] += eps
        down[index] -= eps
        numeric[index] = (loss(up) - loss(down)) / (2 * eps)
    np.testing.assert_allclose(w.grad.asnumpy(), numeric, rtol=1e-5, atol=1e-7)


def test_autograd_through_the_fallback_and_grad_stypes():
    x = nd.array(DENSE).tostype("csr")
    x.attach_grad()
    assert x.grad.stype == "csr"
    with mx.autograd.record():
        y = nd.exp(x) * 2
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * np.exp(DENSE), rtol=1e-6)
    d = nd.ones((2, 2))
    d.attach_grad(stype="row_sparse")
    assert d.grad.stype == "row_sparse" and d.detach().stype == "default"
    assert x.detach().stype == "csr"


def test_symbol_variable_storage_type():
    assert mx.sym.Variable("x", stype="csr").attr("__storage_type__") == "2"
    assert mx.sym.sparse.dot is not None


# -- errors ---------------------------------------------------------------------------------
def test_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="'row_sparse' and 'csr'"):
        nd.ones((2, 2)).tostype("coo")
    with pytest.raises(ValueError, match="csr to row_sparse"):
        nd.ones((2, 2)).tostype("csr").tostype("row_sparse")
    with pytest.raises(sparse.SparseStorageError, match="indptr must hold rows"):
        sparse.csr_matrix(([1.0], [0], [0, 1, 1]), shape=(3, 2))
    # index values are checked by check_format (creation checks shapes), as in MXNet
    with pytest.raises(mx.MXNetError, match="column indices must be in"):
        sparse.csr_matrix(([1.0], [5], [0, 1]), shape=(1, 2)).check_format()
    with pytest.raises(sparse.SparseStorageError, match="strictly ascending"):
        sparse.csr_matrix(([1.0, 2.0], [1, 0], [0, 2]), shape=(1, 2)).check_format()
    with pytest.raises(sparse.SparseStorageError, match="indptr must be non-decreasing"):
        sparse.csr_matrix(([1.0, 2.0], [0, 1], [0, 2, 1, 2]), shape=(3, 2)).check_format()
    with pytest.raises(sparse.SparseStorageError, match="row indices must be strictly"):
        sparse.row_sparse_array(([[1.0], [2.0]], [3, 1]), shape=(4, 1)).check_format()
    with pytest.raises(ValueError, match="invalid shape"):
        sparse.csr_matrix(([], [], [0, 0]))
    with pytest.raises(sparse.SparseStorageError, match="one row per index"):
        sparse.row_sparse_array(([[1.0], [2.0]], [1]), shape=(4, 1))
    r = sparse.zeros("row_sparse", (3, 2))
    with pytest.raises(NotImplementedError):
        _ = r.size
    with pytest.raises(sparse.SparseStorageError, match="reshape"):
        r.reshape((6,))
    with pytest.raises(sparse.SparseStorageError, match=r"only supports \[:\]"):
        r[1] = 3


def test_save_and_load_sparse_arrays(tmp_path):
    a = nd.array(DENSE)
    path = str(tmp_path / "sparse.params")
    nd.save(path, {"c": a.tostype("csr"), "r": a.tostype("row_sparse"), "d": a,
                   "z": nd.zeros((2, 2), stype="row_sparse")})
    loaded = nd.load(path)
    assert {k: v.stype for k, v in loaded.items()} == {"c": "csr", "r": "row_sparse",
                                                       "d": "default", "z": "row_sparse"}
    for key in ("c", "r", "d"):
        np.testing.assert_array_equal(loaded[key].asnumpy(), DENSE)
    assert not loaded["z"].asnumpy().any()


def test_executors_keep_the_sparse_arrays_bound_to_them():
    x = mx.sym.Variable("x", stype="csr")
    value, grad = nd.array(DENSE).tostype("csr"), sparse.zeros("csr", DENSE.shape)
    exe = (x * 2).bind(mx.cpu(), {"x": value}, args_grad={"x": grad})
    exe.forward(is_train=True)
    assert exe.outputs[0].stype == "csr"  # _mul_scalar keeps csr, as in MXNet
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), 2 * DENSE)
    exe.backward(nd.ones(DENSE.shape).tostype("row_sparse"))  # a sparse head gradient
    assert exe.arg_dict["x"] is value and exe.grad_dict["x"] is grad
    np.testing.assert_array_equal(grad.asnumpy(), np.full(DENSE.shape, 2))
    # the executor reads the bound array at each forward pass
    (nd.array(DENSE) * 3).tostype("csr").copyto(value)
    np.testing.assert_array_equal(exe.forward()[0].asnumpy(), 6 * DENSE)


def test_a_sparse_gradient_array_given_to_bind_receives_the_gradient():
    grad = sparse.zeros("row_sparse", (3, 2))
    exe = (mx.sym.Variable("x") * 3).bind(mx.cpu(), {"x": nd.ones((3, 2))},
                                          args_grad={"x": grad})
    exe.forward(is_train=True)
    exe.backward(nd.ones((3, 2)))
    assert grad.stype == "row_sparse"
    np.testing.assert_array_equal(grad.asnumpy(), np.full((3, 2), 3))


def test_a_monitored_executor_also_fills_a_sparse_gradient_array():
    grad = sparse.zeros("row_sparse", (3, 2))
    exe = (mx.sym.Variable("x") * 3).bind(mx.cpu(), {"x": nd.ones((3, 2))},
                                          args_grad={"x": grad})
    exe.set_monitor_callback(lambda name, array: None)
    exe.forward(is_train=True)
    exe.backward(nd.ones((3, 2)))
    np.testing.assert_array_equal(grad.asnumpy(), np.full((3, 2), 3))


# output storage of the binary operators for (lhs, rhs) storage, as MXNet 1.9.1 gives it
_PAIRS = [("row_sparse", "row_sparse"), ("row_sparse", "default"), ("default", "row_sparse"),
          ("csr", "csr"), ("csr", "default"), ("default", "csr")]
_BINARY_STORAGE = {
    "elemwise_add": ["row_sparse", "default", "default", "csr", "default", "default"],
    "elemwise_sub": ["row_sparse", "default", "default", "csr", "default", "default"],
    "_maximum": ["row_sparse", "default", "default", "csr", "default", "default"],
    "_minimum": ["row_sparse", "default", "default", "csr", "default", "default"],
    "_hypot": ["row_sparse", "default", "default", "csr", "default", "default"],
    "elemwise_mul": ["row_sparse", "row_sparse", "row_sparse", "csr", "csr", "csr"],
    "elemwise_div": ["default"] * 6,
    "broadcast_add": ["default"] * 6,
    "broadcast_sub": ["default"] * 6,
    "broadcast_mul": ["default"] * 4 + ["csr", "default"],
    "broadcast_div": ["default"] * 4 + ["csr", "default"],
}


@pytest.mark.parametrize("name", sorted(_BINARY_STORAGE))
def test_binary_operators_keep_the_storage_mxnet_keeps(name):
    square = np.array([[1, 0, 2], [0, 0, 0], [3, 0, 4]], dtype=np.float32)
    rhs_values = np.array([[2, 1, 4], [1, 5, 1], [0.5, 2, 8]], dtype=np.float32)
    fn = getattr(nd, name) if hasattr(nd, name) else getattr(nd._internal, name)
    expected_values = {"elemwise_add": np.add, "elemwise_sub": np.subtract,
                       "_maximum": np.maximum, "_minimum": np.minimum, "_hypot": np.hypot,
                       "elemwise_mul": np.multiply, "elemwise_div": np.divide,
                       "broadcast_add": np.add, "broadcast_sub": np.subtract,
                       "broadcast_mul": np.multiply, "broadcast_div": np.divide}[name]
    for (ls, rs), want in zip(_PAIRS, _BINARY_STORAGE[name]):
        lhs, rhs = nd.array(square).tostype(ls), nd.array(rhs_values).tostype(rs)
        result = fn(lhs, rhs)
        assert result.stype == want, (ls, rs)
        np.testing.assert_allclose(result.asnumpy(), expected_values(square, rhs_values))


def test_sparse_arithmetic_takes_the_elemwise_operators_for_one_shape():
    a = nd.array(DENSE)
    c, r = a.tostype("csr"), a.tostype("row_sparse")
    assert [(r + r).stype, (c - c).stype, (r * a).stype, (a * c).stype, (c / a).stype,
            (r / a).stype, (r + a).stype] == ["row_sparse", "csr", "row_sparse", "default",
                                              "csr", "default", "default"]
    row = nd.array(DENSE[:1])  # broadcast: broadcast_mul keeps a csr lhs
    assert (c * row).stype == "csr"
    np.testing.assert_allclose((c * row).asnumpy(), DENSE * DENSE[:1])
