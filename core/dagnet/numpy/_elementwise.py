"""Element-wise functions of ``dagnet.numpy``: NumPy's broadcasting binary functions and
the unary math functions, each mapped to the registered operator of the same meaning.

Type rules are MXNet's ``mx.np``: two arrays of different dtypes are computed in
the float one's type when one is a float (``int32 + float32 -> float32``), else
in NumPy's promoted type; a Python scalar takes the array's type (``int32 * 2.5``
stays ``int32``; a boolean array with an int gives int64, with a float the
default float32); true division of integers gives float32; comparisons give
``bool``.  With two scalars the answer is NumPy's.
"""

from __future__ import annotations

from typing import Any

import numpy as onp

from .. import ndarray as nd
from ..ndarray import NDArray
from ._array import (
    DEFAULT_DTYPE,
    NumpyError,
    NumpyTypeError,
    OptionNotSupportedError,
    is_scalar,
    ndarray,
    wrap,
)

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod",
    "remainder", "power", "maximum", "minimum", "hypot", "equal", "not_equal", "greater",
    "greater_equal", "less", "less_equal", "logical_and", "logical_or", "logical_xor",
    "UNARY", "check_ufunc_kwargs", "require_array",
]

# name: (operator on two arrays, operator with a scalar on the right, on the left)
_BINARY = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
    "subtract": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    "multiply": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
    "true_divide": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
    "mod": ("broadcast_mod", "_mod_scalar", "_rmod_scalar"),
    "power": ("broadcast_power", "_power_scalar", "_rpower_scalar"),
    "maximum": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar"),
    "minimum": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar"),
    "hypot": ("broadcast_hypot", "_hypot_scalar", "_hypot_scalar"),
    "equal": ("broadcast_equal", "_equal_scalar", "_equal_scalar"),
    "not_equal": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "greater": ("broadcast_greater", "_greater_scalar", "_lesser_scalar"),
    "greater_equal": ("broadcast_greater_equal", "_greater_equal_scalar",
                      "_lesser_equal_scalar"),
    "less": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar"),
    "less_equal": ("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar"),
    "logical_and": ("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar"),
    "logical_or": ("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar"),
    "logical_xor": ("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar"),
}
_BOOL_RESULT = {"equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
                "logical_and", "logical_or", "logical_xor"}


def promote(a: onp.dtype, b: onp.dtype) -> onp.dtype:
    """The dtype MXNet's ``mx.np`` computes ``a (op) b`` in, for two arrays."""
    if a == b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.kind == "f" and b.kind != "f":
        return a
    if b.kind == "f" and a.kind != "f":
        return b
    return onp.promote_types(a, b)


def _scalar_dtype(array_dtype: onp.dtype, scalar: Any) -> onp.dtype:
    """The dtype of ``array (op) scalar``: the array's, but a boolean array takes the
    scalar's kind."""
    if array_dtype.kind != "b" or isinstance(scalar, (bool, onp.bool_)):
        return array_dtype
    if isinstance(scalar, (int, onp.integer)):
        return onp.dtype(onp.int64)
    return DEFAULT_DTYPE


def as_operand(value: Any) -> Any:
    """An np array for an NDArray, a list or a numpy array; scalars as they are."""
    if isinstance(value, ndarray) or is_scalar(value):
        return value
    if isinstance(value, NDArray):
        from ._array import as_np_ndarray

        return as_np_ndarray(value)
    if isinstance(value, (list, tuple, onp.ndarray)):
        from ._creation import array

        return array(value)
    raise TypeError(f"dagnet.numpy: operand of type {type(value).__name__} is not supported; "
                    f"use an array, a list or a number")


def require_array(value: Any, function: str, what: str = "a") -> ndarray:
    """``value`` as an np array (an NDArray, list or numpy array converted); a scalar is a
    :class:`NumpyTypeError` naming ``function`` and the argument ``what``."""
    value = as_operand(value)
    if not isinstance(value, NDArray):
        raise NumpyTypeError(f"{function}: {what} must be an array, got {type(value).__name__}")
    return value


def _cast(array: ndarray, dtype: onp.dtype) -> ndarray:
    return array if array.dtype == dtype else array.astype(dtype)


def _apply(name: str, lhs: Any, rhs: Any) -> Any:
    """``lhs (name) rhs`` by MXNet's np rules (see the module docstring)."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    l_array, r_array = isinstance(lhs, NDArray), isinstance(rhs, NDArray)
    if not (l_array or r_array):  # two scalars: NumPy's answer
        return getattr(onp, name)(lhs, rhs)
    array_op, scalar_op, reflected_op = _BINARY[name]
    if l_array and r_array:
        dtype = promote(lhs.dtype, rhs.dtype)
        if name == "true_divide" and dtype.kind != "f":
            dtype = DEFAULT_DTYPE
        result = nd.invoke(array_op, [_cast(lhs, dtype), _cast(rhs, dtype)], {})
    else:
        array, scalar = (lhs, rhs) if l_array else (rhs, lhs)
        dtype = _scalar_dtype(array.dtype, scalar)
        if name == "true_divide" and dtype.kind != "f":
            dtype = DEFAULT_DTYPE
        op = scalar_op if l_array else reflected_op
        result = nd.invoke(op, [_cast(array, dtype)], {"scalar": _plain(scalar)})
    result = wrap(result)
    if name in _BOOL_RESULT and result.dtype != onp.bool_:
        result = result.astype(onp.bool_)
    return result


def _plain(scalar: Any) -> Any:
    if isinstance(scalar, (bool, onp.bool_)):
        return float(scalar)
    if isinstance(scalar, onp.generic):
        return scalar.item()
    return scalar


def _with_out(result: Any, out: ndarray | None) -> Any:
    if out is None:
        return result
    if not isinstance(out, NDArray):
        raise TypeError(f"out must be a dagnet.numpy.ndarray, got {type(out).__name__}")
    out[...] = result
    return out


# NumPy's ufunc keywords and their defaults: a ufunc accepts each at its default; MXNet's
# mx.np implements no other value
_UFUNC_DEFAULTS = {"where": True, "casting": "same_kind", "order": "K", "dtype": None,
                   "subok": True}
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_UFUNC_DTYPES = ("int8", "uint8", "int32", "int64", "float16", "float32", "float64")


def _legal_ufunc_option(key: str, value: Any) -> bool:
    """Whether NumPy knows ``key=value`` (so that refusing it is 'not implemented')."""
    if key == "where":
        return True
    if key == "casting":
        return isinstance(value, str) and value in _CASTINGS
    if key == "order":
        return isinstance(value, str)
    if key == "subok":
        return isinstance(value, bool)
    if key == "dtype":
        try:
            return isinstance(value, (str, type)) and onp.dtype(value).name in _UFUNC_DTYPES
        except TypeError:
            return False
    return False


def check_ufunc_kwargs(name: str, kwargs: dict[str, Any]) -> None:
    """Refuse the ufunc keywords ``name`` cannot honour, as MXNet's ``mx.np`` does: an
    unknown keyword or an unknown value is a :class:`NumpyTypeError`, a NumPy option other
    than its default an :class:`OptionNotSupportedError` (``where=False``,
    ``casting='safe'``, ``order='C'``, ``dtype=int8``, ``subok=False``)."""
    for key, value in kwargs.items():
        if key not in _UFUNC_DEFAULTS:
            raise NumpyTypeError(f"{key} is an invalid keyword to function {name!r}; "
                                 f"it takes out= and {', '.join(_UFUNC_DEFAULTS)}")
        default = _UFUNC_DEFAULTS[key]
        if value is default or (type(value) is type(default) and value == default):
            continue
        if _legal_ufunc_option(key, value):
            raise OptionNotSupportedError(f"{name}: {key}={value!r} is not implemented; "
                                          f"only the default {key}={default!r} is")
        raise NumpyTypeError(f"{name}: {key}={value!r} is not understood")


def _binary_function(name: str, doc: str) -> Any:
    def function(x1: Any, x2: Any, out: ndarray | None = None, **kwargs: Any) -> Any:
        check_ufunc_kwargs(name, kwargs)
        return _with_out(_apply(name, x1, x2), out)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


add = _binary_function("add", "``x1 + x2``, broadcast.")
subtract = _binary_function("subtract", "``x1 - x2``, broadcast.")
multiply = _binary_function("multiply", "``x1 * x2``, broadcast.")
true_divide = _binary_function("true_divide",
                               "``x1 / x2``, broadcast (integers give float32).")
divide = true_divide
mod = _binary_function("mod", "The remainder of ``x1 / x2`` (sign of ``x2``), broadcast.")
remainder = mod
power = _binary_function("power", "``x1 ** x2``, broadcast.")
maximum = _binary_function("maximum", "The larger of ``x1`` and ``x2``, element-wise.")
minimum = _binary_function("minimum", "The smaller of ``x1`` and ``x2``, element-wise.")
hypot = _binary_function("hypot", "``sqrt(x1**2 + x2**2)``, element-wise.")
equal = _binary_function("equal", "``x1 == x2`` as a bool array.")
not_equal = _binary_function("not_equal", "``x1 != x2`` as a bool array.")
greater = _binary_function("greater", "``x1 > x2`` as a bool array.")
greater_equal = _binary_function("greater_equal", "``x1 >= x2`` as a bool array.")
less = _binary_function("less", "``x1 < x2`` as a bool array.")
less_equal = _binary_function("less_equal", "``x1 <= x2`` as a bool array.")
logical_and = _binary_function("logical_and", "``x1 and x2`` element-wise, a bool array.")
logical_or = _binary_function("logical_or", "``x1 or x2`` element-wise, a bool array.")
logical_xor = _binary_function("logical_xor", "``x1 xor x2`` element-wise, a bool array.")


def floor_divide(x1: Any, x2: Any, out: ndarray | None = None) -> Any:
    """``x1 // x2``: the floor of the quotient, in the operands' promoted dtype."""
    x1, x2 = as_operand(x1), as_operand(x2)
    if not isinstance(x1, NDArray) and not isinstance(x2, NDArray):
        return onp.floor_divide(x1, x2)
    dtypes = [v.dtype if isinstance(v, NDArray) else None for v in (x1, x2)]
    known = [d for d in dtypes if d is not None]
    dtype = known[0] if len(known) == 1 else promote(*known)
    if dtype.kind == "b":
        raise NumpyError("floor_divide: boolean arrays cannot be divided; cast them first")
    wide = onp.dtype(onp.float64) if dtype.kind in "iu" else dtype
    a = x1.astype(wide) if isinstance(x1, NDArray) else x1
    b = x2.astype(wide) if isinstance(x2, NDArray) else x2
    quotient = wrap(nd.floor(_apply("true_divide", a, b)))
    return _with_out(_cast(quotient, dtype), out)


# NumPy's unary functions and the operators that compute them.
UNARY = {
    "abs": "abs", "absolute": "abs", "negative": "negative", "exp": "exp", "expm1": "expm1",
    "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p", "sqrt": "sqrt",
    "cbrt": "cbrt", "square": "square", "reciprocal": "reciprocal", "sin": "sin",
    "cos": "cos", "tan": "tan", "arcsin": "arcsin", "arccos": "arccos", "arctan": "arctan",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "arcsinh": "arcsinh",
    "arccosh": "arccosh", "arctanh": "arctanh", "degrees": "degrees", "rad2deg": "degrees",
    "radians": "radians", "deg2rad": "radians", "floor": "floor", "ceil": "ceil",
    "trunc": "trunc", "rint": "rint", "fix": "fix", "sign": "sign",
    "logical_not": "logical_not",
}


def _unary_function(name: str, op_name: str) -> Any:
    def function(x: Any, out: ndarray | None = None, **kwargs: Any) -> Any:
        check_ufunc_kwargs(name, kwargs)
        x = as_operand(x)
        if not isinstance(x, NDArray):
            return getattr(onp, name)(x)
        result = wrap(nd.invoke(op_name, [x], {}))
        if name == "logical_not" and result.dtype != onp.bool_:
            result = result.astype(onp.bool_)
        return _with_out(result, out)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"NumPy's ``{name}``, element-wise (the ``{op_name}`` operator)."
    return function


for _name, _op in UNARY.items():
    globals()[_name] = _unary_function(_name, _op)
    __all__.append(_name)
del _name, _op
