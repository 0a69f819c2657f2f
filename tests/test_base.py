"""``dagnet.base`` and ``dagnet.util``: the names MXNet 1.x code imports from
``mxnet.base`` and ``mxnet.util``."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dagnet as mx
from dagnet.base import (
    MXNetError,
    NotImplementedForSymbol,
    as_list,
    data_dir,
    integer_types,
    numeric_types,
    py_str,
)
from dagnet.util import getenv, setenv


@pytest.mark.parametrize("error", [mx.ShapeError, mx.ParamError, mx.OperatorFailedError,
                                   mx.UnknownNameError, mx.ConfigError])
def test_every_dagnet_error_is_an_mxnet_error_and_a_runtime_error(error):
    assert issubclass(error, MXNetError) and issubclass(error, RuntimeError)


def test_an_operator_error_is_caught_as_mxnet_error():
    with pytest.raises(MXNetError, match="broadcast"):
        mx.nd.ones((2, 3)) + mx.nd.ones((4, 5))


def test_not_implemented_for_symbol_both_ways():
    with pytest.raises(NotImplementedForSymbol, match="truth value"):
        bool(mx.sym.Variable("x"))
    error = NotImplementedForSymbol(len, "len", 1.0)
    assert str(error) == ('Function len (namely operator "len") with arguments '
                          "(<class 'float'>) is not implemented for Symbol and only available "
                          "in NDArray.")
    assert isinstance(error, NotImplementedError) and isinstance(error, MXNetError)


def test_data_dir_follows_mxnet_home(monkeypatch):
    monkeypatch.delenv("MXNET_HOME", raising=False)
    assert data_dir() == os.path.join(os.path.expanduser("~"), ".mxnet")
    monkeypatch.setenv("MXNET_HOME", "/tmp/mxnet_data")
    assert data_dir() == "/tmp/mxnet_data"


def test_small_helpers():
    assert py_str(b"caf\xc3\xa9") == "café"
    assert as_list(3) == [3] and as_list((1, 2)) == (1, 2)
    assert isinstance(np.int64(1), integer_types) and not isinstance(1.5, integer_types)
    assert isinstance(np.float16(1), numeric_types)


def test_getenv_and_setenv(monkeypatch):
    monkeypatch.delenv("DAGNET_TEST_VARIABLE", raising=False)
    assert getenv("DAGNET_TEST_VARIABLE") is None
    setenv("DAGNET_TEST_VARIABLE", "42")
    assert os.environ["DAGNET_TEST_VARIABLE"] == "42" == getenv("DAGNET_TEST_VARIABLE")
    setenv("DAGNET_TEST_VARIABLE", None)
    assert "DAGNET_TEST_VARIABLE" not in os.environ


def test_mxnet_module_paths():
    from dagnet.ndarray.ndarray import NDArray, py_slice

    assert mx.MXNetError is MXNetError
    assert NDArray is mx.nd.NDArray and py_slice is slice
