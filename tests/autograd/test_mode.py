"""Recording and training mode: the flags, their scopes, and what kernels see."""

from __future__ import annotations

import threading

import numpy as np

import dagnet as mx
from dagnet import autograd, nd


def _state():
    return autograd.is_recording(), autograd.is_training()


def test_scopes_set_and_restore_both_flags():
    assert _state() == (False, False)
    with autograd.record():
        assert _state() == (True, True)
        with autograd.pause():
            assert _state() == (False, False)
            with autograd.train_mode():
                assert _state() == (False, True)
            assert _state() == (False, False)
        with autograd.predict_mode():
            assert _state() == (True, False)
        assert _state() == (True, True)
    assert _state() == (False, False)
    with autograd.record(train_mode=False):
        assert _state() == (True, False)
    with autograd.pause(train_mode=True):
        assert _state() == (False, True)
    assert _state() == (False, False)


def test_setters_return_the_previous_value():
    assert autograd.set_recording(True) is False
    assert autograd.set_recording(False) is True
    assert autograd.set_training(True) is False
    assert autograd.set_training(False) is True


def test_training_mode_is_the_ndarray_flag():
    with autograd.train_mode():
        assert nd.is_training()
    assert not nd.is_training()


def test_scope_restores_after_an_exception():
    try:
        with autograd.record():
            raise KeyError("boom")
    except KeyError:
        pass
    assert _state() == (False, False)


def test_modes_are_per_thread():
    seen = []
    with autograd.record():
        worker = threading.Thread(target=lambda: seen.append(_state()))
        worker.start()
        worker.join()
    assert seen == [(False, False)]


def test_dropout_drops_under_record_and_not_in_predict_mode(engine):
    x = nd.ones((50, 40))
    x.attach_grad()
    with autograd.record():
        dropped = nd.Dropout(x, p=0.5)
        with autograd.predict_mode():
            kept = nd.Dropout(x, p=0.5)
    values = dropped.asnumpy()
    assert set(np.unique(values)) <= {0.0, 2.0} and 0.3 < (values == 0).mean() < 0.7
    np.testing.assert_array_equal(kept.asnumpy(), np.ones((50, 40)))
    dropped.backward()
    # the gradient goes through the same mask: 2 where kept, 0 where dropped
    np.testing.assert_array_equal(x.grad.asnumpy(), values)


def test_batchnorm_uses_batch_statistics_under_record(engine):
    data = nd.array(np.arange(12, dtype=np.float32).reshape(4, 3) * 3.0)
    gamma, beta = nd.ones((3,)), nd.zeros((3,))
    mean, var = nd.zeros((3,)), nd.ones((3,))
    with autograd.record():
        trained = nd.BatchNorm(data, gamma, beta, mean, var, fix_gamma=False)
    predicted = nd.BatchNorm(data, gamma, beta, nd.zeros((3,)), nd.ones((3,)), fix_gamma=False)
    column = data.asnumpy()
    normalised = (column - column.mean(0)) / np.sqrt(column.var(0) + 1e-3)
    np.testing.assert_allclose(trained.asnumpy(), normalised, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(predicted.asnumpy(), column / np.sqrt(1 + 1e-3), rtol=1e-5)
    assert np.abs(mean.asnumpy()).sum() > 0  # the moving mean moved in training mode


def test_mx_autograd_is_the_package():
    assert mx.autograd is autograd
    assert set(autograd.__all__) >= {"record", "pause", "train_mode", "predict_mode",
                                     "is_recording", "is_training", "set_recording",
                                     "set_training", "mark_variables", "backward", "grad"}
