"""Devices: ``dagnet.cpu()``, ``dagnet.gpu(i)`` and the :class:`Context` they return."""

from __future__ import annotations

import operator
import threading
import warnings

from ._errors import ContextError

__all__ = ["Context", "ContextError", "cpu", "cpu_pinned", "gpu", "num_gpus",
           "current_context", "set_current_context"]

# Each thread has its own stack of ``with ctx:`` devices, as MXNet's default context is
# thread-local: a worker thread entering ``with gpu(1):`` must not move other threads' work.
_defaults = threading.local()


def _default_stack() -> list[Context]:
    stack = getattr(_defaults, "stack", None)
    if stack is None:
        stack = _defaults.stack = []
    return stack


class _ContextMeta(type):
    """Gives the class MXNet's deprecated ``Context.default_ctx`` (the calling thread's
    current context, readable and settable on the class)."""

    @property
    def default_ctx(cls) -> Context:
        warnings.warn("Context.default_ctx is deprecated, as in MXNet: use "
                      "mx.context.current_context() (and mx.test_utils.set_default_context "
                      "to change it)", DeprecationWarning, stacklevel=2)
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, ctx: Context) -> None:
        warnings.warn("Context.default_ctx is deprecated, as in MXNet: use "
                      "mx.test_utils.set_default_context", DeprecationWarning, stacklevel=2)
        set_current_context(ctx)


class Context(metaclass=_ContextMeta):
    """A device: a type (``'cpu'`` or ``'gpu'``, or a plugin backend's) and an id.

    Contexts compare and hash by value, print as MXNet does (``cpu(0)``) and,
    like MXNet's, work as ``with`` blocks that set the calling thread's default
    device.  A bad device type or id raises :class:`~dagnet.ContextError`.
    """

    __slots__ = ("device_type", "device_id")
    # MXNet's numeric device types (what its files and C API use)
    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}

    def __init__(self, device_type: str | Context, device_id: int = 0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        if not isinstance(device_type, str) or not device_type:
            raise ContextError(
                f"device type must be a non-empty string such as 'cpu' or 'gpu', "
                f"got {type(device_type).__name__} {device_type!r}")
        try:
            index = None if isinstance(device_id, bool) else operator.index(device_id)
        except TypeError:
            index = None
        if index is None or index < 0:
            raise ContextError(
                f"device id for {device_type!r} must be an integer >= 0 (as in dagnet.cpu(0) "
                f"or dagnet.gpu(1)), got {type(device_id).__name__} {device_id!r}")
        self.device_type = device_type
        self.device_id = index

    @property
    def device_typeid(self) -> int:
        """MXNet's number for the device type; a plugin backend's own type has none."""
        try:
            return Context.devstr2type[self.device_type]
        except KeyError:
            raise ContextError(f"device type {self.device_type!r} is a plugin backend's and "
                               f"has no MXNet device type number") from None

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
        _default_stack().append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _default_stack().pop()


def cpu(device_id: int = 0) -> Context:
    """The CPU context (MXNet's ``mx.cpu()``)."""
    return Context("cpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """MXNet's page-locked host memory context (host memory here, served by the CPU
    backend)."""
    return Context("cpu_pinned", device_id)


def gpu(device_id: int = 0) -> Context:
    """A GPU context; using it needs an available ``gpu`` backend (``dagnet[cuda]``)."""
    return Context("gpu", device_id)


def current_context() -> Context:
    """The calling thread's innermost ``with ctx:`` device, or ``cpu(0)``."""
    stack = _default_stack()
    return stack[-1] if stack else cpu()


def set_current_context(ctx: Context) -> None:
    """Make ``ctx`` the calling thread's current context: inside a ``with other:`` block
    it replaces ``other`` until the block ends; outside any block it stays until set
    again (what MXNet's ``test_utils.set_default_context`` does)."""
    if not isinstance(ctx, Context):
        raise TypeError(f"set_current_context takes a Context such as dagnet.cpu(), got "
                        f"{type(ctx).__name__} {ctx!r}")
    stack = _default_stack()
    if stack:
        stack[-1] = ctx
    else:
        stack.append(ctx)


def num_gpus() -> int:
    """How many GPUs the registered ``gpu`` backend can use (0 when it is unavailable)."""
    from .backend import find_backend

    backend = find_backend("gpu")
    return backend.num_devices() if backend is not None and backend.is_available else 0
