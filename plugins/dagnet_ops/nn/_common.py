"""Helpers shared by the neural-network operators: shape bookkeeping, layer
parameters written MXNet's way (``stride=()`` means ones), and the few
functions numpy and cupy spell differently."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import merge_dtype, merge_shape

from .._broadcast import reduce_to
from .._threads import each, pieces, sample_spans, threads_for

__all__ = [
    "known", "set_shape", "spatial", "erf", "scatter_add", "data_type", "reduce_to",
    "threads_for", "each", "sample_spans", "pieces", "channel_last", "to_channel_first",
    "to_channel_last", "layout_shape", "times_transposed", "transposed_product_pays",
    "derived_once",
]


def derived_once(ctx: Any, positions: Sequence[int], derive: Any, *key: Any) -> Any:
    """``derive()``, kept in the running node's state (``ctx.state``) and given again until
    one of the inputs at ``positions`` is written or ``key`` changes (a kernel's prepared
    weights: derived once per bound graph and set of parameters); derived at every call
    where there is no node state (an imperative call)."""
    state = ctx.state
    if state is None:
        return derive()
    versions = (state.versions(positions), key)
    held = state.cache.get(derived_once)
    if held is None or held[0] != versions:
        held = state.cache[derived_once] = (versions, derive())
    return held[1]


def known(shape: Any) -> bool:
    """Whether ``shape`` is fully known (not None, no 0 dimension)."""
    return shape is not None and all(int(d) > 0 for d in shape)


def set_shape(shapes: list, index: int, shape: Any, op: str, names: Sequence[str],
              kind: str = "input") -> None:
    """Merge ``shape`` into ``shapes[index]``; a conflict names the operator and the argument."""
    if shape is None:
        return
    label = f"operator {op!r}, {kind} {names[index]!r}" if index < len(names) else \
        f"operator {op!r}, {kind} {index}"
    shapes[index] = merge_shape(shapes[index], tuple(int(d) for d in shape), label)


def spatial(value: tuple, ndim: int, fill: int, op: str, name: str) -> tuple:
    """A per-spatial-dimension parameter: ``()`` means ``fill`` everywhere; otherwise it
    must have one entry per kernel dimension."""
    if not value:
        return (fill,) * ndim
    if len(value) != ndim:
        raise ShapeError(
            f"operator {op!r}: {name}={tuple(value)} has {len(value)} dimensions but the kernel "
            f"has {ndim}; give one value per spatial dimension")
    return tuple(int(v) for v in value)


def channel_last(layout: str | None) -> bool:
    """Whether ``layout`` (``NWC``, ``NHWC``, ``NDHWC``, ...) puts the channels last."""
    return layout is not None and len(layout) > 2 and layout.endswith("C")


def to_channel_first(xp: Any, a: Any) -> Any:
    """``(N, *spatial, C)`` as a contiguous ``(N, C, *spatial)`` array."""
    return xp.ascontiguousarray(xp.moveaxis(a, -1, 1))


def to_channel_last(xp: Any, a: Any) -> Any:
    """``(N, C, *spatial)`` viewed as ``(N, *spatial, C)`` (no copy)."""
    return xp.moveaxis(a, 1, -1)


def layout_shape(shape: Sequence[int], layout: str | None) -> tuple:
    """A channel-first ``shape`` ``(N, C, *spatial)`` in ``layout``'s axis order."""
    shape = tuple(shape)
    if channel_last(layout):
        return (shape[0], *shape[2:], shape[1])
    return shape


def erf(xp: Any, x: Any) -> Any:
    """The error function elementwise (numpy has none; cupy's lives in cupyx)."""
    if xp is np:
        return np.frompyfunc(math.erf, 1, 1)(x).astype(x.dtype)
    from cupyx.scipy import special

    return special.erf(x)


def scatter_add(xp: Any, target: Any, index: Any, values: Any) -> None:
    """``target[index[i]] += values[i]`` with repeated indices accumulating."""
    at = getattr(xp.add, "at", None)
    if at is not None:
        at(target, index, values)
        return
    import cupyx

    cupyx.scatter_add(target, index, values)



def data_type(label_inputs: Sequence[int] = ()) -> Any:
    """Type rule: inputs and outputs share the data's dtype, except label inputs, which
    take it only when unknown (labels may be given as integers)."""

    def infer(attrs: Any, ins: list, outs: list) -> tuple[list, list]:
        merged = None
        for i, t in enumerate(ins):
            if i not in label_inputs:
                merged = merge_dtype(merged, t, f"input {i}")
        for t in outs:
            merged = merge_dtype(merged, t, "output")
        new_ins = [t if i in label_inputs and t is not None else merged
                   for i, t in enumerate(ins)]
        return new_ins, [merged] * len(outs)

    return infer


# OpenBLAS multiplies a few rows by a large transposed weight, X W^T, about twice as
# slowly as it computes the same product as W X^T (batch 8, 784x512 weight: 200 against
# 110 us; 20 rows by an 800x800 weight: 1.1 against 0.5 ms); from 64 rows on the two run
# alike.
_FEW_ROWS = 32
_LARGE_WEIGHT = 1 << 17


def transposed_product_pays(xp: Any, x: Any, w: Any) -> bool:
    """Whether ``x @ w.T`` is faster computed as ``(w @ x.T).T``: on numpy, for a matrix
    ``x`` of few rows and a large ``w``."""
    return xp is np and x.shape[0] <= _FEW_ROWS and w.size >= _LARGE_WEIGHT


def times_transposed(xp: Any, x: Any, w: Any) -> Any:
    """``x @ w.T`` for a matrix ``x``, in the faster form (:func:`transposed_product_pays`;
    the result is then a transposed view)."""
    if transposed_product_pays(xp, x, w):
        return xp.matmul(w, x.T).T
    return xp.matmul(x, w.T)
