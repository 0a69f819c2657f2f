"""``mxnet.base._LIB``: the C entry points dagnet emulates, called as MXNet's tests call them
through ctypes, the handles standing for dagnet objects, and the error any other entry
point gives."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

import dagnet as mx
from dagnet import executor
from dagnet.base import (
    _LIB,
    NDArrayHandle,
    SymbolHandle,
    c_str,
    c_str_array,
    check_call,
    mx_uint,
)


def _net():
    data = mx.sym.var("data")
    e = mx.sym.exp(data)
    return mx.sym.cos(e) + mx.sym.sin(e)


def test_build_subgraph_by_op_names_writes_a_handle_symbol_takes():
    net, names = _net(), ["exp", "sin", "elemwise_add"]
    out = SymbolHandle()
    check_call(_LIB.MXBuildSubgraphByOpNames(net.handle, c_str("default"), mx_uint(len(names)),
                                             c_str_array(names), ctypes.byref(out)))
    partitioned = mx.sym.Symbol(out)
    assert partitioned.tojson() == net.optimize_for("default", op_names=names).tojson()
    assert partitioned.list_inputs() == net.list_inputs()


def test_build_subgraph_with_no_op_names_copies_the_symbol():
    net, out = _net(), SymbolHandle()
    check_call(_LIB.MXBuildSubgraphByOpNames(net.handle, c_str("default"), mx_uint(0),
                                             c_str_array([]), ctypes.byref(out)))
    copied = mx.sym.Symbol(out)
    assert copied.tojson() == net.tojson() and copied._outputs != net._outputs


@pytest.mark.parametrize("suffix, at_bind", [("", True), ("V2", False)])
def test_set_and_remove_op_names_are_the_backends_default_options(suffix, at_bind):
    set_names = getattr(_LIB, f"MXSetSubgraphPropertyOpNames{suffix}")
    remove = getattr(_LIB, f"MXRemoveSubgraphPropertyOpNames{suffix}")
    check_call(set_names(c_str("default_v2"), mx_uint(2), c_str_array(["exp", "sin"])))
    try:
        assert executor.backend_options("default_v2", at_bind=at_bind) == {
            "op_names": ["exp", "sin"]}
        assert executor.backend_options("default_v2", at_bind=not at_bind) == {}
    finally:
        check_call(remove(c_str("default_v2")))
    assert executor.backend_options("default_v2", at_bind=at_bind) == {}


def test_op_names_set_for_binds_partition_under_mxnet_subgraph_backend(monkeypatch):
    check_call(_LIB.MXSetSubgraphPropertyOpNames(c_str("default"), mx_uint(1),
                                                 c_str_array(["sin"])))
    monkeypatch.setenv("MXNET_SUBGRAPH_BACKEND", "default")
    try:
        ex = _net().simple_bind(mx.cpu(), data=(3,))
    finally:
        check_call(_LIB.MXRemoveSubgraphPropertyOpNames(c_str("default")))
    assert "_CachedOp" in ex.get_optimized_symbol().tojson()
    ex.arg_dict["data"][:] = np.array([0.0, 0.5, 1.0])
    e = np.exp([0.0, 0.5, 1.0])
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), np.cos(e) + np.sin(e), rtol=1e-6)


def test_v2_names_a_backend_that_must_exist():
    with pytest.raises(mx.UnknownNameError, match="unknown subgraph backend 'nosuch'"):
        _LIB.MXSetSubgraphPropertyOpNamesV2(c_str("nosuch"), mx_uint(0), c_str_array([]))


def test_ndarray_from_dlpack_takes_over_the_managed_tensor():
    x = mx.nd.array(np.arange(6.0).reshape(2, 3))
    capsule = mx.nd.to_dlpack_for_read(x)
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                  ctypes.c_char_p]
    pointer = ctypes.c_void_p(get_pointer(capsule, b"dltensor"))
    handle = NDArrayHandle()
    check_call(_LIB.MXNDArrayFromDLPack(pointer, ctypes.byref(handle)))
    ctypes.pythonapi.PyCapsule_SetName(ctypes.py_object(capsule), b"used_dltensor")
    ctypes.pythonapi.PyCapsule_SetDestructor(ctypes.py_object(capsule), None)
    y = mx.nd.NDArray(handle=handle)
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())
    assert mx.nd.NDArray(y.handle) is y


def test_any_other_entry_point_says_dagnet_has_no_c_library_and_what_to_use():
    with pytest.raises(AttributeError) as caught:
        _LIB.MXNDArrayWaitAll()
    assert isinstance(caught.value, mx.MXNetError)
    assert "dagnet has no C library" in str(caught.value)
    assert "mx.nd.waitall()" in str(caught.value)
    assert not hasattr(_LIB, "MXGetVersion")
    assert "MXBuildSubgraphByOpNames" in dir(_LIB)


def test_handles_name_live_objects_of_their_kind():
    net = _net()
    assert mx.sym.Symbol(net.handle)._outputs == net._outputs
    with pytest.raises(ValueError, match="names a Symbol, not a NDArray"):
        mx.nd.NDArray(handle=net.handle)
    with pytest.raises(ValueError, match="empty"):
        mx.sym.Symbol(SymbolHandle())
    with pytest.raises(ValueError, match="names no live dagnet object"):
        mx.sym.Symbol(SymbolHandle(12345))


def test_check_call_raises_on_an_error_code():
    check_call(0)
    with pytest.raises(mx.MXNetError, match="error code -1"):
        check_call(-1)
