"""``pad``, NumPy's way, for the modes MXNet 1.9.1 has: ``constant``, ``edge``,
``reflect``, ``symmetric``, ``maximum`` and ``minimum``.

The axes are padded one after the other, as NumPy does (a later axis's padding sees the
earlier ones'), each by registered operators: ``constant`` joins blocks of the value,
``edge`` / ``reflect`` / ``symmetric`` gather (``take``) with source indices worked out
on the host from the sizes, ``maximum`` / ``minimum`` join the broadcast reduction.  So
the padded array is differentiable in ``x`` (the padding's own gradient is dropped for
``constant``, routed to the sources for the others).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as onp

from .. import ndarray as nd
from ..util import use_np_shape
from ._array import NumpyError, ndarray, wrap
from ._manipulation import _array, broadcast_to, concatenate
from ._reductions import max as _max
from ._reductions import min as _min

__all__ = ["pad"]

_MODES = ("constant", "edge", "reflect", "symmetric", "maximum", "minimum")


def _widths(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    """NumPy's ``pad_width`` forms (``n``, ``(n,)``, ``(before, after)``, one pair per
    axis) as one (before, after) pair per axis."""
    try:
        table = onp.broadcast_to(onp.asarray(pad_width, dtype=onp.int64), (ndim, 2))
    except ValueError:
        raise NumpyError(f"pad: pad_width {pad_width!r} does not fit an array of {ndim} "
                         f"dimension(s); give one (before, after) pair per axis") from None
    if (table < 0).any():
        raise NumpyError(f"pad: pad_width must not be negative, got {pad_width!r}")
    return [(int(b), int(e)) for b, e in table]


def _source(size: int, before: int, after: int, mode: str) -> onp.ndarray:
    """For each padded position along an axis of ``size``, the index it copies."""
    positions = onp.arange(-before, size + after)
    if mode == "edge" or size == 1:
        return onp.clip(positions, 0, size - 1)
    # reflect mirrors about the edge elements (period 2 (size - 1)), symmetric about the
    # edges themselves (period 2 size)
    period = 2 * (size - 1) if mode == "reflect" else 2 * size
    folded = positions % period
    if mode == "reflect":
        return onp.where(folded < size, folded, period - folded)
    return onp.where(folded < size, folded, period - 1 - folded)


def _pad_axis(x: ndarray, axis: int, before: int, after: int, mode: str,
              constant: Any) -> ndarray:
    size = x.shape[axis]
    if mode == "constant":
        from ._creation import full

        def block(width: int) -> ndarray:
            shape = list(x.shape)
            shape[axis] = width
            return full(tuple(shape), constant, x.dtype, ctx=x.context)

        return concatenate([*([block(before)] if before else []), x,
                            *([block(after)] if after else [])], axis=axis)
    if size == 0:
        raise NumpyError(f"pad: cannot extend the empty axis {axis} with mode {mode!r}; "
                         f"only 'constant' pads an empty axis")
    if mode in ("maximum", "minimum"):
        reduce = _max if mode == "maximum" else _min
        shape = list(x.shape)
        parts = []
        for width in (before, after):
            shape[axis] = width
            parts.append(broadcast_to(reduce(x, axis=axis, keepdims=True), tuple(shape))
                         if width else None)
        return concatenate([p for p in (parts[0], x, parts[1]) if p is not None], axis=axis)
    from ._creation import array

    index = array(_source(size, before, after, mode), dtype=onp.int64, ctx=x.context)
    return wrap(nd.take(x, index, axis=axis))


@use_np_shape
def pad(x: Any, pad_width: int | Sequence[Any] | None = None, mode: str = "constant",
        **kwargs: Any) -> ndarray:
    """``x`` padded by ``pad_width`` (``(before, after)`` per axis; NumPy's shorter forms
    broadcast) in ``mode``: ``constant`` (``constant_values``, default 0, in x's dtype),
    ``edge`` (the edge values), ``reflect`` (mirrored about the edge element),
    ``symmetric`` (mirrored about the edge), ``maximum`` / ``minimum`` (of the whole
    axis).  Padding is applied axis by axis, as NumPy does."""
    x = _array(x)
    if mode not in _MODES:
        raise NumpyError(f"pad: mode {mode!r} is not supported; expected one of "
                         f"{', '.join(_MODES)}")
    constant = kwargs.pop("constant_values", 0)
    if kwargs.get("reflect_type", "even") != "even":
        raise NumpyError(f"pad: reflect_type {kwargs['reflect_type']!r} is not supported; "
                         f"only 'even'")
    kwargs.pop("reflect_type", None)
    if kwargs.get("stat_length") is not None:
        raise NumpyError("pad: stat_length is not supported; maximum and minimum use the "
                         "whole axis")
    kwargs.pop("stat_length", None)
    if kwargs:
        raise NumpyError(f"pad: unexpected arguments {sorted(kwargs)} for mode {mode!r}")
    if pad_width is None:
        raise NumpyError("pad: pad_width is required")
    if not isinstance(constant, (int, float, onp.number, bool)):
        raise NumpyError("pad: constant_values must be one number (per-axis values are not "
                         "supported)")
    result = x
    for axis, (before, after) in enumerate(_widths(pad_width, x.ndim)):
        if before or after:
            result = _pad_axis(result, axis, before, after, mode, constant)
    return result if result is not x else x.copy()
