"""NDArray's MXNet-shaped extras: pickled state as raw bytes, numpy conversion, the
contiguity rule of basic slices, and host-memory contexts."""

from itertools import combinations_with_replacement, permutations

import numpy as np
import pytest

import dagnet as mx

# What MXNet 1.9.1's mx.nd.arange(1, ctx=mx.gpu()).__getstate__() holds: one float32
# zero recorded on gpu(0).
MXNET_GPU_STATE = bytearray(
    b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
    b"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")


@pytest.mark.parametrize("values", [np.arange(6, dtype=np.float32).reshape(2, 3),
                                    np.array(7, dtype=np.int32), np.zeros((0, 3))])
def test_state_round_trip(values):
    state = mx.nd.array(values, dtype=values.dtype).__getstate__()
    assert set(state) == {"handle"} and isinstance(state["handle"], bytearray)
    target = mx.nd.zeros(1)
    target.__setstate__(state)
    assert target.shape == values.shape and target.dtype == values.dtype
    np.testing.assert_array_equal(target.asnumpy(), values)


def test_state_from_an_mxnet_gpu_array_loads_on_the_cpu():
    target = mx.nd.arange(1)
    target.__setstate__({"handle": MXNET_GPU_STATE})
    assert target.context == mx.cpu() and target.asnumpy().tolist() == [0.0]


def test_a_bad_state_is_an_ndarray_file_error():
    with pytest.raises(mx.nd.NDArrayFileError, match="truncated"):
        mx.nd.zeros(1).__setstate__({"handle": MXNET_GPU_STATE[:20]})


def test_numpy_sees_the_values():
    x = mx.nd.array([50000001], dtype="int32")
    assert np.all(x == 50000001)
    assert np.asarray(x, dtype=np.float64).dtype == np.float64


def test_basic_slice_contiguity_matches_numpy():
    x = np.arange(4 * 5 * 6).reshape(4, 5, 6)
    slices = [slice(None), slice(2), slice(1, 3), slice(None, None, 2), slice(0, 1),
              slice(None, None, -1)]
    for idx in combinations_with_replacement(slices, 3):
        for slc in permutations(idx):
            assert mx.nd.NDArray._basic_indexing_slice_is_contiguous(slc, x.shape) == \
                x[slc].flags.contiguous, slc


@pytest.mark.parametrize("device_type", ["cpu_shared", "cpu_pinned"])
def test_host_memory_contexts_run_on_the_cpu_backend(device_type):
    ctx = mx.Context(device_type, 0)
    x = mx.nd.ones((2, 3), ctx=ctx)
    assert x.context == ctx and (x * 2).context == ctx
    np.testing.assert_array_equal(x.copyto(mx.cpu()).asnumpy(), np.ones((2, 3)))


def test_from_numpy_shares_memory_and_makes_the_source_read_only():
    import gc

    source = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = mx.nd.from_numpy(source)
    with pytest.raises(ValueError):
        source[0, 0] = 1  # writes go through dagnet now
    x[1, 1] = 100
    x.wait_to_read()
    assert source[1, 1] == 100
    np.testing.assert_array_equal((x * 2).asnumpy(), source * 2)
    in_use = mx.storage.stats(mx.cpu()).in_use
    del x
    gc.collect()
    mx.nd.waitall()
    assert source[1, 1] == 100  # the memory stayed with its owner, not in the pool
    assert mx.storage.stats(mx.cpu()).in_use <= in_use


@pytest.mark.parametrize("values", [np.array(3.0), np.zeros((1, 0, 2))])
def test_from_numpy_of_scalars_and_empty_arrays(values):
    x = mx.nd.from_numpy(values)
    assert x.shape == values.shape
    np.testing.assert_array_equal(x.asnumpy(), values)


def test_from_numpy_copies_on_request_and_refuses_strided_sources():
    source = np.ones((2, 3))
    copy = mx.nd.from_numpy(source, zero_copy=False)
    source[0, 0] = 5  # still writable, and the copy does not see it
    assert copy.asnumpy()[0, 0] == 1
    with pytest.raises(ValueError, match="C-contiguous"):
        mx.nd.from_numpy(np.ones((3, 2)).T)
