"""The backend conformance suite: what every device backend must do.

A backend package checks itself by subclassing :class:`BackendConformance`
in a test module; the ``dagnet`` pytest plugin runs each test once per
registered backend (``dagnet_backend`` fixture) and skips unavailable ones
with the backend's own reason::

    from dagnet.testing.backend_suite import BackendConformance

    class TestMyBackend(BackendConformance):
        backends = ("my_backend",)   # None (the default): every registered backend

Arrays are compared on the host through ``to_host``, so the suite works
for any array library that looks like numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

__all__ = ["BackendConformance"]

_DTYPES = ["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool"]
_SHAPES = [(), (0,), (1,), (7,), (2, 3), (3, 0, 2), (2, 3, 4)]


def _sample(shape: tuple[int, ...], dtype: str, seed: int = 0) -> np.ndarray:
    """Values spread over ``dtype``'s range, as an array even for shape ()."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        values = rng.random(shape) < 0.5
    elif np.dtype(dtype).kind == "f":
        values = rng.standard_normal(shape) * 100
    else:
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    return np.asarray(values, dtype=dtype)


class BackendConformance:
    """Tests every backend must pass; subclass it in a test module to run them."""

    #: Names of the backends to check; None checks every registered backend.
    backends: tuple[str, ...] | None = None

    @pytest.fixture(autouse=True)
    def _only_listed_backends(self, dagnet_backend_name: str) -> None:
        if self.backends is not None and dagnet_backend_name not in self.backends:
            pytest.skip(f"{type(self).__name__} checks only {', '.join(self.backends)}")

    # -- identity ------------------------------------------------------------
    def test_names_are_strings(self, dagnet_backend: Any) -> None:
        assert isinstance(dagnet_backend.name, str) and dagnet_backend.name
        assert isinstance(dagnet_backend.device_type, str) and dagnet_backend.device_type

    def test_available_with_no_reason(self, dagnet_backend: Any) -> None:
        assert dagnet_backend.is_available is True
        assert dagnet_backend.unavailable_reason is None

    def test_num_devices(self, dagnet_backend: Any) -> None:
        count = dagnet_backend.num_devices()
        assert isinstance(count, int) and not isinstance(count, bool)
        assert count >= 1

    def test_repr_names_backend(self, dagnet_backend: Any) -> None:
        assert repr(dagnet_backend.name) in repr(dagnet_backend)

    # -- the array module ----------------------------------------------------
    def test_xp_behaves_like_numpy(self, dagnet_backend: Any) -> None:
        xp = dagnet_backend.xp
        a = xp.arange(6, dtype=xp.float32).reshape(2, 3)
        b = xp.ones((2, 3), dtype=xp.float32)
        assert a.shape == (2, 3) and a.dtype == np.float32
        host = dagnet_backend.to_host
        expected = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_array_equal(host(a + b), expected + 1)
        np.testing.assert_array_equal(host(a * 2 - b), expected * 2 - 1)
        np.testing.assert_array_equal(host(a.sum(axis=0)), [3, 5, 7])
        np.testing.assert_array_equal(host(xp.maximum(a, 2.5)), np.maximum(expected, 2.5))
        np.testing.assert_array_equal(host(a.T), expected.T)
        np.testing.assert_array_equal(host(a[:, 1:]), expected[:, 1:])
        np.testing.assert_allclose(host(xp.exp(xp.zeros(3))), np.ones(3))

    # -- raw memory ----------------------------------------------------------
    @pytest.mark.parametrize("nbytes", [0, 1, 513, 4096])
    def test_alloc_is_1d_uint8_of_the_size_asked(self, dagnet_backend: Any, nbytes: int) -> None:
        buffer = dagnet_backend.alloc(nbytes, 0)
        assert buffer.ndim == 1
        assert buffer.shape == (nbytes,)
        assert buffer.dtype == np.uint8
        host = dagnet_backend.to_host(buffer)
        assert host.shape == (nbytes,) and host.dtype == np.uint8
        dagnet_backend.free(buffer)

    @pytest.mark.parametrize("nbytes", [1, 100, 4096, 1 << 20])
    def test_alloc_starts_on_a_cache_line(self, dagnet_backend: Any, nbytes: int) -> None:
        from dagnet.backend import ALIGNMENT

        buffers = [dagnet_backend.alloc(nbytes, 0) for _ in range(8)]
        for buffer in buffers:
            interface = getattr(buffer, "__cuda_array_interface__", None) or \
                buffer.__array_interface__
            assert interface["data"][0] % ALIGNMENT == 0, interface["data"]
        for buffer in buffers:
            dagnet_backend.free(buffer)

    def test_alloc_buffer_is_writable_and_viewable(self, dagnet_backend: Any) -> None:
        buffer = dagnet_backend.alloc(64, 0)
        view = buffer.view(np.float32)  # temp space and NDArrays view raw blocks by dtype
        view[...] = 1.5
        np.testing.assert_array_equal(dagnet_backend.to_host(view), np.full(16, 1.5, np.float32))
        dagnet_backend.free(buffer)

    def test_allocs_do_not_alias(self, dagnet_backend: Any) -> None:
        a, b = dagnet_backend.alloc(32, 0), dagnet_backend.alloc(32, 0)
        a[...] = 1
        b[...] = 2
        assert dagnet_backend.to_host(a).tolist() == [1] * 32
        dagnet_backend.free(a)
        dagnet_backend.free(b)

    # -- host transfers --------------------------------------------------------
    @pytest.mark.parametrize("dtype", _DTYPES)
    @pytest.mark.parametrize("shape", _SHAPES, ids=str)
    def test_host_round_trip(self, dagnet_backend: Any, dtype: str, shape: tuple) -> None:
        original = _sample(shape, dtype)
        on_device = dagnet_backend.from_host(original, 0)
        assert tuple(on_device.shape) == shape
        assert on_device.dtype == np.dtype(dtype)
        back = dagnet_backend.to_host(on_device)
        assert isinstance(back, np.ndarray)
        assert back.shape == shape and back.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(back, original)

    # The backend fixture returns the registry's backend object: sharing it across
    # examples is safe, so the function-scoped fixture check does not apply.
    @settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(original=hnp.arrays(
        dtype=st.sampled_from([np.dtype(d) for d in _DTYPES]),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)))
    def test_host_round_trip_of_any_values(self, dagnet_backend: Any,
                                           original: np.ndarray) -> None:
        back = dagnet_backend.to_host(dagnet_backend.from_host(original, 0))
        assert back.shape == original.shape and back.dtype == original.dtype
        # bitwise, so NaN payloads, infinities and -0.0 must survive too
        assert back.tobytes() == original.tobytes()

    def test_transfers_copy(self, dagnet_backend: Any) -> None:
        original = np.arange(5.0)
        on_device = dagnet_backend.from_host(original, 0)
        original[:] = -1  # the device copy must not see later host writes
        back = dagnet_backend.to_host(on_device)
        np.testing.assert_array_equal(back, np.arange(5.0))
        back[:] = -2  # nor the device array later writes to the host copy
        np.testing.assert_array_equal(dagnet_backend.to_host(on_device), np.arange(5.0))

    def test_round_trip_on_a_stream(self, dagnet_backend: Any) -> None:
        stream = dagnet_backend.create_stream(0)
        original = _sample((4, 5), "float32", seed=3)
        on_device = dagnet_backend.from_host(original, 0, stream)
        if stream is not None:
            stream.synchronize()
        np.testing.assert_array_equal(dagnet_backend.to_host(on_device, stream), original)

    # -- streams ---------------------------------------------------------------
    def test_create_stream(self, dagnet_backend: Any) -> None:
        from dagnet.backend import Stream

        stream = dagnet_backend.create_stream(0)
        assert stream is None or isinstance(stream, Stream)
        if stream is not None:
            xp = dagnet_backend.xp
            x = xp.ones(1000, dtype=xp.float32)
            y = x * 3  # some queued work for the stream to finish
            stream.synchronize()
            stream.synchronize()  # idempotent
            assert float(dagnet_backend.to_host(y).sum()) == 3000.0

    # -- random generators -------------------------------------------------------
    def test_same_seed_same_numbers(self, dagnet_backend: Any) -> None:
        first = dagnet_backend.create_random(1234, 0)
        second = dagnet_backend.create_random(1234, 0)
        a = dagnet_backend.to_host(first.random(16))
        b = dagnet_backend.to_host(second.random(16))
        np.testing.assert_array_equal(a, b)
        assert ((a >= 0) & (a < 1)).all()

    def test_different_seeds_differ(self, dagnet_backend: Any) -> None:
        a = dagnet_backend.to_host(dagnet_backend.create_random(1, 0).random(16))
        b = dagnet_backend.to_host(dagnet_backend.create_random(2, 0).random(16))
        assert not np.array_equal(a, b)

    def test_generator_advances(self, dagnet_backend: Any) -> None:
        generator = dagnet_backend.create_random(7, 0)
        a = dagnet_backend.to_host(generator.random(8))
        b = dagnet_backend.to_host(generator.random(8))
        assert not np.array_equal(a, b)

    # -- devices -----------------------------------------------------------------
    def test_check_device_accepts_every_device(self, dagnet_backend: Any) -> None:
        from dagnet.context import Context

        for device_id in range(dagnet_backend.num_devices()):
            dagnet_backend.check_device(Context(dagnet_backend.device_type, device_id))

    def test_check_device_rejects_a_missing_device(self, dagnet_backend: Any) -> None:
        import dagnet
        from dagnet.context import Context

        count = dagnet_backend.num_devices()
        ctx = Context(dagnet_backend.device_type, count)
        if dagnet_backend.device_type == "cpu":
            dagnet_backend.check_device(ctx)  # cpu(i) names a logical device for every i
            return
        with pytest.raises(dagnet.BackendUnavailableError) as info:
            dagnet_backend.check_device(ctx)
        assert str(ctx) in str(info.value)

    def test_storage_allocates_through_the_backend(self, dagnet_backend: Any) -> None:
        from dagnet.context import Context
        from dagnet.storage import StorageManager

        manager = StorageManager()
        ctx = Context(dagnet_backend.device_type, 0)
        handle = manager.alloc(100, ctx)
        assert handle.data.shape[0] >= 100 and handle.data.dtype == np.uint8
        manager.direct_free(handle)
        assert manager.stats(ctx).reserved == 0
