"""Devices: ``dagnet.cpu()``, ``dagnet.gpu(i)`` and the :class:`Context` they return."""

from __future__ import annotations

from ._errors import DagnetError

__all__ = ["Context", "cpu", "gpu", "num_gpus", "current_context"]


class Context:
    """A device: a type (``'cpu'`` or ``'gpu'``, or a plugin backend's) and an id.

    Contexts compare and hash by value, print as MXNet does (``cpu(0)``) and,
    like MXNet's, work as ``with`` blocks that set the default device.
    """

    __slots__ = ("device_type", "device_id", "_previous")
    _default: list[Context] = []

    def __init__(self, device_type: str | Context, device_id: int = 0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        if not isinstance(device_type, str) or not device_type:
            raise DagnetError(f"device type must be a non-empty string such as 'cpu', got {device_type!r}")
        if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
            raise DagnetError(f"device id must be an integer >= 0, got {device_id!r}")
        self.device_type = device_type
        self.device_id = device_id

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Context)
            and self.device_type == other.device_type
            and self.device_id == other.device_id
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    def __enter__(self) -> Context:
        Context._default.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        Context._default.pop()


def cpu(device_id: int = 0) -> Context:
    """The CPU context (MXNet's ``mx.cpu()``)."""
    return Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    """A GPU context; using it needs an available ``gpu`` backend (``dagnet[cuda]``)."""
    return Context("gpu", device_id)


def current_context() -> Context:
    """The innermost ``with ctx:`` device, or ``cpu(0)``."""
    return Context._default[-1] if Context._default else cpu()


def num_gpus() -> int:
    """How many GPUs the registered ``gpu`` backend can use (0 when it is unavailable)."""
    from .backend import find_backend

    backend = find_backend("gpu")
    return backend.num_devices() if backend is not None and backend.is_available else 0
