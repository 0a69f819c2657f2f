"""The module paths MXNet code imports array and symbol helpers from
(``mxnet.ndarray.ndarray``, ``mxnet.ndarray.utils``, ``mxnet.symbol.symbol``, the
operator namespaces): the names are dagnet's, the same objects, and they work."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dagnet as mx

MXNET_NAMES = {
    "dagnet.ndarray.ndarray": [
        "NDArray", "add", "arange", "array", "concatenate", "divide", "empty", "equal", "eye",
        "from_numpy", "full", "greater", "histogram", "lesser", "linspace", "maximum",
        "minimum", "moveaxis", "multiply", "onehot_encode", "ones", "power", "split_v2",
        "subtract", "true_divide", "waitall", "zeros"],
    "dagnet.ndarray.utils": ["array", "empty", "load", "load_frombuffer", "save", "zeros"],
    "dagnet.symbol.symbol": [
        "Group", "Symbol", "Variable", "arange", "eye", "full", "histogram", "hypot", "load",
        "load_json", "maximum", "minimum", "ones", "pow", "power", "split_v2", "var", "zeros"],
}


@pytest.mark.parametrize("module_name", sorted(MXNET_NAMES))
def test_the_names_are_the_frontends_own(module_name):
    module = importlib.import_module(module_name)
    frontend = importlib.import_module(module_name.rsplit(".", 1)[0])
    for name in MXNET_NAMES[module_name]:
        assert getattr(module, name) is getattr(frontend, name), name


def test_helpers_from_mxnet_ndarray_ndarray_work():
    from dagnet.ndarray import ndarray as nd

    grid = nd.empty(shape=(3, 4, 5), dtype=np.float32)
    grid[:] = 0.5
    assert grid.shape == (3, 4, 5) and float(grid.asnumpy().mean()) == 0.5
    assert nd.array([1, 2]).dtype == np.float32


@pytest.mark.parametrize("frontend", ["ndarray", "symbol"])
@pytest.mark.parametrize("namespace, op", [
    ("contrib", "BilinearResize2D"), ("linalg", "gemm2"), ("image", "normalize"),
    ("op", "FullyConnected"), ("_internal", "_plus_scalar")])
def test_operator_namespaces_are_modules(frontend, namespace, op):
    module = importlib.import_module(f"dagnet.{frontend}.{namespace}")
    assert getattr(mx, "nd" if frontend == "ndarray" else "sym").__dict__[namespace] is module
    assert callable(getattr(module, op)) and op in dir(module)
    with pytest.raises(AttributeError, match="no_such_operator"):
        module.no_such_operator  # noqa: B018


def test_nd_ndarray_and_nd_utils_are_attributes_of_nd():
    # GluonNLP checks isinstance(x, mx.nd.ndarray.NDArray)
    assert mx.nd.ndarray.NDArray is mx.nd.NDArray
    assert mx.nd.utils.empty is mx.nd.empty
