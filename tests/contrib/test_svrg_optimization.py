"""contrib.svrg_optimization: SVRGModule's full-gradient snapshot and corrected gradients,
its key-value store accumulation, training, and the optimizer wrapper's dispatch."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import dagnet as mx
from dagnet.contrib.svrg_optimization.svrg_module import SVRGModule
from dagnet.contrib.svrg_optimization.svrg_optimizer import _SVRGOptimizer


def _regression(n=40, batch_size=10, seed=0):
    rng = np.random.RandomState(seed)
    data = rng.randint(1, 5, (n, 2)).astype("float32")
    label = data.dot(np.array([1.0, 2.0], dtype="float32"))
    it = mx.io.NDArrayIter(data, label, batch_size=batch_size, label_name="lin_reg_label")
    x = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(x, name="fc1", num_hidden=1)
    out = mx.sym.LinearRegressionOutput(fc, mx.sym.Variable("lin_reg_label"), name="lro")
    return data, label, it, out


def _module(sym, it, context=None, **init):
    mod = SVRGModule(sym, data_names=["data"], label_names=["lin_reg_label"], update_freq=2,
                     context=context or mx.cpu(), logger=logging.getLogger("svrg-test"))
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(initializer=mx.init.One())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.01}, **init)
    return mod


def test_update_freq_must_be_a_positive_int():
    _, _, _, sym = _regression()
    with pytest.raises(TypeError, match="update_freq"):
        SVRGModule(sym, label_names=["lin_reg_label"])
    with pytest.raises(ValueError, match="positive"):
        SVRGModule(sym, label_names=["lin_reg_label"], update_freq=0)


def test_bind_binds_the_snapshot_module_too():
    _, _, it, sym = _regression()
    mod = SVRGModule(sym, label_names=["lin_reg_label"], update_freq=1)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    assert mod.binded and mod._mod_aux.binded
    with pytest.raises(ValueError, match="shared_module"):
        mod.bind(it.provide_data, it.provide_label, shared_module=mod, force_rebind=True)


def test_full_gradients_are_the_mean_batch_gradient():
    data, label, it, sym = _regression()
    mod = _module(sym, it)
    assert type(mod._optimizer).__name__ == "_SVRGOptimizer"
    mod.update_full_grads(it)
    # LinearRegressionOutput's gradient for fc1_weight: sum over a batch of (pred - y) * x,
    # with every weight 1 and the bias 0 (initializers leave biases at 0)
    pred = data.sum(axis=1)
    per_batch = [((pred - label)[i:i + 10, None] * data[i:i + 10]).sum(axis=0)
                 for i in range(0, 40, 10)]
    np.testing.assert_allclose(mod._param_dict[0]["fc1_weight"].asnumpy()[0],
                               np.mean(per_batch, axis=0), rtol=1e-5)


def test_update_uses_the_corrected_gradient():
    data, label, it, sym = _regression()
    mod = _module(sym, it)
    mod.update_full_grads(it)
    it.reset()
    batch = next(iter(it))
    mod.forward_backward(batch)
    before = mod.get_params()[0]["fc1_weight"].asnumpy()
    full = mod._param_dict[0]["fc1_weight"].asnumpy()
    mod.update()
    after = mod.get_params()[0]["fc1_weight"].asnumpy()
    # right after the snapshot g(w) == g(w_snapshot), so the step follows the full gradient
    np.testing.assert_allclose(after, before - 0.01 * full / 10, rtol=1e-5)


def test_svrg_fit_converges_like_sgd():
    _, _, it, sym = _regression(n=100)
    metric = mx.metric.create("mse")
    mod = SVRGModule(sym, data_names=["data"], label_names=["lin_reg_label"], update_freq=2,
                     logger=logging.getLogger("svrg-test"))
    mod.fit(it, eval_metric=metric, optimizer="sgd", initializer=mx.init.One(),
            optimizer_params=(("learning_rate", 0.01),), num_epoch=10)
    svrg_mse = metric.get()[1]
    it.reset()
    plain = mx.mod.Module(sym, data_names=["data"], label_names=["lin_reg_label"],
                          logger=logging.getLogger("svrg-test"))
    sgd_metric = mx.metric.create("mse")
    plain.fit(it, eval_metric=sgd_metric, optimizer="sgd", initializer=mx.init.One(),
              optimizer_params=(("learning_rate", 0.01),), num_epoch=10)
    # which of the two ends lower depends on the data (MXNet skips its own comparison as
    # flaky); both must converge
    assert svrg_mse < 0.1 and svrg_mse < 1.5 * sgd_metric.get()[1]


def test_full_gradients_through_a_kvstore_over_two_devices():
    data, label, it, sym = _regression()
    mod = _module(sym, it, context=[mx.cpu(0), mx.cpu(1)], kvstore="local")
    assert mod._kvstore is not None
    mod.update_full_grads(it)
    one = _module(sym, it)
    one.update_full_grads(it)
    # each device saw half of every batch: the store's mean over devices is half the
    # single-device mean
    for k in range(2):
        np.testing.assert_allclose(mod._param_dict[k]["fc1_weight"].asnumpy(),
                                   one._param_dict[0]["fc1_weight"].asnumpy() / 2, rtol=1e-5)
    it.reset()
    mod.forward_backward(next(iter(it)))
    mod.update()


def test_optimizer_dispatches_full_keys_to_assignment():
    svrg = _SVRGOptimizer(default_optimizer="sgd", learning_rate=1.0,
                          param_idx2name={0: "weight", 1: "weight_full"})
    kv = mx.kv.create("local")
    kv.set_optimizer(svrg)
    kv.init(0, mx.nd.zeros(3))
    kv.push(0, mx.nd.ones(3))
    kv.init(1, mx.nd.ones(3))
    kv.push(1, mx.nd.array([2, 2, 2]))
    out = mx.nd.zeros(3)
    kv.pull(0, out)
    np.testing.assert_allclose(out.asnumpy(), [-1, -1, -1])
    kv.pull(1, out)
    np.testing.assert_allclose(out.asnumpy(), [2, 2, 2])
    # a parameter whose name merely contains "full" is a weight
    assert svrg._target("fullyconnected0_weight") is svrg.default_opt
    with pytest.raises(TypeError, match="param_idx2name"):
        svrg.update(7, mx.nd.zeros(1), mx.nd.zeros(1), None)
    with pytest.raises(TypeError, match="default_optimizer"):
        _SVRGOptimizer(default_optimizer=3)
