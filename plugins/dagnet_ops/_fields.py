"""Parameter fields the operator library shares beyond :mod:`dagnet.operator`'s own."""

from __future__ import annotations

import ast
from typing import Any

from dagnet.operator import REQUIRED, Field, Shape

__all__ = ["FloatTuple"]


class FloatTuple(Field):
    """A tuple of floats, written ``(0.5, 0.25)`` or as one number (MXNet's
    ``Tuple<float>`` and ``Tuple<double>``)."""

    def __init__(self, default: Any = REQUIRED, desc: str = "", *, optional: bool = False):
        super().__init__(Shape, default, desc, optional=optional)

    def _convert(self, value: Any) -> Any:
        if isinstance(value, str):
            value = ast.literal_eval(value.strip() or "()")
        if isinstance(value, (int, float)):
            return (float(value),)
        return tuple(float(v) for v in value)
