"""The CPU backend: numpy arrays in host memory."""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet.backend import ALIGNMENT, Backend
from dagnet.context import Context

__all__ = ["CPUBackend"]


class CPUBackend(Backend):
    """Host memory and numpy kernels.

    As in MXNet, ``cpu(i)`` for any ``i`` names a logical CPU device: all
    share host memory but each gets its own workers in the per-device engine.
    """

    name = "cpu"
    device_type = "cpu"
    # MXNet's page-locked and shared-memory CPU contexts: host memory here too
    also_serves = ("cpu_pinned", "cpu_shared")

    @property
    def unavailable_reason(self) -> str | None:
        return None

    def num_devices(self) -> int:
        return 1

    @property
    def xp(self) -> Any:
        return np

    def check_device(self, ctx: Context) -> None:
        """Every CPU id is valid."""

    def alloc(self, nbytes: int, device_id: int) -> np.ndarray:
        # numpy alone promises 16 bytes; a convolution whose loads straddle cache lines
        # runs about a tenth slower
        raw = np.empty(nbytes + ALIGNMENT - 1, dtype=np.uint8)
        start = -raw.ctypes.data % ALIGNMENT
        return raw[start:start + nbytes]

    def to_host(self, array: Any, stream: Any = None) -> np.ndarray:
        return np.array(array, copy=True)

    def from_host(self, array: Any, device_id: int, stream: Any = None) -> np.ndarray:
        return np.array(array, copy=True)

    def create_stream(self, device_id: int) -> None:
        return None  # host work is finished when the function returns

    def create_random(self, seed: int, device_id: int) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(seed))
