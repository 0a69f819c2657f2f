"""Argument checks shared by the Python-side frontends (initializers, optimizers,
learning-rate schedulers): each names the owner, the argument and the value, and
says what would be accepted."""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from typing import Any

from ._errors import DagnetError, ParamError

__all__ = ["ArgumentTypeError", "choice", "integer", "real"]


class ArgumentTypeError(DagnetError, TypeError):
    """A constructor argument of the wrong type, e.g. ``Uniform(scale='big')``."""


def real(owner: str, name: str, value: Any, *, minimum: float | None = None,
         maximum: float | None = None, strict_minimum: bool = False) -> float:
    """``value`` as a float, after checking it is a real number within the bounds."""
    # bool is an int subclass, but `Uniform(True)` is always a mistake.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(
            f"{owner}: {name} must be a real number, got {value!r} "
            f"({type(value).__name__}); pass e.g. {name}=0.1")
    value = float(value)
    if minimum is not None and (value <= minimum if strict_minimum else value < minimum):
        relation = ">" if strict_minimum else ">="
        raise ParamError(f"{owner}: {name} must be {relation} {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ParamError(f"{owner}: {name} must be <= {maximum}, got {value}")
    return value


def integer(owner: str, name: str, value: Any, *, minimum: int | None = None) -> int:
    """``value`` as an int, after checking it is an integer (not a float) >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(
            f"{owner}: {name} must be an integer, got {value!r} ({type(value).__name__}); "
            f"pass e.g. {name}={int(value) if isinstance(value, float) else 1}")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ParamError(f"{owner}: {name} must be >= {minimum}, got {value}")
    return value


def choice(owner: str, name: str, value: Any, choices: Iterable[str]) -> str:
    """``value`` after checking it is one of ``choices``."""
    choices = list(choices)
    if value not in choices:
        expected = ", ".join(repr(c) for c in choices)
        raise ParamError(f"{owner}: {name}={value!r} is not supported; expected one of {expected}")
    return value
