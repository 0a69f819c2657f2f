"""Device contexts: value semantics, MXNet's printing, validation and ``with ctx:``."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dagnet
from dagnet import Context, cpu, current_context, gpu


def test_equality_and_hash():
    assert cpu() == cpu(0) == Context("cpu", 0) == Context("cpu") == Context(cpu(0))
    assert gpu(1) == Context("gpu", 1) == Context(gpu(1))
    assert cpu(0) != cpu(1) and cpu(0) != gpu(0) and gpu(0) != gpu(1)
    assert hash(cpu(1)) == hash(Context("cpu", 1))
    assert len({cpu(0), cpu(), cpu(1), gpu(0), gpu(1), Context("gpu", 1)}) == 4
    assert {cpu(1): "a"}[Context("cpu", 1)] == "a"
    assert cpu(0) != "cpu(0)" and cpu(0) != ("cpu", 0) and cpu(0) is not None


def test_attributes_and_repr():
    ctx = gpu(1)
    assert (ctx.device_type, ctx.device_id) == ("gpu", 1)
    assert repr(cpu(0)) == str(cpu(0)) == "cpu(0)"
    assert repr(gpu(1)) == "gpu(1)"
    assert repr(Context("tpu", 3)) == "tpu(3)"  # a plugin backend's device type


def test_numpy_integer_ids():
    ctx = cpu(np.int64(2))
    assert ctx == cpu(2) and type(ctx.device_id) is int


@pytest.mark.parametrize(("device_type", "device_id"), [
    ("", 0), (None, 0), (3, 0), (b"cpu", 0),
    ("cpu", -1), ("gpu", -2), ("cpu", 1.0), ("cpu", "1"), ("cpu", None), ("cpu", True),
], ids=repr)
def test_bad_device_type_or_id(device_type, device_id):
    with pytest.raises(dagnet.DagnetError) as info:
        Context(device_type, device_id)
    assert isinstance(info.value, ValueError)
    bad = device_id if isinstance(device_type, str) and device_type else device_type
    assert repr(bad) in str(info.value)


def test_bad_id_through_the_shortcuts():
    with pytest.raises(dagnet.DagnetError, match="device id for 'gpu' must be an integer >= 0"):
        gpu(-1)
    with pytest.raises(dagnet.DagnetError, match="device id for 'cpu' .* got str '0'"):
        cpu("0")


def test_with_sets_the_current_context():
    assert current_context() == cpu(0)
    with cpu(1) as ctx:
        assert ctx == cpu(1)
        assert current_context() == cpu(1)
        with gpu(0):  # entering a context needs no backend
            assert current_context() == gpu(0)
        assert current_context() == cpu(1)
    assert current_context() == cpu(0)


def test_with_restores_on_exception():
    with pytest.raises(KeyError):
        with cpu(3):
            raise KeyError("boom")
    assert current_context() == cpu(0)


def test_the_same_context_entered_twice():
    ctx = cpu(2)
    with ctx:
        with ctx:
            assert current_context() is ctx
        assert current_context() is ctx
    assert current_context() == cpu(0)


def test_current_context_is_per_thread():
    seen = {}
    inside = threading.Event()
    leave = threading.Event()

    def other_thread():
        seen["start"] = current_context()
        with gpu(5):
            inside.set()
            leave.wait(5)
            seen["inside"] = current_context()

    with cpu(1):
        worker = threading.Thread(target=other_thread)
        worker.start()
        inside.wait(5)
        assert current_context() == cpu(1)  # the other thread's ``with`` does not leak here
        leave.set()
        worker.join()
    assert seen == {"start": cpu(0), "inside": gpu(5)}


def test_cpu_pinned_and_the_deprecated_default_ctx():
    assert dagnet.cpu_pinned(1) == dagnet.Context("cpu_pinned", 1)
    x = dagnet.nd.ones((2,), ctx=dagnet.cpu_pinned())
    assert x.context == dagnet.cpu_pinned()
    with pytest.warns(DeprecationWarning, match="current_context"):
        assert dagnet.Context.default_ctx == dagnet.cpu()
    with dagnet.cpu(3):
        with pytest.warns(DeprecationWarning):
            dagnet.Context.default_ctx = dagnet.cpu(5)
        assert dagnet.current_context() == dagnet.cpu(5)
    assert dagnet.current_context() == dagnet.cpu()


def test_mxnet_device_type_numbers():
    assert cpu().device_typeid == 1 and gpu(3).device_typeid == 2
    assert Context.devtype2str[Context("cpu_shared", 0).device_typeid] == "cpu_shared"
    with pytest.raises(dagnet.ContextError, match="plugin"):
        Context("tpu", 0).device_typeid  # noqa: B018
