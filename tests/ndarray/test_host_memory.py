"""MXNet's host-memory contexts (cpu_pinned, cpu_shared) mix with CPU arrays in one call,
as in MXNet: the call runs on the CPU, and out= may be host memory of another kind."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


@pytest.mark.parametrize("device_type", ["cpu_shared", "cpu_pinned"])
def test_a_call_mixing_host_memory_and_cpu_arrays_runs_on_the_cpu(device_type):
    host = mx.nd.array([1.0, 2.0], ctx=mx.Context(device_type, 0))
    cpu = mx.nd.array([10.0, 20.0])
    for result in (host + cpu, cpu + host, mx.nd.concat(cpu, host, cpu, dim=0)):
        assert result.context == mx.cpu(0)
    np.testing.assert_array_equal((host + cpu).asnumpy(), [11, 22])


def test_out_may_be_shared_memory_for_a_cpu_call():
    # GluonCV's batchify functions stack worker batches into shared memory this way
    shared = mx.nd.empty((2, 3), ctx=mx.Context("cpu_shared", 0))
    result = mx.nd.stack(mx.nd.ones((3,)), mx.nd.zeros((3,)), out=shared)
    assert result is shared and shared.context == mx.Context("cpu_shared", 0)
    np.testing.assert_array_equal(shared.asnumpy(), [[1, 1, 1], [0, 0, 0]])


def test_other_devices_still_do_not_mix():
    with pytest.raises(mx.base.MXNetError, match="must be on one device"):
        mx.nd.ones((2,), ctx=mx.cpu(1)) + mx.nd.ones((2,))
    with pytest.raises(mx.base.MXNetError, match="must be on one device"):
        mx.nd.ones((2,), ctx=mx.Context("cpu_shared", 1)) + mx.nd.ones((2,))
    with pytest.raises(mx.base.MXNetError, match="out= array 0 is on cpu_shared"):
        mx.nd.stack(mx.nd.ones((3,)), mx.nd.ones((3,)),
                    out=mx.nd.empty((2, 3), ctx=mx.Context("cpu_shared", 1)))
