"""Handles: the numbers MXNet's ctypes code holds for symbols and arrays (``sym.handle``,
``Symbol(handle)``, ``NDArray(handle=...)``), standing for dagnet's Python objects.

dagnet has no C library, so a handle is a key to this table (the object's ``id``).  An
object's own handle (``sym.handle``) names it while the object lives.  A handle the
emulated C entry points (``mxnet.base._LIB``) write to an output argument keeps its object
alive until a Python wrapper takes it (``Symbol(handle)``), as MXNet's wrappers take
ownership of the handles its library returns.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Any

from ._errors import DagnetError

__all__ = ["HandleError", "handle_of", "hand_out", "resolve"]

_lock = threading.Lock()
_live: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
_handed_out: dict[int, Any] = {}  # made by an entry point, not yet taken by a wrapper


class HandleError(DagnetError, ValueError):
    """A handle that names no live dagnet object, or one of another kind."""


def handle_of(obj: Any) -> int:
    """``obj``'s handle, valid while ``obj`` lives."""
    with _lock:
        _live[id(obj)] = obj
    return id(obj)


def hand_out(obj: Any) -> int:
    """A handle for ``obj``, made by an emulated C entry point: it keeps ``obj`` alive until
    :func:`resolve` takes it."""
    with _lock:
        _live[id(obj)] = obj
        _handed_out[id(obj)] = obj
    return id(obj)


def resolve(handle: Any, kind: type, what: str) -> Any:
    """The object of ``kind`` that ``handle`` (a ctypes ``c_void_p`` or an int) names;
    ``what`` names the caller in errors."""
    value = handle.value if isinstance(handle, ctypes.c_void_p) else handle
    if value is None:
        raise HandleError(f"{what}: the handle is empty (NULL); pass one an entry point wrote")
    if not isinstance(value, int):
        raise HandleError(f"{what}: expected a handle (ctypes.c_void_p) from dagnet, got "
                          f"{type(handle).__name__} {handle!r}")
    with _lock:
        obj = _handed_out.pop(value, None)
        if obj is None:
            obj = _live.get(value)
    if obj is None:
        raise HandleError(f"{what}: handle {value:#x} names no live dagnet object; handles "
                          f"come from .handle of a live object or from an output argument of "
                          f"mxnet.base._LIB's emulated entry points")
    if not isinstance(obj, kind):
        raise HandleError(f"{what}: handle {value:#x} names a {type(obj).__name__}, not a "
                          f"{kind.__name__}")
    return obj
