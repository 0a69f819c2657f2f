"""autograd.get_symbol: the recorded computation as a Symbol that computes the same."""

import json

import numpy as np
import pytest

import dagnet as mx
from dagnet import autograd


def test_get_symbol_has_one_variable_per_leaf_and_computes_the_same():
    x, z = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    x.attach_grad()
    z.attach_grad()
    with autograd.record():
        y = x * x + 2 * z - 1
    sym = autograd.get_symbol(y)
    assert sym.list_arguments() == ["var0", "var1"]
    out = sym.eval(var0=x, var1=z)[0]
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy())


def test_get_symbol_keeps_operator_parameters_and_shared_leaves():
    x = mx.nd.array([[1.0, -2.0, 3.0]])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.sum(mx.nd.clip(x, a_min=-1, a_max=2) * x, axis=1)
    sym = autograd.get_symbol(y)
    assert sym.list_arguments() == ["var0"]
    np.testing.assert_allclose(sym.eval(var0=x)[0].asnumpy(), y.asnumpy())


def test_get_symbol_refuses_arrays_outside_a_recording():
    with pytest.raises(autograd.AutogradArgumentError, match="record"):
        autograd.get_symbol(mx.nd.ones(2))
    with pytest.raises(autograd.AutogradArgumentError, match="NDArray"):
        autograd.get_symbol([1, 2])


def test_star_import_gives_mxnet_autograd_public_names():
    names = {}
    exec("from dagnet.autograd import *", names)
    assert {"NDArray", "Symbol", "get_symbol", "record", "backward"} <= set(names)


class _Double(autograd.Function):
    def forward(self, x):
        return x * 2

    def backward(self, dy):
        return dy * 2


def test_a_function_call_is_one_node_named_as_in_mxnet():
    x = mx.nd.ones(3)
    x.attach_grad()
    with autograd.record():
        y = _Double()(x) + 1
    sym = autograd.get_symbol(y)
    ops = [node["op"] for node in json.loads(sym.tojson())["nodes"]]
    assert ops == ["null", "_CustomFunction", "_plus_scalar"]
    assert sym.list_arguments() == ["var0"]
    with pytest.raises(mx.base.MXNetError, match="_CustomFunction"):
        sym.eval(var0=x)  # the node has no kernel: Python code is not in the symbol
