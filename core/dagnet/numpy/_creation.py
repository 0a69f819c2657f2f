"""Creating ``dagnet.numpy`` arrays: ``array``, ``zeros``, ``ones``, ``full``, ``empty``,
``arange``, ``linspace``, ``eye`` and the ``*_like`` functions.

As in MXNet's ``mx.np``, the default dtype is float32: for Python lists and
scalars and for the shape-given constructors; a numpy array or an NDArray keeps
its own dtype.  Scalar (``()``) and zero-size shapes are always allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as onp

from .. import ndarray as nd
from ..ndarray import NDArray
from ._array import DEFAULT_DTYPE, NumpyError, OrderNotSupportedError, ndarray, wrap

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "arange", "linspace", "eye",
           "identity", "zeros_like", "ones_like", "full_like", "empty_like"]


def _shape(shape: Any) -> tuple[int, ...]:
    if shape is None:
        return ()
    if isinstance(shape, (int, onp.integer)):
        shape = (int(shape),)
    try:
        dims = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"a shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise NumpyError(f"negative dimensions are not allowed: {dims}")
    return dims


def _dtype(dtype: Any) -> onp.dtype:
    return DEFAULT_DTYPE if dtype is None else onp.dtype(dtype)


def _check_order(order: str | None) -> None:
    if order not in (None, "C"):
        raise OrderNotSupportedError(f"order={order!r}: dagnet.numpy arrays are C-ordered only "
                                     f"('C')")


def empty(shape: int | Sequence[int], dtype: Any = None, order: str = "C",
          ctx: Any = None) -> ndarray:
    """A new array of ``shape`` whose values are not initialised (float32 unless
    ``dtype``)."""
    _check_order(order)
    return wrap(nd.empty(_shape(shape), ctx=ctx, dtype=_dtype(dtype)))


def full(shape: int | Sequence[int], fill_value: Any, dtype: Any = None, order: str = "C",
         ctx: Any = None, out: ndarray | None = None) -> ndarray:
    """A new array (or ``out``) of ``shape`` filled with ``fill_value`` (float32 unless
    ``dtype``; an array ``fill_value`` is broadcast)."""
    target = out if out is not None else empty(shape, dtype, order, ctx)
    if isinstance(fill_value, NDArray):
        target[...] = fill_value
    elif target.size:
        nd.full(target.shape, fill_value, out=target if target.ndim else
                NDArray.reshape(target, (1,)))
    return target


def zeros(shape: int | Sequence[int], dtype: Any = None, order: str = "C",
          ctx: Any = None) -> ndarray:
    """A new array of zeros (float32 unless ``dtype``)."""
    return full(shape, 0, dtype, order, ctx)


def ones(shape: int | Sequence[int], dtype: Any = None, order: str = "C",
         ctx: Any = None) -> ndarray:
    """A new array of ones (float32 unless ``dtype``)."""
    return full(shape, 1, dtype, order, ctx)


def array(object: Any, dtype: Any = None, ctx: Any = None) -> ndarray:  # noqa: A002
    """A new array with the values of ``object``: an array (its dtype kept unless
    ``dtype``), a numpy array (likewise), a nested list or a scalar (float32 unless
    ``dtype``)."""
    if isinstance(object, NDArray):
        ctx = ctx if ctx is not None else object.context
        result = empty(object.shape, dtype if dtype is not None else object.dtype, ctx=ctx)
        result[...] = object
        return result
    if isinstance(object, (onp.ndarray, onp.generic)):
        host = onp.array(object, dtype=dtype)
    else:
        host = onp.array(object, dtype=_dtype(dtype))
    if host.dtype.kind == "O":
        raise TypeError(f"cannot make an array from {type(object).__name__} {object!r:.80}")
    result = empty(host.shape, host.dtype, ctx=ctx)
    if host.size:
        target = result if result.ndim else NDArray.reshape(result, (1,))
        NDArray.__setitem__(target, slice(None), host.reshape(target.shape))
    return result


def asarray(a: Any, dtype: Any = None, ctx: Any = None) -> ndarray:
    """``a`` as an np array: itself when it is one (of ``dtype``), else :func:`array`."""
    if isinstance(a, ndarray) and (dtype is None or onp.dtype(dtype) == a.dtype) \
            and (ctx is None or ctx == a.context):
        return a
    return array(a, dtype=dtype, ctx=ctx)


def arange(start: float, stop: float | None = None, step: float = 1, dtype: Any = None,
           ctx: Any = None) -> ndarray:
    """Evenly spaced values in ``[start, stop)`` by ``step`` (float32 unless ``dtype``);
    ``arange(n)`` counts from 0."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise NumpyError("arange: step must not be 0")
    return array(onp.arange(start, stop, step).astype(_dtype(dtype)), ctx=ctx)


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, ctx: Any = None) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (included unless
    ``endpoint=False``), float32 unless ``dtype``; ``retstep`` also returns the step."""
    if axis != 0:
        raise NumpyError("linspace: only axis=0 is supported")
    if not isinstance(num, (int, onp.integer)) or num < 0:
        raise NumpyError(f"linspace: num must be a non-negative integer, got {num!r}")
    values, step = onp.linspace(start, stop, int(num), endpoint=endpoint, retstep=True)
    kind = _dtype(dtype)
    if kind.kind in "iu":  # NumPy rounds down to an integer dtype (towards -inf)
        values = onp.floor(values)
    result = array(values.astype(kind), ctx=ctx)
    return (result, step) if retstep else result


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None,  # noqa: N803
        ctx: Any = None) -> ndarray:
    """An ``N x M`` matrix (square when ``M`` is None) with ones on diagonal ``k``."""
    rows, columns = int(N), int(N if M is None else M)
    if rows < 0 or columns < 0:
        raise NumpyError(f"eye: negative dimensions are not allowed: N={rows}, M={columns}")
    return array(onp.eye(rows, columns, int(k), dtype=_dtype(dtype)), ctx=ctx)


def identity(n: int, dtype: Any = None, ctx: Any = None) -> ndarray:
    """The ``n x n`` identity matrix."""
    return eye(n, dtype=dtype, ctx=ctx)


def _like(a: Any, dtype: Any, fill: Any) -> ndarray:
    if not isinstance(a, NDArray):
        a = array(a)
    kind = a.dtype if dtype is None else onp.dtype(dtype)
    if fill is None:
        return empty(a.shape, kind, ctx=a.context)
    return full(a.shape, fill, kind, ctx=a.context)


def zeros_like(a: Any, dtype: Any = None, order: str = "C", ctx: Any = None,
               out: Any = None) -> ndarray:
    """Zeros of ``a``'s shape and dtype (or ``dtype``)."""
    return _like(a, dtype, 0)


def ones_like(a: Any, dtype: Any = None, order: str = "C", ctx: Any = None,
              out: Any = None) -> ndarray:
    """Ones of ``a``'s shape and dtype (or ``dtype``)."""
    return _like(a, dtype, 1)


def full_like(a: Any, fill_value: Any, dtype: Any = None, order: str = "C", ctx: Any = None,
              out: Any = None) -> ndarray:
    """``fill_value`` in ``a``'s shape and dtype (or ``dtype``)."""
    return _like(a, dtype, fill_value)


def empty_like(prototype: Any, dtype: Any = None, order: str = "C", subok: bool = False,
               shape: Any = None) -> ndarray:
    """An uninitialised array of ``prototype``'s shape and dtype (or ``dtype``)."""
    return _like(prototype, dtype, None)
