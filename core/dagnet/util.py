"""``mxnet.util``: process-level helpers MXNet 1.x code calls.

dagnet reads its settings from Python (``dagnet.config`` and ``os.environ``), so
the environment MXNet's backend keeps apart from Python's is the same one here:
:func:`getenv` and :func:`setenv` read and change ``os.environ``.

NumPy semantics
---------------
MXNet 1.x has two switches for NumPy-compatible behaviour, both off by default
and both kept per thread, as MXNet keeps them:

* **NumPy shape** (:func:`set_np_shape`, :func:`np_shape`, :func:`use_np_shape`):
  with it off, legacy semantics hold: a ``0`` in a shape means "this
  dimension is unknown" and ``()`` means "the shape is unknown".  With it on,
  ``0`` is a real zero-size dimension, ``()`` is the shape of a scalar and
  ``-1`` marks an unknown dimension.  :func:`unknown_dim` gives the marker in
  force, and :func:`shape_is_known` / :func:`dim_is_known` read a shape
  under it.
* **NumPy array** (:func:`np_array`, :func:`use_np_array`): MXNet's flag for
  code written against ``mx.np``.  NumPy shape cannot be turned off while it
  is on (:func:`set_np` turns both on, :func:`reset_np` both off).
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ._errors import DagnetError

__all__ = [
    "dim_is_known",
    "getenv",
    "is_np_array",
    "is_np_shape",
    "is_np_shape_global",
    "np_array",
    "np_shape",
    "reset_np",
    "set_np",
    "set_np_shape",
    "setenv",
    "shape_is_known",
    "unknown_dim",
    "use_np",
    "use_np_array",
    "use_np_shape",
]

_F = TypeVar("_F")


class NumpySemanticsError(DagnetError, ValueError):
    """The NumPy switches were asked for a combination MXNet does not allow."""


def getenv(name: str) -> str | None:
    """The value of environment variable ``name``, or None when it is not set."""
    return os.environ.get(name)


def setenv(name: str, value: str | None) -> None:
    """Set environment variable ``name`` to ``value`` (None unsets it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


class _Switches(threading.local):
    """Each thread's NumPy switches; a new thread starts from the global ones."""

    np_shape_global = False

    def __init__(self) -> None:
        self.np_shape = _Switches.np_shape_global
        self.np_array = False


_switches = _Switches()

# MXNet's MXSetIsNumpyShape codes: 0 off (everywhere), 1 on in this thread, 2 on everywhere.
_OFF, _THREAD_LOCAL_ON, _GLOBAL_ON = 0, 1, 2


# -- NumPy shape ------------------------------------------------------------------------
def is_np_shape() -> bool:
    """Whether NumPy shape semantics are on in this thread: ``()`` is a scalar's
    shape, ``0`` a zero-size dimension and ``-1`` an unknown one."""
    return _switches.np_shape


def is_np_shape_global() -> bool:
    """Whether NumPy shape semantics were turned on for every thread (``set_np_shape(2)``)."""
    return _Switches.np_shape_global


def set_np_shape(active: bool | int) -> bool:
    """Turn NumPy shape semantics on or off; returns the previous state.

    ``True`` (or 1) turns them on in this thread, 2 turns them on for every
    thread including ones started later, ``False`` (0) turns them off in this
    thread and for threads started later.  Turning them off while NumPy array
    semantics are on is refused: call :func:`reset_np` to turn both off.
    """
    code = int(active)
    if code not in (_OFF, _THREAD_LOCAL_ON, _GLOBAL_ON):
        raise NumpySemanticsError(f"set_np_shape(active={active!r}): expected True/False "
                                  "(or MXNet's codes 0 off, 1 this thread, 2 every thread)")
    if code == _OFF and _switches.np_array:
        raise NumpySemanticsError("cannot turn NumPy shape semantics off while NumPy array "
                                  "semantics are on; call mx.util.reset_np() to turn both off")
    previous = _switches.np_shape
    if code == _GLOBAL_ON:
        _Switches.np_shape_global = True
    elif code == _OFF:
        _Switches.np_shape_global = False
    _switches.np_shape = code != _OFF
    return previous


class _Scope:
    """A ``with`` scope that sets one switch and restores it on exit."""

    def __init__(self, setter: Callable[[bool], bool], active: bool | None) -> None:
        self._setter = setter
        self._active = active
        self._previous: bool | None = None

    def __enter__(self) -> _Scope:
        if self._active is not None:
            self._previous = self._setter(self._active)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._active is not None and self._previous != self._active:
            self._setter(bool(self._previous))


class _NumpyShapeScope(_Scope):
    """MXNet's name for the NumPy-shape scope: ``_is_np_shape`` is what it sets."""

    def __init__(self, is_np_shape: bool | None) -> None:
        super().__init__(set_np_shape, is_np_shape)
        self._is_np_shape = is_np_shape


def np_shape(active: bool = True) -> _Scope:
    """A ``with`` scope in which NumPy shape semantics are ``active`` (on by default)."""
    return _NumpyShapeScope(active)


def _decorate(func: _F, scope: Callable[[], _Scope], name: str) -> _F:
    """Run ``func`` (or every method and property of class ``func``, inherited ones
    included, as MXNet decorates them: ``initialize`` of a ``@use_np`` block makes
    ``mx.np`` parameters) inside ``scope()``; an inherited method is wrapped on ``func``
    only, its base class keeps its own."""
    if inspect.isclass(func):
        for attr in dir(func):
            member = inspect.getattr_static(func, attr)
            if isinstance(member, property):
                setattr(func, attr, property(
                    _decorate(member.fget, scope, name) if member.fget else None,
                    _decorate(member.fset, scope, name) if member.fset else None,
                    _decorate(member.fdel, scope, name) if member.fdel else None,
                    member.__doc__))
            elif isinstance(member, (staticmethod, classmethod)):
                setattr(func, attr, type(member)(_decorate(member.__func__, scope, name)))
            elif inspect.isfunction(member):
                setattr(func, attr, _decorate(member, scope, name))
        return func
    if not callable(func):
        raise TypeError(f"{name} decorates classes and callables, not {type(func).__name__}")

    @functools.wraps(func)
    def scoped(*args: Any, **kwargs: Any) -> Any:
        with scope():
            return func(*args, **kwargs)

    return scoped  # type: ignore[return-value]


def use_np_shape(func: _F) -> _F:
    """Decorator: ``func`` (a function, or every method and property of a class)
    runs with NumPy shape semantics on."""
    return _decorate(func, lambda: np_shape(True), "use_np_shape")


# -- NumPy array ------------------------------------------------------------------------
def is_np_array() -> bool:
    """Whether NumPy array semantics are on in this thread."""
    return _switches.np_array


def _set_np_array(active: bool) -> bool:
    """Turn NumPy array semantics on or off in this thread; returns the previous state."""
    previous = _switches.np_array
    _switches.np_array = bool(active)
    return previous


class _NumpyArrayScope(_Scope):
    """MXNet's name for the NumPy-array scope: ``_is_np_array`` is what it sets."""

    def __init__(self, is_np_array: bool | None) -> None:
        super().__init__(_set_np_array, is_np_array)
        self._is_np_array = is_np_array


def np_array(active: bool = True) -> _Scope:
    """A ``with`` scope in which NumPy array semantics are ``active``."""
    return _NumpyArrayScope(active)


def use_np_array(func: _F) -> _F:
    """Decorator: ``func`` (a function or class) runs with NumPy array semantics on."""
    return _decorate(func, lambda: np_array(True), "use_np_array")


class _BothScope:
    """NumPy shape and array semantics on together, restored on exit."""

    def __enter__(self) -> _BothScope:
        self._previous = (_switches.np_shape, _switches.np_array)
        set_np_shape(True)
        _set_np_array(True)
        return self

    def __exit__(self, *exc: object) -> None:
        shape, array = self._previous
        _set_np_array(array)
        set_np_shape(shape)


def use_np(func: _F) -> _F:
    """Decorator: ``func`` (a function or class) runs with NumPy shape and array
    semantics on (MXNet's ``use_np_shape(use_np_array(func))``)."""
    return _decorate(func, _BothScope, "use_np")


def set_np(shape: bool = True, array: bool = True) -> None:
    """Set both switches at once; array semantics need shape semantics."""
    if array and not shape:
        raise NumpySemanticsError("set_np(shape=False, array=True): NumPy array semantics "
                                  "need NumPy shape semantics")
    _set_np_array(array)
    set_np_shape(shape)


def reset_np() -> None:
    """Turn NumPy shape and array semantics off (MXNet 1.x's default)."""
    set_np(shape=False, array=False)


# -- reading shapes under the switch in force --------------------------------------------
def unknown_dim() -> int:
    """The marker of an unknown dimension: ``-1`` with NumPy shape semantics on, else ``0``."""
    return -1 if _switches.np_shape else 0


def dim_is_known(dim: int) -> bool:
    """Whether ``dim`` is a known size under the semantics in force."""
    return dim >= 0 if _switches.np_shape else dim > 0


def shape_is_known(shape: tuple[int, ...] | None) -> bool:
    """Whether ``shape`` is fully known under the semantics in force: None is unknown;
    without NumPy shape semantics so is ``()`` and any shape with a 0."""
    if shape is None:
        return False
    if not _switches.np_shape and len(shape) == 0:
        return False
    return all(dim_is_known(d) for d in shape)
