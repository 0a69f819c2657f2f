"""Helpers shared by the tensor operator modules: writing results, shape and type
rules, the backward-op record, and the few kernels where numpy and cupy differ."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    XP,
    Op,
    OpReqType,
    Params,
    assign,
    merge_dtype,
    merge_shape,
    shape_is_known,
)

from .._broadcast import reduce_to

__all__ = [
    "put", "is_int", "known", "shape_error", "same_shape", "broadcast_shape", "reduce_to",
    "backward_op", "with_attrs", "norm_axis", "fixed_out_type", "first_input_type",
    "stable_argsort", "scatter_add", "shape_str", "c_divide", "python_mod",
    "python_mod_reference",
]


# -- writing results -------------------------------------------------------------------
def put(out: Any, req: OpReqType, value: Any) -> None:
    """``assign`` that first casts ``value`` to ``out``'s dtype and shape.

    MXNet computes in the output's type: an int32 ``sqrt`` truncates, a
    comparison writes 1/0 in the input's dtype.  The cast makes ``add``
    work for those too (numpy refuses ``int += float`` in place).
    """
    if req is OpReqType.NULL:
        return
    if hasattr(value, "dtype"):
        if value.dtype != out.dtype:
            value = value.astype(out.dtype)
        if value.shape != out.shape and value.size == out.size:
            value = value.reshape(out.shape)
    assign(out, req, value)


def is_int(dtype: Any) -> bool:
    """Integer or boolean dtype (where MXNet's kernels use integer arithmetic)."""
    return np.dtype(dtype).kind in "iub"


# -- shapes ----------------------------------------------------------------------------
def known(shape: Any) -> bool:
    """Shape fully known: not None and no unknown dimension (negative, or 0 unless NumPy
    shape semantics are on; :func:`dagnet.operator.shape_is_known`)."""
    return shape_is_known(shape)


def shape_str(shape: Any) -> str:
    return "unknown" if shape is None else str(tuple(shape))


def shape_error(op: str, message: str) -> ShapeError:
    return ShapeError(f"operator {op!r}: {message}")


def same_shape(op: str, names: Sequence[str]) -> Callable:
    """Every input and the output share one shape, inferred both ways; errors name the argument."""
    def infer(attrs: Params, ins: list, outs: list) -> tuple[list, list]:
        merged = None
        for label, shape in [*zip(names, ins), *(("output", s) for s in outs)]:
            try:
                merged = merge_shape(merged, shape, "")
            except ShapeError:
                raise shape_error(op, f"argument {label!r} has shape {shape_str(shape)} but "
                                      f"{shape_str(merged)} was inferred from the others "
                                      f"(element-wise operands must have equal shapes; "
                                      f"use broadcast_* to broadcast)") from None
        return [merged] * len(ins), [merged] * len(outs)

    return infer


def broadcast_shape(op: str, lhs: Sequence[int], rhs: Sequence[int],
                    names: tuple[str, str] = ("lhs", "rhs")) -> tuple[int, ...]:
    """numpy broadcasting of two shapes (0 = unknown dim); a ShapeError names both."""
    ndim = max(len(lhs), len(rhs))
    a = (1,) * (ndim - len(lhs)) + tuple(lhs)
    b = (1,) * (ndim - len(rhs)) + tuple(rhs)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif x == 0 or y == 0:
            out.append(max(x, y))
        else:
            raise shape_error(op, f"operands could not be broadcast together: {names[0]} has shape "
                                  f"{tuple(lhs)}, {names[1]} has shape {tuple(rhs)} "
                                  f"(dimension {i - ndim}: {x} vs {y})")
    return tuple(out)


def norm_axis(op: str, axis: int, ndim: int, what: str = "axis", *, extra: int = 0) -> int:
    """``axis`` in ``[-ndim-extra, ndim+extra)`` made non-negative (``extra=1`` for expand_dims)."""
    size = ndim + extra
    if not -size <= axis < size:
        raise shape_error(op, f"{what}={axis} is out of range for an input with {ndim} "
                              f"dimension(s) (valid: {-size} to {size - 1})")
    return axis % size if size else 0



# -- types -----------------------------------------------------------------------------
def fixed_out_type(get: Callable[[Params, list], Any]) -> Callable:
    """An infer_type whose output dtypes are ``get(attrs, in_types)`` (a dtype or a list)."""
    def infer(attrs: Params, ins: list, outs: list) -> tuple[list, list]:
        want = get(attrs, ins)
        wants = want if isinstance(want, list) else [want] * len(outs)
        merged = [merge_dtype(w, o, "output") if w is not None else o for w, o in zip(wants, outs)]
        return ins, merged

    return infer


def first_input_type(n_typed: int = 1) -> Callable:
    """The first ``n_typed`` inputs and every output share a dtype; later inputs
    (indices, conditions) keep theirs, defaulting to the shared one."""
    def infer(attrs: Params, ins: list, outs: list) -> tuple[list, list]:
        merged = None
        for t in ins[:n_typed] + outs:
            merged = merge_dtype(merged, t, "operand")
        rest = [t if t is not None else merged for t in ins[n_typed:]]
        return [merged] * n_typed + rest, [merged] * len(outs)

    return infer


# -- records ---------------------------------------------------------------------------
def backward_op(forward: str, params: type[Params], num_inputs: Any, num_outputs: Any,
                kernel: Callable, what: str = "") -> Op:
    """The ``_backward_<forward>`` record: reads what the forward's ``Gradient.uses`` names,
    writes one gradient per forward input."""
    return Op(f"_backward_{forward}", description=what or f"Gradient of {forward}.", params=params,
              num_inputs=num_inputs, num_outputs=num_outputs, compute={XP: kernel},
              is_backward=True, forward_op=forward)


def with_attrs(params: type[Params], name: str, fn: Callable) -> Callable:
    """A Domain reference taking the suite's raw params dict; ``fn`` gets them parsed."""
    def reference(raw: dict, *inputs: np.ndarray) -> Any:
        return fn(params.parse(name, raw), *inputs)

    return reference


# -- kernels that differ between numpy and cupy ---------------------------------------------
def stable_argsort(xp: Any, x: Any, axis: int, ascending: bool = True) -> Any:
    """Argsort keeping equal elements in index order, descending included (as MXNet's topk)."""
    def asc(a: Any) -> Any:
        # cupy sorts stably always and accepts no `kind`; numpy needs it asked for
        return xp.argsort(a, axis=axis) if xp.__name__.startswith("cupy") else \
            xp.argsort(a, axis=axis, kind="stable")

    if ascending:
        return asc(x)
    n = x.shape[axis]
    return (n - 1) - xp.flip(asc(xp.flip(x, axis=axis)), axis=axis)


def scatter_add(xp: Any, target: Any, index: Any, values: Any) -> None:
    """``target[index] += values`` accumulating repeated indices (``add.at``; cupy before
    13 spells it ``cupyx.scatter_add``)."""
    at = getattr(xp.add, "at", None)
    if at is not None:
        at(target, index, values)
    else:  # pragma: no cover - old cupy only
        import cupyx

        cupyx.scatter_add(target, index, values)


def c_divide(xp: Any, a: Any, b: Any) -> Any:
    """``a / b``; integers divide as in C, truncating toward zero (MXNet's)."""
    if a.dtype.kind in "iub":
        return xp.trunc(a / b)
    return a / b


def c_power(xp: Any, a: Any, b: Any) -> Any:
    """``a ** b``; an integer base with a negative exponent goes through double as in
    MXNet (``2 ** -1`` is 0; numpy refuses integer powers below zero)."""
    if a.dtype.kind in "iu" and getattr(b, "dtype", None) is not None and \
            b.dtype.kind in "iu" and bool((b < 0).any()):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return xp.power(a.astype(np.float64), b).astype(a.dtype)
    return xp.power(a, b)


def python_mod(xp: Any, a: Any, b: Any) -> Any:
    """``a mod b`` with Python's sign convention (MXNet's ``mshadow_op::mod``), 0 where
    ``b`` is 0; ``b`` may be a Python number (the ``_mod_scalar`` family)."""
    if not hasattr(b, "shape"):
        return xp.mod(a, b) if b != 0 else xp.zeros_like(a)
    zero = b == 0
    return xp.where(zero, 0, xp.mod(a, xp.where(zero, 1, b)))


def python_mod_reference(a: Any, b: Any) -> Any:
    """numpy's reference for :func:`python_mod`."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b == 0, 0.0, a - np.floor(a / b) * b)
