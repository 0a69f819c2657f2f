"""mx.sym and mx.nd contrib / linalg / image / op / _internal name operators as MXNet does."""

from __future__ import annotations

import pytest

import dagnet as mx


def test_contrib_names_the_prefixed_operator():
    x = mx.sym.var("x")
    out = mx.sym.contrib.isnan(x, name="n")
    assert out.list_arguments() == ["x"]
    assert "isnan" in dir(mx.sym.contrib)
    assert mx.sym.contrib.isnan.__name__ == "isnan"


def test_op_and_internal_hold_every_operator():
    x = mx.sym.var("x")
    assert mx.sym.op.exp(x, name="e").list_outputs() == ["e_output"]
    assert mx.sym._internal.exp(x, name="f").list_arguments() == ["x"]


def test_unknown_name_in_a_namespace_is_a_clear_error():
    with pytest.raises(mx.MXNetError, match="_contrib_no_such_op"):
        getattr(mx.sym.contrib, "no_such_op")  # noqa: B009 - the lookup is the test


@pytest.mark.parametrize("namespace", [mx.nd.contrib, mx.sym.contrib, mx.nd.linalg,
                                       mx.sym.linalg])
def test_a_namespace_gives_the_same_function_each_time(namespace):
    # MXNet's are module functions: tests compare them (``op != mx.nd.contrib.SyncBatchNorm``
    # picks the statistics SyncBatchNorm outputs in MXNet's test_batchnorm)
    name = "SyncBatchNorm" if "contrib" in namespace.__name__ else "gemm2"
    assert getattr(namespace, name) is getattr(namespace, name)


def test_nd_ndarray_is_the_module_mxnet_code_reaches_through_nd():
    # GluonNLP's metrics test isinstance(x, mx.nd.ndarray.NDArray)
    assert mx.nd.ndarray.NDArray is mx.nd.NDArray
    assert "ndarray" in dir(mx.nd)
