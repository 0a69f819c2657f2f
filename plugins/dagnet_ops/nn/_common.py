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

__all__ = [
    "known", "set_shape", "spatial", "erf", "scatter_add", "data_type", "reduce_to",
]


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


def reduce_to(xp: Any, value: Any, shape: tuple) -> Any:
    """Sum ``value`` over the axes that broadcasting added or stretched from ``shape``."""
    if value.shape == tuple(shape):
        return value
    lead = value.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(shape) if d == 1 and value.shape[lead + i] != 1)
    return value.sum(axis=axes).reshape(shape)


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
