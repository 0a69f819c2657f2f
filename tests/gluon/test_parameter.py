"""Gluon parameters: names, initialization (deferred too), gradients, contexts, casting
and ParameterDict's sharing, selection, saving and loading."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import dagnet as mx
from dagnet import gluon


def test_parameter_initialize_data_and_grad():
    p = gluon.Parameter("weight", shape=(10, 10))
    p.initialize(init="xavier", ctx=[mx.cpu(0), mx.cpu(1)])
    assert len(p.list_data()) == 2
    assert len(p.list_grad()) == 2
    assert p.data(mx.cpu(1)).context == mx.cpu(1)
    assert p.data(mx.cpu(0)).shape == (10, 10)
    assert p.var().name == "weight"
    assert p.grad(mx.cpu(0)).stype == "default"
    assert p.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    with pytest.raises(RuntimeError, match="not initialized on context"):
        p.data(mx.cpu(2))


def test_parameter_reset_ctx_keeps_value():
    p = gluon.Parameter("weight", shape=(2, 3))
    p.initialize(init=mx.init.One(), ctx=mx.cpu(0))
    p.reset_ctx(ctx=[mx.cpu(1), mx.cpu(2)])
    assert p.list_ctx() == [mx.cpu(1), mx.cpu(2)]
    np.testing.assert_array_equal(p.data(mx.cpu(2)).asnumpy(), np.ones((2, 3)))


def test_uninitialized_and_deferred_errors():
    p = gluon.Parameter("w", shape=(0, 3), allow_deferred_init=True)
    with pytest.raises(RuntimeError, match="has not been initialized"):
        p.data()
    p.initialize()
    with pytest.raises(gluon.DeferredInitializationError):
        p.data()
    assert isinstance(gluon.DeferredInitializationError("x"), mx.MXNetError)
    p.shape = (2, 3)
    p._finish_deferred_init()
    assert p.data().shape == (2, 3)
    with pytest.raises(ValueError, match="invalid shape"):
        gluon.Parameter("v", shape=(0,)).initialize()


def test_grad_req_null_and_add():
    p = gluon.Parameter("w", shape=(3,))
    p.initialize(init=mx.init.One())
    with mx.autograd.record():
        y = (p.data() * 2).sum()
    y.backward()
    np.testing.assert_allclose(p.grad().asnumpy(), [2, 2, 2])
    p.grad_req = "add"
    for _ in range(2):
        with mx.autograd.record():
            y = (p.data() * 2).sum()
        y.backward()
    np.testing.assert_allclose(p.grad().asnumpy(), [4, 4, 4])  # the new grad starts at 0
    p.zero_grad()
    np.testing.assert_allclose(p.grad().asnumpy(), [0, 0, 0])
    p.grad_req = "null"
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad()
    with pytest.raises(AssertionError, match="grad_req must be one of"):
        p.grad_req = "sometimes"


def test_cast_changes_data_and_grad():
    p = gluon.Parameter("w", shape=(2,))
    p.initialize()
    p.cast("float16")
    assert p.data().dtype == np.float16
    assert p.grad().dtype == np.float16


def test_constant_is_not_trained():
    const = gluon.Constant("c", [[1, 2], [3, 4]])
    const.initialize()
    np.testing.assert_array_equal(const.data().asnumpy(), [[1, 2], [3, 4]])
    assert const.grad_req == "null"
    with pytest.warns(UserWarning, match="does not support grad_req"):
        const.grad_req = "write"


def test_constant_init_is_a_registered_name_as_in_mxnet(monkeypatch):
    const = gluon.Constant("c", [1.0, 2.0])
    assert const.init == f"Constant_c_{id(const)}"
    arr = mx.nd.zeros((2,))
    mx.init.Xavier()(mx.init.InitDesc("c", {"__init__": const.init}), arr)
    np.testing.assert_array_equal(arr.asnumpy(), [1, 2])

    def must_not_wait(self):
        raise AssertionError("naming a Constant in a graph read (waited for) its value")

    # naming the constant in a graph neither reads its value nor waits for it
    monkeypatch.setattr(mx.nd.NDArray, "asnumpy", must_not_wait)
    assert const.var().attr("__init__") == const.init


def test_constant_initializer_is_forgotten_with_its_constant():
    const = gluon.Constant("gone", [1.0])
    name = const.init
    made = mx.init.create(name)
    del const
    gc.collect()
    with pytest.raises(mx.base.MXNetError, match="unknown initializer"):
        mx.init.create(name)
    with pytest.raises(RuntimeError, match="no longer exists"):
        made._init_weight("gone", mx.nd.zeros((1,)))


def test_parameter_dict_sharing_and_select():
    params = gluon.ParameterDict("net_")
    w = params.get("weight", shape=(0, 3))
    assert w.name == "net_weight"
    assert params.get("weight", shape=(4, 3)) is w and w.shape == (4, 3)
    with pytest.raises(AssertionError, match="does not match"):
        params.get("weight", shape=(5, 3))
    params.get("bias", shape=(4,))
    shared = gluon.ParameterDict("net_", shared=params)
    assert shared.get("weight") is w
    assert list(params.select(".*bias").keys()) == ["net_bias"]
    with pytest.raises(KeyError, match="No constant named"):
        params.get_constant("missing")


def test_parameter_dict_save_load_roundtrip(tmp_path):
    params = gluon.ParameterDict("net_")
    params.get("weight", shape=(2, 3))
    params.get("bias", shape=(2,))
    params.initialize(mx.init.Uniform())
    fname = str(tmp_path / "p.params")
    params.save(fname, strip_prefix="net_")
    assert sorted(mx.nd.load(fname)) == ["bias", "weight"]
    other = gluon.ParameterDict("net_")
    other.get("weight", shape=(2, 3))
    other.get("bias", shape=(2,))
    other.load(fname, restore_prefix="net_")
    for name in params.keys():
        np.testing.assert_array_equal(params[name].data().asnumpy(),
                                      other[name].data().asnumpy())
    extra = gluon.ParameterDict("net_")
    extra.get("gamma", shape=(2,))
    with pytest.raises(AssertionError, match="is missing"):
        extra.load(fname, restore_prefix="net_")
    with pytest.raises(AssertionError, match="not present"):
        extra.load(fname, restore_prefix="net_", allow_missing=True)


def test_zero_grad_resets_many_gradients_with_one_call(monkeypatch):
    from dagnet import ndarray

    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(3, in_units=4), gluon.nn.Dense(2, in_units=3))
    net.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    net[1].bias.grad_req = "null"
    for param in net.collect_params().values():
        for grad in param.list_grad() if param.grad_req != "null" else []:
            grad[:] = 1
    calls = []
    real = ndarray.reset_arrays
    monkeypatch.setattr(ndarray, "reset_arrays",
                        lambda *a, **k: calls.append(len(a)) or real(*a, **k))
    net.collect_params().zero_grad()
    assert calls == [3, 3]  # per context: the two weights and the first bias
    for param in net.collect_params().values():
        if param.grad_req != "null":
            assert all(not g.asnumpy().any() for g in param.list_grad())
    net[0].weight.list_grad()[0][:] = 5
    net[0].weight.zero_grad()
    assert not net[0].weight.list_grad()[0].asnumpy().any()
