"""Recorded graphs are freed by reference counting alone: training with the cyclic
garbage collector switched off keeps memory flat."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import dagnet as mx
from dagnet import autograd

STEPS = 2000


@pytest.fixture
def collector_off():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _mlp_step(params, x, y):
    w1, b1, w2, b2 = params
    with autograd.record():
        hidden = mx.nd.relu(mx.nd.FullyConnected(x, w1, b1, num_hidden=16))
        out = mx.nd.SoftmaxOutput(mx.nd.FullyConnected(hidden, w2, b2, num_hidden=4), y)
    out.backward()
    for p in params:
        mx.nd.sgd_update(p, p.grad, out=p, lr=0.01)


def test_thousands_of_autograd_steps_leave_no_garbage_and_flat_memory(engine_name,
                                                                        collector_off):
    with mx.config.set(engine=engine_name):
        rs = np.random.RandomState(0)
        params = [mx.nd.array(rs.randn(16, 8) * 0.1), mx.nd.zeros((16,)),
                  mx.nd.array(rs.randn(4, 16) * 0.1), mx.nd.zeros((4,))]
        for p in params:
            p.attach_grad()
        x, y = mx.nd.array(rs.randn(8, 8)), mx.nd.array(rs.randint(0, 4, 8))
        for _ in range(100):  # warm the caches and the storage pool
            _mlp_step(params, x, y)
        mx.nd.waitall()
        objects = len(gc.get_objects())
        in_use = mx.storage.manager().stats(mx.cpu()).in_use
        for _ in range(STEPS):
            _mlp_step(params, x, y)
        mx.nd.waitall()
        grown = len(gc.get_objects()) - objects
        in_use_after = mx.storage.manager().stats(mx.cpu()).in_use
        unreachable = gc.collect()
        assert np.isfinite(params[0].asnumpy()).all()
    assert grown < 100, f"{grown} more tracked objects after {STEPS} steps"
    assert in_use_after <= in_use, f"storage in use grew from {in_use} to {in_use_after} bytes"
    assert unreachable < 100, f"{unreachable} objects were only freeable by the collector"
