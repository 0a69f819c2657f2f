"""Storage types in bound graphs: sparse outputs where the operators declare them (MXNet's
storage-type inference), sparse gradients where simple_bind's backward inference says so,
and values always those of the dense computation."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet import nd
from dagnet.ndarray import sparse

DENSE = np.array([[0.0, 1.5, 0.0, -2.0], [0.0, 0.0, 0.0, 0.0], [3.0, 0.0, -0.5, 0.0]],
                 dtype=np.float32)


@pytest.mark.parametrize("stype", ["row_sparse", "csr"])
def test_zero_preserving_chain_keeps_sparse_storage_and_dense_values(stype):
    x = mx.sym.Variable("x", stype=stype)
    y = mx.sym.sparse.square(mx.sym.sparse.negative(x)) * 2
    value = nd.array(DENSE).tostype(stype)
    exe = y.bind(mx.cpu(), {"x": value})
    out = exe.forward()[0]
    assert out.stype == stype
    np.testing.assert_allclose(out.asnumpy(), 2 * DENSE**2)


def test_a_fallback_operator_gives_dense_results_and_gradients_flow_through_sparse_steps():
    x = mx.sym.Variable("x", stype="row_sparse")
    y = mx.sym.sigmoid(mx.sym.sparse.negative(x))  # sigmoid(0) != 0: dense
    value = nd.array(DENSE).tostype("row_sparse")
    grad = nd.zeros(DENSE.shape)
    exe = y.bind(mx.cpu(), {"x": value}, args_grad={"x": grad})
    out = exe.forward(is_train=True)[0]
    assert out.stype == "default"
    s = 1 / (1 + np.exp(DENSE))
    np.testing.assert_allclose(out.asnumpy(), s, rtol=1e-6)
    exe.backward(nd.ones(DENSE.shape))
    np.testing.assert_allclose(grad.asnumpy(), -s * (1 - s), rtol=1e-5)


def test_the_bound_sparse_argument_is_read_at_every_forward_pass():
    x = mx.sym.Variable("x", stype="row_sparse")
    value = nd.array(DENSE).tostype("row_sparse")
    exe = (mx.sym.sparse.abs(x) + 1).bind(mx.cpu(), {"x": value})
    assert exe.arg_arrays[0] is value
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), np.abs(DENSE) + 1)
    nd.array(-3 * DENSE).tostype("row_sparse").copyto(value)
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), 3 * np.abs(DENSE) + 1)


def test_operators_making_sparse_results_from_dense_inputs():
    x = mx.sym.Variable("x")
    exe = mx.sym.cast_storage(x * 1, stype="csr").bind(mx.cpu(), {"x": nd.array(DENSE)})
    out = exe.forward()[0]
    assert out.stype == "csr"
    np.testing.assert_array_equal(out.asnumpy(), DENSE)


def test_dot_of_a_transposed_csr_matrix_is_row_sparse():
    lhs, rhs = mx.sym.Variable("lhs", stype="csr"), mx.sym.Variable("rhs")
    weights = np.arange(6, dtype=np.float32).reshape(3, 2)
    exe = mx.sym.dot(lhs, rhs, transpose_a=True).bind(
        mx.cpu(), {"lhs": nd.array(DENSE).tostype("csr"), "rhs": nd.array(weights)})
    out = exe.forward()[0]
    assert out.stype == "row_sparse"
    np.testing.assert_allclose(out.asnumpy(), DENSE.T @ weights)


@pytest.mark.parametrize("req", ["write", "add"])
def test_sparse_gradient_arrays_receive_the_dense_gradient(req):
    x = mx.sym.Variable("x", stype="row_sparse")
    grad = nd.array(np.ones_like(DENSE)).tostype("row_sparse")
    exe = mx.sym.sparse.square(x).bind(mx.cpu(), {"x": nd.array(DENSE).tostype("row_sparse")},
                                       args_grad={"x": grad}, grad_req=req)
    exe.forward(is_train=True)
    exe.backward(nd.ones(DENSE.shape))
    assert exe.grad_arrays[0] is grad and grad.stype == "row_sparse"
    start = 1.0 if req == "add" else 0.0
    np.testing.assert_allclose(grad.asnumpy(), start + 2 * DENSE)
    sparse.zeros("row_sparse", DENSE.shape).copyto(grad)  # what the next pass adds to
    exe.forward(is_train=True)
    exe.backward(nd.ones(DENSE.shape))
    np.testing.assert_allclose(grad.asnumpy(), 2 * DENSE)


@pytest.mark.parametrize("op, kwargs, stype", [
    ("Embedding", {"sparse_grad": True}, "row_sparse"),
    ("Embedding", {"sparse_grad": False}, "default"),
    ("_contrib_SparseEmbedding", {}, "row_sparse"),
])
def test_simple_bind_allocates_the_gradient_storage_the_operator_declares(op, kwargs, stype):
    data, weight = mx.sym.Variable("data"), mx.sym.Variable("w")
    y = getattr(mx.sym, op)(data=data, weight=weight, input_dim=5, output_dim=2, **kwargs)
    exe = y.simple_bind(mx.cpu(), grad_req={"data": "null", "w": "write"}, data=(4,))
    assert exe.grad_dict["w"].stype == stype
    exe.arg_dict["data"][:] = nd.array([0, 3, 3, 1])
    exe.arg_dict["w"][:] = nd.array(np.arange(10, dtype=np.float32).reshape(5, 2))
    exe.forward(is_train=True)
    exe.backward(nd.ones((4, 2)))
    expected = np.zeros((5, 2), np.float32)
    np.add.at(expected, [0, 3, 3, 1], 1)
    np.testing.assert_array_equal(exe.grad_dict["w"].asnumpy(), expected)


def test_a_weight_that_also_feeds_a_dense_operator_gets_a_dense_gradient():
    data, weight = mx.sym.Variable("data"), mx.sym.Variable("w")
    y = mx.sym.Embedding(data=data, weight=weight, input_dim=5, output_dim=2,
                         sparse_grad=True)
    y = mx.sym.Group([y, mx.sym.sum(weight)])
    exe = y.simple_bind(mx.cpu(), data=(4,))
    assert exe.grad_dict["w"].stype == "default"


def test_planned_and_unplanned_sparse_graphs_agree():
    x = mx.sym.Variable("x", stype="row_sparse")
    y = mx.sym.relu(mx.sym.sparse.square(mx.sym.sparse.abs(x)) * 3) + mx.sym.sparse.abs(x)
    results = []
    for planned in (True, False):
        with mx.config.set(memory_plan=planned):
            grad = nd.zeros(DENSE.shape)
            exe = y.bind(mx.cpu(), {"x": nd.array(DENSE).tostype("row_sparse")},
                         args_grad={"x": grad})
            results.append(exe.forward(is_train=True)[0].asnumpy())
            exe.backward(nd.ones(DENSE.shape))
            results.append(grad.asnumpy())
    np.testing.assert_allclose(results[0], 3 * DENSE**2 + np.abs(DENSE))
    np.testing.assert_array_equal(results[0], results[2])
    np.testing.assert_array_equal(results[1], results[3])


def test_the_monitor_sees_sparse_entries_as_sparse_arrays():
    x = mx.sym.Variable("x", stype="csr")
    seen = {}
    exe = mx.sym.sparse.negative(x, name="neg").bind(mx.cpu(),
                                                     {"x": nd.array(DENSE).tostype("csr")})
    exe.set_monitor_callback(lambda name, array: seen.setdefault(name, array.stype))
    exe.forward()
    assert seen["neg_output"] == "csr"
