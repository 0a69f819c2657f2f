"""Reductions of ``dagnet.numpy``: ``sum``, ``prod``, ``mean``, ``max``, ``min``,
``argmax``, ``argmin``, ``std``, ``var``, ``all``, ``any``.

Each is the registered operator of the same name; the result has NumPy's shape
(a reduction over every axis is 0-d) and MXNet's ``mx.np`` dtype: sums and
products keep the input's type (booleans sum to int64), means of integers are
float32, arg-reductions give int64.
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as onp

from .. import ndarray as nd
from ..ndarray import NDArray
from ._array import DEFAULT_DTYPE, NumpyError, _reshaped, ndarray, wrap, zeros_from
from ._elementwise import as_operand, not_equal, square, subtract, true_divide
from ._manipulation import normalize_axis, ravel

__all__ = ["sum", "prod", "mean", "max", "min", "amax", "amin", "argmax", "argmin", "std",
           "var", "all", "any"]

_INT64 = onp.dtype(onp.int64)


def _array(a: Any) -> ndarray:
    a = as_operand(a)
    if not isinstance(a, NDArray):
        from ._creation import array

        a = array(a)
    return a


def _axes(a: ndarray, axis: Any) -> tuple[int, ...] | None:
    if axis is None:
        return None
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(normalize_axis(x, a.ndim) for x in items)
    if len(set(axes)) != len(axes):
        raise NumpyError(f"duplicate value in axis {axis}")
    return axes


def _result_shape(shape: tuple[int, ...], axes: tuple[int, ...] | None,
                  keepdims: bool) -> tuple[int, ...]:
    if axes is None:
        axes = tuple(range(len(shape)))
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _out(result: ndarray, out: ndarray | None) -> ndarray:
    if out is None:
        return result
    out[...] = result
    return out


def _reduce(op: str, a: ndarray, axis: Any, keepdims: bool, dtype: onp.dtype) -> ndarray:
    """Operator ``op`` over ``axis`` of ``a`` (cast to ``dtype`` first), NumPy's shape."""
    axes = _axes(a, axis)
    if a.dtype != dtype:
        a = a.astype(dtype)
    shape = _result_shape(a.shape, axes, keepdims)
    if axes == ():
        return a.copy()
    if a.ndim == 0:
        a, axes = NDArray.reshape(a, (1,)), None
    params: dict[str, Any] = {"keepdims": bool(keepdims)}
    if axes is not None:
        params["axis"] = axes
    return _reshaped(nd.invoke(op, [a], params), shape)


def _sum_dtype(a: ndarray, dtype: Any) -> onp.dtype:
    if dtype is not None:
        return onp.dtype(dtype)
    return _INT64 if a.dtype.kind == "b" else a.dtype


def sum(a: Any, axis: Any = None, dtype: Any = None, out: ndarray | None = None,  # noqa: A001
        keepdims: bool = False, initial: Any = None) -> ndarray:
    """The sum of ``a`` over ``axis`` (every axis when None)."""
    a = _array(a)
    result = _reduce("sum", a, axis, keepdims, _sum_dtype(a, dtype))
    if initial is not None:
        result = result + initial
    return _out(result, out)


def prod(a: Any, axis: Any = None, dtype: Any = None, out: ndarray | None = None,
         keepdims: bool = False, initial: Any = None) -> ndarray:
    """The product of ``a`` over ``axis`` (every axis when None)."""
    a = _array(a)
    result = _reduce("prod", a, axis, keepdims, _sum_dtype(a, dtype))
    if initial is not None:
        result = result * initial
    return _out(result, out)


def mean(a: Any, axis: Any = None, dtype: Any = None, out: ndarray | None = None,
         keepdims: bool = False) -> ndarray:
    """The mean of ``a`` over ``axis`` (float32 for integer and boolean ``a``)."""
    a = _array(a)
    kind = onp.dtype(dtype) if dtype is not None else \
        a.dtype if a.dtype.kind == "f" else DEFAULT_DTYPE
    if kind.kind in "biu" and a.dtype.kind == "f":  # averaged as floats, then converted
        return _out(_reduce("mean", a, axis, keepdims, a.dtype).astype(kind), out)
    if kind == onp.float16:  # accumulated in float32, as MXNet does
        return _out(_reduce("mean", a, axis, keepdims, onp.dtype(onp.float32)).astype(kind),
                    out)
    return _out(_reduce("mean", a, axis, keepdims, kind), out)


def max(a: Any, axis: Any = None, out: ndarray | None = None,  # noqa: A001
        keepdims: bool = False) -> ndarray:
    """The largest value of ``a`` over ``axis``."""
    a = _array(a)
    if a.size == 0:
        raise NumpyError("max: zero-size array to reduction operation maximum which has no "
                         "identity")
    return _out(_reduce("max", a, axis, keepdims, a.dtype), out)


def min(a: Any, axis: Any = None, out: ndarray | None = None,  # noqa: A001
        keepdims: bool = False) -> ndarray:
    """The smallest value of ``a`` over ``axis``."""
    a = _array(a)
    if a.size == 0:
        raise NumpyError("min: zero-size array to reduction operation minimum which has no "
                         "identity")
    return _out(_reduce("min", a, axis, keepdims, a.dtype), out)


amax = max
amin = min


def _arg(op: str, a: Any, axis: int | None, out: ndarray | None) -> ndarray:
    a = _array(a)
    if axis is None:
        a, axis = ravel(a), 0
    if a.ndim == 0:  # a scalar is its own axis 0 (or -1): index 0
        if axis not in (0, -1):
            raise NumpyError(f"{op}: axis {axis} is out of bounds for an array of dimension 0")
        a, axis = NDArray.reshape(a, (1,)), 0
        shape: tuple[int, ...] = ()
    else:
        axis = normalize_axis(axis, a.ndim)
        shape = a.shape[:axis] + a.shape[axis + 1:]
    if a.shape[axis] == 0:
        raise NumpyError(f"attempt to get {op} of an empty sequence")
    if a.size == 0:
        return _out(zeros_from(shape, _INT64, a.context, a), out)
    result = _reshaped(nd.invoke(op, [a], {"axis": axis, "keepdims": False}), shape)
    return _out(result.astype(_INT64), out)


def argmax(a: Any, axis: int | None = None, out: ndarray | None = None) -> ndarray:
    """The index (int64) of the largest value along ``axis`` (of the flattened ``a`` when
    None)."""
    return _arg("argmax", a, axis, out)


def argmin(a: Any, axis: int | None = None, out: ndarray | None = None) -> ndarray:
    """The index (int64) of the smallest value along ``axis``."""
    return _arg("argmin", a, axis, out)


def var(a: Any, axis: Any = None, dtype: Any = None, out: ndarray | None = None, ddof: int = 0,
        keepdims: bool = False) -> ndarray:
    """The variance of ``a`` over ``axis``: the mean squared deviation, divided by
    ``N - ddof`` instead of ``N``."""
    a = _array(a)
    kind = onp.dtype(dtype) if dtype is not None else \
        a.dtype if a.dtype.kind == "f" else DEFAULT_DTYPE
    a = a.astype(kind, copy=False)
    axes = _axes(a, axis)
    count = a.size if axes is None else int(onp.prod([a.shape[i] for i in axes]))
    deviation = subtract(a, mean(a, axis=axes, keepdims=True))
    result = mean(square(deviation), axis=axes, keepdims=keepdims)
    if ddof:
        result = true_divide(result * count, builtins.max(count - ddof, 0))
    return _out(result, out)


def std(a: Any, axis: Any = None, dtype: Any = None, out: ndarray | None = None, ddof: int = 0,
        keepdims: bool = False) -> ndarray:
    """The standard deviation of ``a`` over ``axis`` (the square root of :func:`var`)."""
    return _out(wrap(nd.sqrt(var(a, axis, dtype, None, ddof, keepdims))), out)


def _truth(a: Any, axis: Any, keepdims: bool, op: str) -> ndarray:
    a = _array(a)
    flags = not_equal(a, 0).astype(DEFAULT_DTYPE)
    if flags.size == 0:
        shape = _result_shape(a.shape, _axes(a, axis), keepdims)
        from ._creation import full

        return full(shape, op == "min", dtype=onp.bool_, ctx=a.context)
    return _reduce(op, flags, axis, keepdims, DEFAULT_DTYPE).astype(onp.bool_)


def all(a: Any, axis: Any = None, out: ndarray | None = None,  # noqa: A001
        keepdims: bool = False) -> ndarray:
    """Whether every element of ``a`` (over ``axis``) is true (non-zero)."""
    return _out(_truth(a, axis, keepdims, "min"), out)


def any(a: Any, axis: Any = None, out: ndarray | None = None,  # noqa: A001
        keepdims: bool = False) -> ndarray:
    """Whether some element of ``a`` (over ``axis``) is true (non-zero)."""
    return _out(_truth(a, axis, keepdims, "max"), out)
