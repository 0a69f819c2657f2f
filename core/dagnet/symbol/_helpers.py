"""MXNet's ``mx.sym`` helpers that are not one operator each: the two-argument
functions (``maximum``, ``pow`` ...) that take symbols or numbers on either side,
and the constructors of constant symbols (``zeros``, ``ones``, ``full``,
``arange``, ``eye``).

Two symbols use the element-wise operator (``_Maximum``), a symbol and a number
the scalar one (``_maximum_scalar``), mirrored when the number is on the left
(``pow(2, x)`` is ``_rpower_scalar``); two numbers are computed in Python.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ._frontend import function
from ._symbol import Symbol

__all__ = ["pow", "power", "maximum", "minimum", "hypot", "zeros", "ones", "full", "arange",
           "eye"]

_NUMBER = (int, float, np.integer, np.floating)


def _apply(name: str, ops: tuple[str, str, str], python: Callable[[Any, Any], Any],
           left: Any, right: Any) -> Any:
    """``left (op) right`` through the operator of ``ops`` (element-wise, scalar,
    reflected scalar) that fits the operands' kinds."""
    array_op, scalar_op, reflected_op = ops
    if isinstance(left, Symbol):
        if isinstance(right, Symbol):
            return function(array_op)(left, right)
        if isinstance(right, _NUMBER):
            return function(scalar_op)(left, scalar=right)
    elif isinstance(left, _NUMBER):
        if isinstance(right, Symbol):
            return function(reflected_op)(right, scalar=left)
        if isinstance(right, _NUMBER):
            return python(left, right)
    raise TypeError(f"{name}: expected Symbols or numbers, got {type(left).__name__} and "
                    f"{type(right).__name__}")


_POWER = ("_Power", "_power_scalar", "_rpower_scalar")


def pow(base: Any, exp: Any) -> Any:  # noqa: A001 - MXNet's name
    """``base ** exp`` element-wise, for symbols or numbers on either side."""
    return _apply("pow", _POWER, operator.pow, base, exp)


def power(base: Any, exp: Any) -> Any:
    """``base ** exp`` element-wise (the same as :func:`pow`)."""
    return _apply("power", _POWER, operator.pow, base, exp)


def maximum(left: Any, right: Any) -> Any:
    """The element-wise maximum, for symbols or numbers on either side."""
    return _apply("maximum", ("_Maximum", "_maximum_scalar", "_maximum_scalar"), max, left,
                  right)


def minimum(left: Any, right: Any) -> Any:
    """The element-wise minimum, for symbols or numbers on either side."""
    return _apply("minimum", ("_Minimum", "_minimum_scalar", "_minimum_scalar"), min, left,
                  right)


def hypot(left: Any, right: Any) -> Any:
    """``sqrt(left**2 + right**2)`` element-wise, for symbols or numbers on either side."""
    return _apply("hypot", ("_Hypot", "_hypot_scalar", "_hypot_scalar"), math.hypot, left,
                  right)


def _dtype(dtype: Any) -> str:
    return np.dtype(np.float32 if dtype is None else dtype).name


def zeros(shape: Any, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A symbol of zeros of ``shape`` (``dtype`` default float32)."""
    return function("_zeros")(shape=shape, dtype=_dtype(dtype), **kwargs)


def ones(shape: Any, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A symbol of ones of ``shape`` (``dtype`` default float32)."""
    return function("_ones")(shape=shape, dtype=_dtype(dtype), **kwargs)


def full(shape: Any, val: float, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A symbol of ``shape`` filled with ``val`` (``dtype`` default float32)."""
    return function("_full")(shape=shape, value=val, dtype=_dtype(dtype), **kwargs)


def arange(start: float, stop: float | None = None, step: float = 1.0, repeat: int = 1,
           infer_range: bool = False, name: str | None = None, dtype: Any = None) -> Symbol:
    """Evenly spaced values in ``[start, stop)`` (``[0, start)`` without ``stop``), each
    repeated ``repeat`` times."""
    return function("_arange")(start=start, stop=stop, step=step, repeat=repeat,
                               infer_range=infer_range, name=name, dtype=_dtype(dtype))


def eye(N: int, M: int = 0, k: int = 0, dtype: Any = None, **kwargs: Any) -> Symbol:
    """An ``N`` x ``M`` (``M`` 0: ``N``) matrix with ones on diagonal ``k``."""
    return function("_eye")(N=N, M=M, k=k, dtype=_dtype(dtype), **kwargs)
