"""The CUDA backend: cupy arrays in device memory, one stream per engine worker."""

from __future__ import annotations

from typing import Any

from dagnet.backend import Backend, Stream

from . import _cupy

__all__ = ["CUDABackend", "CUDAStream"]


class CUDAStream(Stream):
    """A non-blocking cupy stream on one device."""

    def __init__(self, cupy: Any, device_id: int):
        self.device_id = device_id
        self._cupy = cupy
        self._entered: list[Any] = []  # devices entered, innermost last
        with cupy.cuda.Device(device_id):
            self.stream = cupy.cuda.Stream(non_blocking=True)

    def synchronize(self) -> None:
        self.stream.synchronize()

    def __enter__(self) -> CUDAStream:
        # cupy keeps the current device and stream per thread; both are restored on exit
        device = self._cupy.cuda.Device(self.device_id)
        device.__enter__()
        self._entered.append(device)
        self.stream.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stream.__exit__(*exc)
        self._entered.pop().__exit__(*exc)

    def __repr__(self) -> str:
        return f"<CUDAStream gpu({self.device_id})>"


class CUDABackend(Backend):
    """GPU devices through cupy (``gpu(i)`` contexts)."""

    name = "cuda"
    device_type = "gpu"

    @property
    def unavailable_reason(self) -> str | None:
        return _cupy.probe()[1]

    def num_devices(self) -> int:
        cupy, _ = _cupy.probe()
        return cupy.cuda.runtime.getDeviceCount() if cupy is not None else 0

    @property
    def xp(self) -> Any:
        return _cupy.require()

    def alloc(self, nbytes: int, device_id: int) -> Any:
        cupy = _cupy.require()
        with cupy.cuda.Device(device_id):
            return cupy.empty(nbytes, dtype=cupy.uint8)

    def to_host(self, array: Any, stream: CUDAStream | None = None) -> Any:
        cupy = _cupy.require()
        return cupy.asnumpy(array, stream=stream.stream if stream is not None else None)

    def from_host(self, array: Any, device_id: int, stream: CUDAStream | None = None) -> Any:
        cupy = _cupy.require()
        with cupy.cuda.Device(device_id):
            if stream is None:
                return cupy.asarray(array)
            with stream.stream:
                return cupy.asarray(array)

    def create_stream(self, device_id: int) -> CUDAStream:
        return CUDAStream(_cupy.require(), device_id)

    def create_random(self, seed: int, device_id: int) -> Any:
        cupy = _cupy.require()
        with cupy.cuda.Device(device_id):
            return cupy.random.default_rng(seed)
