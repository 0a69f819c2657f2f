"""``mx.np._internal``: the operator functions MXNet reaches under this name from
``F.np._internal`` (the boolean-mask assignments behind ``x[mask] = v``)."""

from __future__ import annotations

from typing import Any

from ._array import ndarray

__all__ = ["boolean_mask_assign_scalar", "boolean_mask_assign_tensor"]


def _assign(data: ndarray, mask: ndarray, value: Any, start_axis: int,
            out: ndarray | None) -> ndarray:
    target = out if out is not None else data.copy()
    if out is not None and out is not data:
        target[...] = data
    start_axis = int(start_axis)
    target[(slice(None),) * start_axis + (mask,) if start_axis else mask] = value
    return target


def boolean_mask_assign_scalar(data: ndarray, mask: ndarray, value: float, start_axis: int = 0,
                               out: ndarray | None = None) -> ndarray:
    """``data`` with the positions ``mask`` selects (from axis ``start_axis``) set to the
    number ``value``; written into ``out`` when given (it may be ``data``)."""
    return _assign(data, mask, float(value), start_axis, out)


def boolean_mask_assign_tensor(data: ndarray, mask: ndarray, value: ndarray,
                               start_axis: int = 0, out: ndarray | None = None) -> ndarray:
    """``data`` with the positions ``mask`` selects (from axis ``start_axis``) set to
    ``value`` (broadcast as NumPy does); written into ``out`` when given."""
    return _assign(data, mask, value, start_axis, out)
