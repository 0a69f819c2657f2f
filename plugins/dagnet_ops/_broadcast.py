"""Broadcasting in gradients, shared by the operator families: an operand broadcast in the
forward pass gets its gradient summed back to its own shape."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["reduce_to"]


def reduce_to(xp: Any, value: Any, shape: Sequence[int]) -> Any:
    """Sum ``value`` over the axes that broadcasting added or stretched from ``shape``."""
    shape = tuple(shape)
    if value.shape == shape:
        return value
    lead = value.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and value.shape[lead + i] != 1)
    return value.sum(axis=axes).reshape(shape)
