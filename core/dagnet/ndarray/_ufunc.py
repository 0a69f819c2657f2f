"""MXNet's two-argument helpers (``nd.maximum``, ``nd.add``, ``nd.equal`` ...): each takes
NDArrays or numbers on either side and picks the operator that fits.

Two NDArrays use the broadcasting operator (``broadcast_maximum``); an
NDArray and a number use the scalar operator (``_maximum_scalar``), with the
mirrored one when the number is on the left (``subtract(2, x)`` is
``_rminus_scalar``, ``greater(2, x)`` is ``_lesser_scalar``); two numbers are
computed in Python.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from . import _invoke
from ._ndarray import _NUMBER, NDArray

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "modulo", "power", "maximum",
    "minimum", "equal", "not_equal", "greater", "greater_equal", "lesser", "lesser_equal",
    "logical_and", "logical_or", "logical_xor", "hypot",
]


def _make(name: str, array_op: str, scalar_op: str, reflected_op: str,
          python: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def helper(lhs: Any, rhs: Any, out: NDArray | None = None) -> Any:
        if isinstance(lhs, NDArray):
            if isinstance(rhs, NDArray):
                return _invoke.invoke(array_op, [lhs, rhs], None, out)
            if isinstance(rhs, _NUMBER):
                return _invoke.invoke(scalar_op, [lhs], {"scalar": rhs}, out)
        elif isinstance(lhs, _NUMBER):
            if isinstance(rhs, NDArray):
                return _invoke.invoke(reflected_op, [rhs], {"scalar": lhs}, out)
            if isinstance(rhs, _NUMBER):
                return python(lhs, rhs)
        raise TypeError(f"{name}: expected NDArrays or numbers, got {type(lhs).__name__} and "
                        f"{type(rhs).__name__}")

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = (f"``{name}(lhs, rhs)`` elementwise with broadcasting: ``{array_op}`` for "
                      f"two NDArrays, ``{scalar_op}`` / ``{reflected_op}`` with a number.")
    return helper


def _compare(fn: Callable[[Any, Any], bool]) -> Callable[[Any, Any], int]:
    return lambda a, b: 1 if fn(a, b) else 0


add = _make("add", "broadcast_add", "_plus_scalar", "_plus_scalar", operator.add)
subtract = _make("subtract", "broadcast_sub", "_minus_scalar", "_rminus_scalar", operator.sub)
multiply = _make("multiply", "broadcast_mul", "_mul_scalar", "_mul_scalar", operator.mul)
divide = _make("divide", "broadcast_div", "_div_scalar", "_rdiv_scalar", operator.truediv)
true_divide = _make("true_divide", "broadcast_div", "_div_scalar", "_rdiv_scalar",
                    operator.truediv)
modulo = _make("modulo", "broadcast_mod", "_mod_scalar", "_rmod_scalar", operator.mod)
power = _make("power", "broadcast_power", "_power_scalar", "_rpower_scalar", operator.pow)
maximum = _make("maximum", "broadcast_maximum", "_maximum_scalar", "_maximum_scalar", max)
minimum = _make("minimum", "broadcast_minimum", "_minimum_scalar", "_minimum_scalar", min)
hypot = _make("hypot", "broadcast_hypot", "_hypot_scalar", "_hypot_scalar",
              lambda a, b: (a * a + b * b) ** 0.5)
equal = _make("equal", "broadcast_equal", "_equal_scalar", "_equal_scalar",
              _compare(operator.eq))
not_equal = _make("not_equal", "broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar",
                  _compare(operator.ne))
greater = _make("greater", "broadcast_greater", "_greater_scalar", "_lesser_scalar",
                _compare(operator.gt))
greater_equal = _make("greater_equal", "broadcast_greater_equal", "_greater_equal_scalar",
                      "_lesser_equal_scalar", _compare(operator.ge))
lesser = _make("lesser", "broadcast_lesser", "_lesser_scalar", "_greater_scalar",
               _compare(operator.lt))
lesser_equal = _make("lesser_equal", "broadcast_lesser_equal", "_lesser_equal_scalar",
                     "_greater_equal_scalar", _compare(operator.le))
logical_and = _make("logical_and", "broadcast_logical_and", "_logical_and_scalar",
                    "_logical_and_scalar", lambda a, b: 1 if (a and b) else 0)
logical_or = _make("logical_or", "broadcast_logical_or", "_logical_or_scalar",
                   "_logical_or_scalar", lambda a, b: 1 if (a or b) else 0)
logical_xor = _make("logical_xor", "broadcast_logical_xor", "_logical_xor_scalar",
                    "_logical_xor_scalar", lambda a, b: 1 if bool(a) != bool(b) else 0)
