"""Device records: what a context needs on the hot path, looked up once."""

from __future__ import annotations

import threading

import numpy as np

from .. import storage as _storage
from .._errors import ContextError
from ..backend import backend_for
from ..context import Context

__all__ = ["Device", "device_of"]


class Device:
    """Everything a device needs on the hot path, looked up once per context.

    ``xp`` is the backend's array module, ``pool`` its storage pool;
    ``numpy`` says the arrays are plain numpy arrays (views are then made
    with the fast ``np.ndarray`` constructor).  One record per context, so
    devices compare by identity.
    """

    __slots__ = ("ctx", "device_type", "backend", "xp", "pool", "numpy", "__weakref__")

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.device_type = ctx.device_type
        self.backend = backend_for(ctx)  # raises for a device that cannot run here
        self.xp = self.backend.xp
        self.pool = _storage.manager().pool(ctx)
        self.numpy = self.xp is np

    def __repr__(self) -> str:
        return f"<Device {self.ctx}>"


_devices: dict[Context, Device] = {}
_devices_lock = threading.Lock()


def device_of(ctx: Context) -> Device:
    """The device record of ``ctx`` (created on first use; raises if it cannot run)."""
    dev = _devices.get(ctx)
    if dev is None:
        if not isinstance(ctx, Context):
            raise ContextError(f"expected a device context such as dagnet.cpu() or "
                               f"dagnet.gpu(0), got {type(ctx).__name__} {ctx!r}")
        with _devices_lock:
            dev = _devices.get(ctx)
            if dev is None:
                dev = _devices[ctx] = Device(ctx)
    return dev
