"""mx.util's NumPy switches: per thread, scoped, decorators, and the shape reading they set."""

from __future__ import annotations

import threading

import pytest

import dagnet as mx
from dagnet import util


@pytest.fixture(autouse=True)
def _reset():
    util.reset_np()
    yield
    util.reset_np()


def test_off_by_default_and_set_returns_previous():
    assert not mx.is_np_shape() and not mx.is_np_array()
    assert mx.set_np_shape(True) is False
    assert mx.is_np_shape()
    assert mx.set_np_shape(False) is True
    assert not mx.is_np_shape()


def test_scope_restores_and_nests():
    with mx.np_shape():
        assert mx.is_np_shape()
        with mx.np_shape(False):
            assert not mx.is_np_shape()
        assert mx.is_np_shape()
    assert not mx.is_np_shape()


def test_decorators_on_functions_and_classes():
    @mx.use_np_shape
    def inside():
        return mx.is_np_shape()

    @mx.use_np
    class Both:
        def method(self):
            return mx.is_np_shape(), mx.is_np_array()

        @property
        def prop(self):
            return mx.is_np_shape()

        @staticmethod
        def static():
            return mx.is_np_array()

    assert inside() is True and not mx.is_np_shape()
    assert Both().method() == (True, True)
    assert Both().prop is True and Both.static() is True
    assert not mx.is_np_shape() and not mx.is_np_array()
    with pytest.raises(TypeError, match="use_np_shape"):
        mx.use_np_shape(3)


def test_array_semantics_pin_shape_semantics():
    util.set_np()
    assert mx.is_np_shape() and mx.is_np_array()
    with pytest.raises(mx.MXNetError, match="reset_np"):
        mx.set_np_shape(False)
    util.reset_np()
    assert not mx.is_np_shape() and not mx.is_np_array()
    with pytest.raises(mx.MXNetError, match="need NumPy shape"):
        util.set_np(shape=False, array=True)


def test_thread_local_unless_global():
    seen = []

    def look():
        seen.append(mx.is_np_shape())

    mx.set_np_shape(True)
    t = threading.Thread(target=look)
    t.start()
    t.join()
    mx.set_np_shape(2)  # MXNet's code for "on in every thread"
    t = threading.Thread(target=look)
    t.start()
    t.join()
    assert seen == [False, True]


def test_shape_reading_follows_the_switch():
    assert util.unknown_dim() == 0
    assert not util.shape_is_known(()) and not util.shape_is_known((2, 0))
    assert util.shape_is_known((2, 3)) and not util.shape_is_known(None)
    with mx.np_shape():
        assert util.unknown_dim() == -1
        assert util.shape_is_known(()) and util.shape_is_known((2, 0))
        assert not util.shape_is_known((2, -1))
        assert util.dim_is_known(0) and not util.dim_is_known(-1)
