"""NumPy mode switches (mx.npx / mx.util): per thread, scoped, decorators, and what they
change: gluon blocks and parameters give mx.np arrays, unknown parameter dimensions
read -1."""

from __future__ import annotations

import threading

import numpy as onp

import dagnet as mx
from dagnet import gluon, np, npx, util


def test_set_reset_and_queries():
    assert not npx.is_np_array() and not npx.is_np_shape()
    npx.set_np()
    assert npx.is_np_array() and npx.is_np_shape() and mx.util.is_np_array()
    npx.reset_np()
    assert not npx.is_np_array() and not npx.is_np_shape()


def test_decorators_and_scopes_restore():
    @npx.use_np
    def inside():
        return util.is_np_array(), util.is_np_shape()

    assert inside() == (True, True)
    assert not util.is_np_array()
    with util.np_array(True):
        assert util.is_np_array()
    assert not util.is_np_array()
    assert mx.test_utils.use_np is util.use_np


def test_np_mode_is_thread_local_but_global_shape_reaches_new_threads():
    npx.set_np()
    seen = []
    worker = threading.Thread(target=lambda: seen.append((util.is_np_array(),
                                                          np.ones(()).shape)))
    worker.start()
    worker.join()
    assert seen == [(False, ())]  # mx.np makes 0-d arrays with the switches off too
    util.reset_np()
    util.set_np_shape(2)
    try:
        shapes = []
        worker = threading.Thread(target=lambda: shapes.append(util.is_np_shape()))
        worker.start()
        worker.join()
        assert shapes == [True]
    finally:
        util.set_np_shape(0)


def test_gluon_under_np_mode_gives_np_arrays():
    @util.use_np
    def run():
        net = gluon.nn.Dense(4, in_units=3)
        net.initialize()
        out = net(np.ones((2, 3)))
        return net.weight.data(), net.weight.grad(), out

    weight, grad, out = run()
    assert isinstance(weight, np.ndarray) and isinstance(grad, np.ndarray)
    assert isinstance(out, np.ndarray) and out.shape == (2, 4)
    legacy = gluon.nn.Dense(4, in_units=3)
    legacy.initialize()
    assert type(legacy(mx.nd.ones((2, 3)))) is mx.nd.NDArray


def test_unknown_parameter_dimensions_read_minus_one_under_np_shape():
    net = gluon.nn.Dense(16)
    assert net.weight.shape == (16, 0)
    with mx.np_shape(True):
        assert net.weight.shape == (16, -1)
        net.initialize()
        assert net(mx.nd.zeros((2, 5))).shape == (2, 16)
    assert net.weight.shape == (16, 5)


def test_split_data_of_np_arrays():
    x = np.array(onp.arange(24, dtype=onp.float32).reshape(4, 6))
    with util.np_array(True):
        parts = gluon.utils.split_data(x, 3, batch_axis=1)
    assert all(isinstance(p, np.ndarray) for p in parts)
    onp.testing.assert_array_equal(np.concatenate(parts, axis=1).asnumpy(), x.asnumpy())
