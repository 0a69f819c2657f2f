"""``dagnet.engine.bulk`` / ``set_bulk_size``: a thread's operator calls bundled into
one engine operation each ``size`` calls (MXNet's bulk execution)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dagnet
import dagnet as mx
from dagnet.operator import XP, Op, elemwise_shape


@pytest.fixture(autouse=True)
def no_bulk_after():
    yield
    mx.engine.set_bulk_size(0)


def _work(x, y):
    """A mix of new arrays, in-place updates, out=, a view and an assignment."""
    z = x * 2 + y
    z += 1
    mx.nd.elemwise_mul(z, y, out=z)
    z[1:3] = 7  # an assignment: pushed on its own, after the bundled calls before it
    row = z[2:4]
    for _ in range(5):
        z = mx.nd.relu(z - 1) + row.sum()
    return z


def test_bundled_calls_give_the_unbundled_results(engine_name):
    x = mx.nd.array(np.linspace(-1, 1, 12).reshape(6, 2))
    y = mx.nd.array(np.arange(12).reshape(6, 2) % 3)
    want = _work(x, y).asnumpy()
    for size in (2, 5, 64):
        with mx.engine.bulk(size):
            got = _work(x, y)
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)


def test_calls_are_pushed_size_at_a_time(naive_pushes):
    x = mx.nd.ones((3,))
    naive_pushes.clear()
    with mx.engine.bulk(4):
        for _ in range(10):
            x = x + 1
        assert len(naive_pushes) == 2  # two full bundles so far
    names = [name for name, _, _ in naive_pushes]
    assert len(names) == 3, names  # the rest at the end of the block
    assert names[0].endswith("(4 operators)") and names[2].endswith("(2 operators)")
    assert x.asnumpy().tolist() == [11, 11, 11]


def test_reading_a_result_pushes_the_bundle_first(engine_name):
    with mx.engine.bulk(100):
        x = mx.nd.ones((4,))
        x *= 3
        assert x.asnumpy().tolist() == [3, 3, 3, 3]
        x += 1
        x.wait_to_read()
        assert x.asnumpy().tolist() == [4, 4, 4, 4]


def _exploding_op():
    def compute(attrs, ctx, inputs, req, outputs):
        raise ValueError("the kernel broke")

    return Op("_explode", input_names=["data"], infer_shape=elemwise_shape("_explode"),
              compute={XP: compute})


def test_a_failure_in_a_bundle_names_the_operator(engine_name, register):
    register(_exploding_op())
    with mx.engine.bulk(10):
        x = mx.nd.ones((2,)) + 1
        broken = mx.nd._explode(x) * 2
    with pytest.raises(dagnet.OperatorFailedError) as caught:
        broken.asnumpy()
    assert "raised by operator '_explode'" in caught.value.original.__notes__
    assert x.asnumpy().tolist() == [2, 2]  # written before the failing call in the bundle


def test_the_size_belongs_to_the_thread():
    mx.engine.set_bulk_size(8)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(mx.engine.set_bulk_size(0)))
    thread.start()
    thread.join()
    assert seen == [0] and mx.engine.set_bulk_size(0) == 8


@pytest.mark.parametrize("size", [-1, 2.5, "4", True])
def test_a_bad_size_is_refused(size):
    with pytest.raises(dagnet.EngineTypeError, match="set_bulk_size: size must be"):
        mx.engine.set_bulk_size(size)


def test_recording_inside_a_bundle(engine_name):
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with mx.engine.bulk(16):
        with mx.autograd.record():
            y = (x * x + x).sum()
        y.backward()
    assert x.grad.asnumpy().tolist() == [3, 5, 7]
