"""``mx.sym.np`` / ``mx.sym.npx``: mx.np functions applied to symbols, expanded into the
operators they run when the graph is bound."""

from __future__ import annotations

import json

import numpy as onp
import pytest

import dagnet as mx
from dagnet.test_utils import check_numeric_gradient


def _bind(sym, **arrays):
    grads = {n: mx.nd.zeros(a.shape, dtype=a.dtype) for n, a in arrays.items()}
    return sym.bind(mx.cpu(), {n: mx.nd.array(a, dtype=a.dtype) for n, a in arrays.items()},
                    args_grad=grads), grads


def test_tensordot_forward_backward_and_numeric_gradient(engine_name):
    a, b = mx.sym.var("a").as_np_ndarray(), mx.sym.var("b").as_np_ndarray()
    sym = mx.sym.np.tensordot(a, b, axes=([1], [0])).as_nd_ndarray()
    assert sym.list_arguments() == ["a", "b"]
    assert sym.infer_shape(a=(2, 3), b=(3, 4))[1] == [(2, 4)]
    x, y = onp.random.rand(2, 3).astype("float32"), onp.random.rand(3, 4).astype("float32")
    ex, grads = _bind(sym, a=x, b=y)
    onp.testing.assert_allclose(ex.forward(is_train=True)[0].asnumpy(), x @ y, rtol=1e-5)
    ex.backward(mx.nd.ones((2, 4)))
    onp.testing.assert_allclose(grads["a"].asnumpy(), onp.ones((2, 4)) @ y.T, rtol=1e-5)
    check_numeric_gradient(sym, [mx.nd.array(x), mx.nd.array(y)], rtol=1e-2, atol=1e-2)


def test_the_node_expands_for_each_binding_shape():
    x = mx.sym.var("x")
    sym = mx.sym.np.sum(x, axis=-1) * 2
    with mx.util.np_shape(True):  # a 0-d result is a shape only NumPy semantics know
        for shape in [(3,), (2, 5)]:
            value = onp.random.rand(*shape).astype("float32")
            ex, _ = _bind(sym, x=value)
            onp.testing.assert_allclose(ex.forward()[0].asnumpy(), value.sum(-1) * 2,
                                        rtol=1e-5)


def test_multiple_outputs_and_symbols_inside_lists():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    parts = mx.sym.np.split(mx.sym.np.stack([a, b], axis=0), 2, axis=0)
    assert len(parts) == 2
    x, y = onp.ones((2, 3), "float32"), onp.zeros((2, 3), "float32")
    ex, _ = _bind(mx.sym.Group(parts), a=x, b=y)
    first, second = ex.forward()
    onp.testing.assert_allclose(first.asnumpy(), x[None])
    onp.testing.assert_allclose(second.asnumpy(), y[None])


def test_npx_and_json_round_trip():
    x = mx.sym.var("x")
    sym = mx.sym.npx.relu(x - 1)
    loaded = mx.sym.load_json(sym.tojson())
    node = [n for n in json.loads(sym.tojson())["nodes"] if n["op"] == "_numpy_function"][0]
    assert node["attrs"]["function"] == "npx.relu"
    ex, _ = _bind(loaded, x=onp.array([0.0, 3.0], "float32"))
    onp.testing.assert_allclose(ex.forward()[0].asnumpy(), [0.0, 2.0])


def test_errors_name_the_function():
    x = mx.sym.var("x")
    with pytest.raises(mx.MXNetError, match="no function 'no_such_function'"):
        _bind(mx.sym.np.no_such_function(x), x=onp.ones(2, "float32"))
    with pytest.raises(TypeError, match="cannot hold an argument of type object"):
        mx.sym.np.sum(x, axis=object())
