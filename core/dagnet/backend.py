"""The device backend interface, and finding the backend for a context.

A backend plugin supplies one :class:`Backend` per device type: it says
whether it can run here (and why not), gives the array module ``xp`` that
kernels are written against, allocates raw memory for the storage manager,
moves arrays to and from the host, and makes streams for the engine.
"""

from __future__ import annotations

import abc
from typing import Any

from ._errors import BackendUnavailableError, UnknownNameError
from .context import Context

__all__ = ["Backend", "Stream", "find_backend", "backend_for", "available_backends",
           "ALIGNMENT"]

#: The byte boundary every block from :meth:`Backend.alloc` starts on: a cache line, so
#: vector kernels (oneDNN's convolutions above all) load whole lines.
ALIGNMENT = 64


class Stream(abc.ABC):
    """An ordered queue of device work; the engine hands one to each function.

    A stream is a context manager: inside ``with stream:`` the array library
    issues work on this stream (and on its device), so kernels written against
    ``xp`` need not know about streams.  The runtime enters it around every
    kernel it runs; core never imports the array library to do so.
    """

    @abc.abstractmethod
    def synchronize(self) -> None:
        """Block the calling thread until every piece of work queued so far is done."""

    @abc.abstractmethod
    def __enter__(self) -> Stream:
        """Make this stream (and its device) current for the calling thread."""

    @abc.abstractmethod
    def __exit__(self, *exc: object) -> None:
        """Restore the stream and device that were current before ``__enter__``."""


class Backend(abc.ABC):
    """One device type's implementation.  Subclasses set ``name`` and ``device_type``.

    Registration must stay cheap: import the array library lazily and report
    its absence through :attr:`is_available` and :attr:`unavailable_reason`.
    """

    name: str
    device_type: str
    # Other device types whose memory is this backend's, as MXNet's cpu_pinned and
    # cpu_shared are host memory: contexts of these types run on this backend.
    also_serves: tuple[str, ...] = ()

    @property
    @abc.abstractmethod
    def unavailable_reason(self) -> str | None:
        """Why this backend cannot run here (missing library, no device), or None."""

    @property
    def is_available(self) -> bool:
        """Whether arrays can be created on this backend's devices."""
        return self.unavailable_reason is None

    @abc.abstractmethod
    def num_devices(self) -> int:
        """How many devices of this type exist (0 when unavailable)."""

    @property
    @abc.abstractmethod
    def xp(self) -> Any:
        """The array module (numpy-compatible) that kernels use on this backend."""

    @abc.abstractmethod
    def alloc(self, nbytes: int, device_id: int) -> Any:
        """A new raw buffer of ``nbytes`` bytes (a 1-D uint8 array of ``xp``) starting on
        an :data:`ALIGNMENT` boundary."""

    def free(self, buffer: Any) -> None:
        """Give ``buffer`` back to the device (the default drops the reference)."""
        del buffer

    @abc.abstractmethod
    def to_host(self, array: Any, stream: Stream | None = None) -> Any:
        """Copy a device array into a new numpy array."""

    @abc.abstractmethod
    def from_host(self, array: Any, device_id: int, stream: Stream | None = None) -> Any:
        """Copy a numpy array onto device ``device_id``."""

    @abc.abstractmethod
    def create_stream(self, device_id: int) -> Stream | None:
        """A new stream on device ``device_id`` for one engine worker.

        None means work is finished when the function that issued it returns
        (the CPU), so the engine has nothing to synchronize.
        """

    @abc.abstractmethod
    def create_random(self, seed: int, device_id: int) -> Any:
        """A random generator for device ``device_id`` seeded with ``seed``."""

    def check_device(self, ctx: Context) -> None:
        """Raise a clear error unless ``ctx`` names a device this backend can use."""
        reason = self.unavailable_reason
        if reason is not None:
            raise BackendUnavailableError(
                f"{ctx} needs the {self.name!r} backend, which is unavailable: {reason}"
            )
        count = self.num_devices()
        if ctx.device_id >= count:
            have = f"ids 0 to {count - 1}" if count else "none is visible"
            raise BackendUnavailableError(
                f"{ctx} does not exist: the {self.name!r} backend has {count} "
                f"{ctx.device_type} device(s), {have}"
            )

    def __repr__(self) -> str:
        state = "available" if self.is_available else f"unavailable: {self.unavailable_reason}"
        return f"<{type(self).__name__} {self.name!r} for {self.device_type!r} ({state})>"


def find_backend(device_type: str) -> Backend | None:
    """The registered backend for ``device_type``, or None."""
    from . import plugins

    return plugins.backends().for_device_type(device_type)


def backend_for(ctx: Context) -> Backend:
    """The backend that runs ``ctx``; raises if none is registered or it cannot run."""
    from . import plugins

    backend = find_backend(ctx.device_type)
    if backend is None:
        registry = plugins.backends()
        served = sorted({r.value.device_type for r in registry.registrations()})
        raise UnknownNameError(
            f"no backend serves device type {ctx.device_type!r} (for {ctx}); registered "
            f"backends serve {', '.join(served) or 'nothing'}; install a backend package "
            f"(for GPUs: pip install 'dagnet[cuda]') and see `dagnet plugins`"
        )
    backend.check_device(ctx)
    return backend


def available_backends() -> list[Backend]:
    """Every registered backend that can run on this machine."""
    from . import plugins

    return [r.value for r in plugins.backends().registrations() if r.value.is_available]
