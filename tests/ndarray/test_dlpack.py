"""DLPack exchange: capsules MXNet's way (``"dltensor"``, consumed once), shared memory,
and the storage block kept alive while a consumer holds it."""

from __future__ import annotations

import gc

import numpy as np
import pytest

import dagnet as mx


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
def test_round_trip_shares_memory(dtype):
    a = mx.nd.array(np.arange(12).reshape(3, 4), dtype=dtype)
    b = mx.nd.from_dlpack(a.to_dlpack_for_write())
    assert b.shape == (3, 4) and b.dtype == dtype
    b[:] = 7
    b.wait_to_read()  # b has its own engine variable: the writer waits, as with MXNet
    np.testing.assert_array_equal(a.asnumpy(), np.full((3, 4), 7, dtype))


def test_capsule_is_named_dltensor_and_consumed_once():
    capsule = mx.nd.to_dlpack_for_read(mx.nd.ones((2,)))
    assert "dltensor" in repr(capsule)
    mx.nd.from_dlpack(capsule)
    with pytest.raises(mx.nd.DLPackError, match="consumed only once"):
        mx.nd.from_dlpack(capsule)


def test_read_export_sees_pending_writes():
    a = mx.nd.zeros((100,))
    a += 3  # pushed to the engine
    np.testing.assert_array_equal(np.from_dlpack(_Wrap(a.to_dlpack_for_read())),
                                  np.full(100, 3, np.float32))


def test_capsule_keeps_storage_alive_after_the_array_dies():
    a = mx.nd.array(np.arange(1000.0))
    capsule = a.to_dlpack_for_read()
    del a
    gc.collect()
    mx.nd.waitall()
    junk = [mx.nd.full((1000,), -1.0) for _ in range(8)]  # would reuse a freed block
    mx.nd.waitall()
    b = mx.nd.from_dlpack(capsule)
    np.testing.assert_array_equal(b.asnumpy(), np.arange(1000.0, dtype=np.float32))
    del junk


def test_from_numpy_producer_and_views():
    values = np.arange(6.0).reshape(2, 3)
    b = mx.nd.from_dlpack(values)
    np.testing.assert_array_equal(b.asnumpy(), values)
    view = mx.nd.array(np.arange(10.0))[2:5]
    np.testing.assert_array_equal(mx.nd.from_dlpack(view.to_dlpack_for_read()).asnumpy(),
                                  [2.0, 3.0, 4.0])


def test_bad_input_is_named():
    with pytest.raises(mx.nd.DLPackError, match="expected a DLPack capsule"):
        mx.nd.from_dlpack([1, 2])
    with pytest.raises(mx.nd.DLPackError, match="expected an NDArray"):
        mx.nd.to_dlpack_for_read(np.ones(2))


def test_split_v2_method_is_the_function():
    x = mx.nd.array(np.arange(24.0).reshape(2, 2, 6))
    for sections in (3, (1, 3, 5)):
        got = x.split_v2(sections, axis=2)
        want = mx.nd.split_v2(x, sections, axis=2)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.asnumpy(), w.asnumpy())


class _Wrap:
    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **_):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)
