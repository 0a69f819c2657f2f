"""gluon.Trainer: updates with lr/wd multipliers, multi-device gradients summed through a
KVStore, stale-gradient checks, learning rate and saved states."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet import gluon


def _param(ctx=None, value=1.0):
    p = gluon.Parameter("weight", shape=(4,))
    p.initialize(init=mx.init.Constant(value), ctx=list(ctx or [mx.cpu(0)]))
    return p


def _backward(p, scale=1.0):
    with mx.autograd.record():
        for data in p.list_data():
            (data * scale).sum().backward()


def test_step_sums_gradients_over_devices():
    p = _param(ctx=[mx.cpu(0), mx.cpu(1)])
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0, "momentum": 0.5})
    for data in p.list_data():
        with mx.autograd.record():
            y = data * 2
        y.backward()
    trainer.step(1)
    for data in p.list_data():  # gradient 2 on each device, summed: 4
        np.testing.assert_allclose(data.asnumpy(), np.full(4, -3.0))
    assert trainer._kvstore is not None


def test_lr_mult_and_learning_rate():
    p = _param()
    p.lr_mult = 0.5
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0})
    _backward(p)
    trainer.step(1)
    np.testing.assert_allclose(p.data().asnumpy(), np.full(4, 0.5))
    assert trainer.learning_rate == 1.0
    trainer.set_learning_rate(0.1)
    assert trainer.learning_rate == 0.1


def test_stale_gradient_raises_unless_ignored():
    p = _param()
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0})
    _backward(p)
    trainer.step(1)
    with pytest.raises(UserWarning, match="has not been updated"):
        trainer.step(1)
    trainer.step(1, ignore_stale_grad=True)  # skipped, not updated
    np.testing.assert_allclose(p.data().asnumpy(), np.zeros(4))


def test_update_after_manual_allreduce_and_kvstore_rules():
    p = _param()
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0}, update_on_kvstore=False)
    _backward(p)
    trainer.allreduce_grads()
    trainer.update(2)
    np.testing.assert_allclose(p.data().asnumpy(), np.full(4, 0.5))
    q = _param(ctx=[mx.cpu(0), mx.cpu(1)])
    on_store = gluon.Trainer([q], "sgd", {"learning_rate": 1.0}, update_on_kvstore=True)
    _backward(q)
    with pytest.raises(AssertionError, match="update_on_kvstore"):
        on_store.update(1)
    with pytest.raises(ValueError, match="list or dict of Parameters"):
        gluon.Trainer("weight", "sgd")


def test_save_and_load_states(tmp_path):
    p = _param()
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    _backward(p)
    trainer.step(1)
    fname = str(tmp_path / "t.states")
    trainer.save_states(fname)
    other = gluon.Trainer([p], "sgd", {"learning_rate": 0.5, "momentum": 0.9})
    other.load_states(fname)
    assert other.learning_rate == pytest.approx(0.1)
    np.testing.assert_allclose(other._updaters[0].states[0].asnumpy(),
                               trainer._updaters[0].states[0].asnumpy())
