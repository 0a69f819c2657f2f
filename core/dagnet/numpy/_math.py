"""More element-wise math of ``dagnet.numpy``: the bit-wise and integer functions
(``bitwise_and`` ... ``bitwise_not``/``invert``, ``lcm``), ``arctan2``, ``copysign``,
``ldexp``, the tests ``isnan`` ... ``isfinite``, rounding to decimals (``around``,
``round``, ``round_``), ``nan_to_num`` and ``polyval``.

Each runs the registered ``_npi_*`` operator of the same meaning (``polyval`` composes
multiplications and additions), so it records under autograd and traces into a
hybridized block.  Dtypes follow MXNet's ``mx.np``: the result keeps the operands'
dtype (``ldexp`` of int32 arrays is int32, its values truncated), a Python scalar takes
the array's dtype, and the tests give ``bool``.  With only scalars the answer is NumPy's.
The ufuncs take NumPy's ufunc keywords as :func:`~dagnet.numpy.add` does.
"""

from __future__ import annotations

from typing import Any

import numpy as onp

from .. import ndarray as nd
from ..ndarray import NDArray
from ._array import NumpyError, NumpyTypeError, ndarray, wrap
from ._elementwise import (
    _cast,
    _scalar_dtype,
    _with_out,
    add,
    as_operand,
    check_ufunc_kwargs,
    multiply,
    promote,
)

__all__ = [
    "arctan2", "copysign", "ldexp", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "invert", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "around",
    "round", "round_", "nan_to_num", "polyval",
]


def _scalar_array(value: Any, like: ndarray, dtype: onp.dtype) -> ndarray:
    """A Python scalar as a 0-d array of ``dtype`` beside ``like``."""
    from ._creation import full

    return full((), value, dtype=dtype, ctx=like.context)


def _broadcast(op: str, name: str, x1: Any, x2: Any) -> Any:
    """Operator ``op`` on ``x1`` and ``x2`` broadcast, in the dtype MXNet's ``mx.np`` gives
    (the arrays' promoted one; a scalar takes the array's)."""
    x1, x2 = as_operand(x1), as_operand(x2)
    left, right = isinstance(x1, NDArray), isinstance(x2, NDArray)
    if not (left or right):
        return getattr(onp, name)(x1, x2)
    if left and right:
        dtype = promote(x1.dtype, x2.dtype)
    else:
        array, scalar = (x1, x2) if left else (x2, x1)
        dtype = _scalar_dtype(array.dtype, scalar)
        if left:
            x2 = _scalar_array(x2, x1, dtype)
        else:
            x1 = _scalar_array(x1, x2, dtype)
    return wrap(nd.invoke(op, [_cast(x1, dtype), _cast(x2, dtype)], {}))


def _binary_ufunc(name: str, doc: str) -> Any:
    op = f"_npi_{name}"

    def function(x1: Any, x2: Any, out: ndarray | None = None, **kwargs: Any) -> Any:
        check_ufunc_kwargs(name, kwargs)
        return _with_out(_broadcast(op, name, x1, x2), out)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"{doc}\n\nThe ``{op}`` operator, broadcast."
    return function


arctan2 = _binary_ufunc("arctan2", "The angle of the point ``(x2, x1)``, in [-pi, pi]; "
                                   "differentiable in both.")
copysign = _binary_ufunc("copysign", "``x1``'s magnitude with ``x2``'s sign; differentiable "
                                     "in ``x1``.")
ldexp = _binary_ufunc("ldexp", "``x1 * 2**x2`` (``x2`` may be fractional, as in MXNet; "
                               "integers truncate); differentiable in both.")
lcm = _binary_ufunc("lcm", "The least common multiple of integers ``|x1|`` and ``|x2|``.")
bitwise_and = _binary_ufunc("bitwise_and", "``x1 & x2`` of integers (or booleans).")
bitwise_or = _binary_ufunc("bitwise_or", "``x1 | x2`` of integers (or booleans).")
bitwise_xor = _binary_ufunc("bitwise_xor", "``x1 ^ x2`` of integers (or booleans).")


def bitwise_not(x: Any, out: ndarray | None = None, **kwargs: Any) -> Any:
    """``~x`` of integers (two's complement) or booleans (logical not); the
    ``_npi_bitwise_not`` operator."""
    check_ufunc_kwargs("bitwise_not", kwargs)
    x = as_operand(x)
    if not isinstance(x, NDArray):
        return onp.bitwise_not(x)
    return _with_out(wrap(nd.invoke("_npi_bitwise_not", [x], {})), out)


invert = bitwise_not


def _test(name: str, what: str) -> Any:
    op = f"_npi_{name}"

    def function(x: Any, out: ndarray | None = None, **kwargs: Any) -> Any:
        check_ufunc_kwargs(name, kwargs)
        x = as_operand(x)
        if not isinstance(x, NDArray):
            return getattr(onp, name)(x)
        if out is not None and (not isinstance(out, NDArray) or out.dtype != onp.bool_):
            raise NumpyTypeError(f"{name}: the out parameter must be a boolean array, got "
                                 f"{getattr(out, 'dtype', type(out).__name__)}")
        return _with_out(wrap(nd.invoke(op, [x], {})), out)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"Whether each element of ``x`` is {what}, a bool array (the ``{op}`` "
                        f"operator); ``out`` must be a bool array.")
    return function


isnan = _test("isnan", "NaN")
isinf = _test("isinf", "+inf or -inf")
isposinf = _test("isposinf", "+inf")
isneginf = _test("isneginf", "-inf")
isfinite = _test("isfinite", "finite")


def around(x: Any, decimals: int = 0, out: ndarray | None = None, **kwargs: Any) -> Any:
    """``x`` rounded to ``decimals`` places (to the left of the point when negative), halves
    to the even neighbour as NumPy rounds; integers stay integers.  The ``_npi_around``
    operator (zero gradient)."""
    check_ufunc_kwargs("around", kwargs)
    x = as_operand(x)
    if not isinstance(x, NDArray):
        return onp.around(x, decimals)
    return _with_out(wrap(nd.invoke("_npi_around", [x], {"decimals": int(decimals)})), out)


round = around  # noqa: A001 - NumPy's name
round_ = around


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None, **kwargs: Any) -> Any:
    """``x`` with NaN as ``nan`` and +-inf as ``posinf``/``neginf`` (by default the dtype's
    extreme finite values); integer arrays unchanged.  With ``copy=False`` the result is
    written into ``x``, which is returned.  Gradient: ``dy`` where ``x`` is finite, else
    zero (the ``_npi_nan_to_num`` operator)."""
    if kwargs:
        raise NumpyTypeError(f"nan_to_num() got unexpected keyword argument(s) "
                             f"{', '.join(kwargs)}")
    x = as_operand(x)
    if not isinstance(x, NDArray):
        return onp.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    params = {"copy": bool(copy), "nan": float(nan),
              "posinf": None if posinf is None else float(posinf),
              "neginf": None if neginf is None else float(neginf)}
    result = wrap(nd.invoke("_npi_nan_to_num", [x], params))
    if copy:
        return result
    x[...] = result
    return x


def polyval(p: Any, x: Any) -> ndarray:
    """The polynomial with coefficients ``p`` (1-d, highest power first) at ``x``, by
    Horner's rule: ``(...(p[0] x + p[1]) x + ...) x + p[-1]``.  Composed of multiplications
    and additions, so differentiable in ``p`` and ``x``; integer inputs stay integers."""
    p, x = as_operand(p), as_operand(x)
    if not isinstance(p, NDArray):
        raise NumpyTypeError(f"polyval: p must be an array, got {type(p).__name__}")
    if p.ndim != 1:
        raise NumpyError(f"polyval: p has to be a 1-d array, got shape {p.shape}")
    if not isinstance(x, NDArray):
        x = _scalar_array(x, p, p.dtype)
    dtype = promote(p.dtype, x.dtype)
    p, x = _cast(p, dtype), _cast(x, dtype)
    from ._creation import zeros_like

    if p.shape[0] == 0:
        return zeros_like(x)
    value = p[0]
    for i in range(1, p.shape[0]):
        value = add(multiply(value, x), p[i])
    if p.shape[0] == 1:  # a constant: p[0] in x's shape
        value = add(zeros_like(x), value)
    return value
