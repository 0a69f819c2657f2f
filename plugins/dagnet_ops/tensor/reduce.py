"""Reductions (MXNet's ``broadcast_reduce_op_*.cc``): ``sum``, ``mean``, ``prod``,
``nansum``, ``nanprod``, ``max``, ``min``, ``norm``, ``argmax``, ``argmin``,
``argmax_channel``.

MXNet 1.x quirks kept:

- ``axis=None`` and ``axis=()`` both reduce every axis; ``exclude=True``
  reduces the axes *not* listed (with ``()`` still every axis).
- A reduction to no dimensions returns shape ``(1,)``, never ``()``
  (``sum(ones((2, 3)))`` has shape ``(1,)``).
- The output keeps the input's dtype: integer sums wrap, an integer
  ``mean`` truncates, and ``argmax``/``argmin`` return indices in the input's
  dtype (float32 indices for float32 data).
- ``max``/``min`` send the gradient to every element tied with the extreme;
  ``prod``'s gradient is ``out / x`` (NaN at a zero element, as MXNet).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dagnet.operator import (
    XP,
    Case,
    ComposedGradient,
    Domain,
    DType,
    Field,
    Gradient,
    NoParams,
    Op,
    Params,
    Shape,
    ZeroGradient,
    merge_shape,
)
from dagnet.util import is_np_shape

from . import _sampling as S
from . import _second_order as second_order
from ._common import backward_op, fixed_out_type, norm_axis, put, shape_error, with_attrs

Fn = Callable[..., Any]


class ReduceAxesParam(Params):
    axis = Field(Shape, None, "The axis or axes along which to perform the reduction; None or () "
                              "reduces all axes; negative values count from the end.")
    keepdims = Field(bool, False, "If this is set to True, the reduced axes are left in the "
                                  "result as dimension with size one.")
    exclude = Field(bool, False, "Whether to perform reduction on axis that are NOT in axis "
                                 "instead.")


def reduce_axes(op: str, axis: Sequence[int] | None, ndim: int, exclude: bool = False) -> tuple:
    """The sorted, non-negative axes reduced (MXNet's rules for None, () and exclude)."""
    if not axis:
        return tuple(range(ndim))
    axes = [norm_axis(op, a, ndim) for a in axis]
    if len(set(axes)) != len(axes):
        raise shape_error(op, f"reduction axes {tuple(axis)} have duplicates")
    if exclude:
        axes = [i for i in range(ndim) if i not in axes]
    return tuple(sorted(axes))


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> tuple:
    """The output shape; ``(1,)`` when every dimension is reduced away (MXNet 1.x)."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes) or (1,)


def _axes_of(op: str, attrs: Params, ndim: int) -> tuple:
    return reduce_axes(op, attrs.axis, ndim, getattr(attrs, "exclude", False))


def _infer(op: str) -> Fn:
    def infer(attrs, ins, outs):
        if ins[0] is None:
            return ins, outs
        axes = _axes_of(op, attrs, len(ins[0]))
        if op in ("max", "min") and is_np_shape() and any(ins[0][a] == 0 for a in axes):
            raise shape_error(op, f"cannot take the {op}imum over a zero-size axis of input "
                                  f"{tuple(ins[0])}: it has no identity (axes {axes})")
        out = reduced_shape(ins[0], axes, attrs.keepdims)
        try:  # an unknown dimension on either side takes the other's
            out = merge_shape(out, outs[0], "")
        except Exception:
            raise shape_error(op, f"input {tuple(ins[0])} reduces to {out}, but the output has "
                                  f"shape {tuple(outs[0])}") from None
        return ins, [out]

    return infer


def _sample_axes(draw, *, values: str = "floats") -> Case:
    shape = S.shape(draw)
    x = (S.grid(draw, shape) if values == "grid" else
         S.floats(draw, shape, 0.5, 1.5) * np.where(S.integers(draw, shape, 0, 1) > 0, 1, -1)
         if values == "nonzero" else S.floats(draw, shape))
    params: dict[str, Any] = {"keepdims": S.boolean(draw, "keepdims")}
    axis = S.axes(draw, len(shape))
    if axis is not None:
        params["axis"] = axis
        params["exclude"] = S.boolean(draw, "exclude")
    return Case([x], params)


def _np_axes(p: Params, x: np.ndarray) -> tuple:
    if not p.axis:
        return tuple(range(x.ndim))
    axes = {a % x.ndim for a in p.axis}
    if getattr(p, "exclude", False):
        axes = set(range(x.ndim)) - axes
    return tuple(sorted(axes))


def _np_reduce(fn: Fn) -> Fn:
    """A numpy reference for a reduction: ``fn(x, axes)`` with keepdims, then MXNet's shape."""
    def reference(p, x):
        axes = _np_axes(p, x)
        out = fn(x, axes)
        return np.reshape(out, reduced_shape(x.shape, axes, p.keepdims))

    return reference


def reduction(name: str, forward: Fn, *, desc: str, grad: Fn | None, uses: tuple[str, ...],
              reference: Fn, values: str = "floats", aliases: tuple[str, ...] = (),
              linear: bool = False) -> list[Op]:
    """A reduction over ``axis`` and its backward (``linear``: the reduction is linear in
    its input, as sum and mean are, and the backward op's gradient is the reduction again).

    ``forward(xp, x, axes)`` returns the result with the reduced axes kept (size 1);
    ``grad(xp, g, x, y, axes)`` gets the head gradient and output reshaped the same way
    (so they broadcast against x) and returns the input gradient.
    """
    def compute(attrs, ctx, inputs, req, outputs):
        x = inputs[0]
        put(outputs[0], req[0], forward(ctx.xp, x, _axes_of(name, attrs, x.ndim)))

    ops = [Op(name, description=desc, params=ReduceAxesParam, input_names=["data"],
              infer_shape=_infer(name), compute={XP: compute}, aliases=aliases,
              gradient=Gradient(f"_backward_{name}", uses),
              domain=Domain(lambda draw: _sample_axes(draw, values=values),
                            reference=with_attrs(ReduceAxesParam, name, _np_reduce(reference))))]

    def backward(attrs, ctx, inputs, req, outputs):
        xp = ctx.xp
        shape = outputs[0].shape
        axes = _axes_of(name, attrs, len(shape))
        kept = reduced_shape(shape, axes, True)
        parts = dict(zip(uses, inputs))
        g = parts["out_grad"].reshape(kept)
        x = parts.get("in_data")
        y = parts["out_data"].reshape(kept) if "out_data" in parts else None
        put(outputs[0], req[0], xp.broadcast_to(grad(xp, g, x, y, axes), shape))

    ops.append(backward_op(name, ReduceAxesParam, len(uses), 1, backward))
    if linear:
        ops[-1].gradient = ComposedGradient(second_order.linear(name), ("out_grad", "in_data"))
    return ops


def _mean(xp, x, axes):
    if x.dtype.kind in "iub":  # MXNet divides the integer sum: truncation toward zero
        n = int(np.prod([x.shape[a] for a in axes]))
        return xp.trunc(xp.sum(x, axis=axes, keepdims=True, dtype=x.dtype) / n)
    return xp.mean(x, axis=axes, keepdims=True)


def _count(x, axes) -> int:
    return int(np.prod([x.shape[a] for a in axes])) if axes else 1


_DT = ("Output dtype = input dtype.")

OPS: list[Op] = [
    *reduction("sum", lambda xp, x, axes: xp.sum(x, axis=axes, keepdims=True, dtype=x.dtype),
               grad=lambda xp, g, x, y, axes: g, uses=("out_grad",), aliases=("sum_axis",),
               linear=True,
               reference=lambda x, axes: np.sum(x, axis=axes),
               desc="Sum of array elements over the given axes.  " + _DT + "  Gradient: the head "
                    "gradient broadcast back to the input's shape."),
    *reduction("mean", _mean, uses=("out_grad", "in_data"), linear=True,
               grad=lambda xp, g, x, y, axes: g / _count(x, axes),
               reference=lambda x, axes: np.mean(x, axis=axes),
               desc="Mean of array elements over the given axes.  " + _DT + " (integer means "
                    "truncate).  Gradient ``dy / n`` for each of the n reduced elements."),
    *reduction("prod", lambda xp, x, axes: xp.prod(x, axis=axes, keepdims=True, dtype=x.dtype),
               uses=("out_grad", "in_data", "out_data"), grad=lambda xp, g, x, y, axes: g * y / x,
               reference=lambda x, axes: np.prod(x, axis=axes), values="nonzero",
               desc="Product of array elements over the given axes.  " + _DT + "  Gradient "
                    "``dy * out / x`` (NaN where x == 0, as MXNet)."),
    *reduction("nansum", lambda xp, x, axes: xp.nansum(x, axis=axes, keepdims=True),
               uses=("out_grad", "in_data"), grad=lambda xp, g, x, y, axes: g * ~xp.isnan(x),
               reference=lambda x, axes: np.nansum(x, axis=axes),
               desc="Sum over the given axes, treating NaN as zero.  " + _DT + "  Gradient "
                    "``dy`` except 0 at NaN inputs."),
    *reduction("nanprod", lambda xp, x, axes: xp.nanprod(x, axis=axes, keepdims=True),
               uses=("out_grad", "in_data", "out_data"), values="nonzero",
               grad=lambda xp, g, x, y, axes: xp.where(xp.isnan(x), 0, g * y / x),
               reference=lambda x, axes: np.nanprod(x, axis=axes),
               desc="Product over the given axes, treating NaN as one.  " + _DT + "  Gradient "
                    "``dy * out / x``, 0 at NaN inputs."),
    *reduction("max", lambda xp, x, axes: xp.max(x, axis=axes, keepdims=True),
               uses=("out_grad", "in_data", "out_data"), values="grid", aliases=("max_axis",),
               grad=lambda xp, g, x, y, axes: g * (x == y),
               reference=lambda x, axes: np.max(x, axis=axes),
               desc="Maximum over the given axes (NaN propagates).  " + _DT + "  Gradient: "
                    "``dy`` to every element equal to the maximum (all tied elements, as MXNet)."),
    *reduction("min", lambda xp, x, axes: xp.min(x, axis=axes, keepdims=True),
               uses=("out_grad", "in_data", "out_data"), values="grid", aliases=("min_axis",),
               grad=lambda xp, g, x, y, axes: g * (x == y),
               reference=lambda x, axes: np.min(x, axis=axes),
               desc="Minimum over the given axes (NaN propagates).  " + _DT + "  Gradient: "
                    "``dy`` to every element equal to the minimum (all tied elements, as MXNet)."),
]


# -- norm ---------------------------------------------------------------------------------------
class NormParam(Params):
    ord = Field(int, 2, "Order of the norm. Currently ord=1 and ord=2 is supported.",
                choices=(1, 2))
    axis = Field(Shape, None, "The axis or axes along which to compute the norm (None: all, "
                              "the array taken as a flat vector).")
    out_dtype = Field(DType, None, "The data type of the output (default: the input's).",
                      choices=("float16", "float32", "float64", "int32", "int64", "int8"))
    keepdims = Field(bool, False, "If this is set to True, the reduced axis is left in the "
                                  "result as dimension with size one.")


def _norm(xp, x, axes, order):
    x = x.astype(np.float64) if x.dtype.kind in "iub" else x
    if order == 1:
        return xp.sum(xp.abs(x), axis=axes, keepdims=True)
    return xp.sqrt(xp.sum(x * x, axis=axes, keepdims=True))


def _norm_compute(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    put(outputs[0], req[0], _norm(ctx.xp, x, _axes_of("norm", attrs, x.ndim), attrs.ord))


def _norm_backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, x, y = inputs
    axes = _axes_of("norm", attrs, x.ndim)
    kept = reduced_shape(x.shape, axes, True)
    g, y = g.reshape(kept), y.reshape(kept)
    put(outputs[0], req[0], g * xp.sign(x) if attrs.ord == 1 else g * x / y)


def _norm_sample(draw):
    case = _sample_axes(draw, values="nonzero")
    case.params.pop("exclude", None)
    case.params["ord"] = S.choice(draw, [1, 2], "ord")
    return case


def _norm_reference(p, x):
    axes = _np_axes(p, x)
    out = np.sum(np.abs(x), axis=axes) if p.ord == 1 else np.sqrt(np.sum(x * x, axis=axes))
    out = np.reshape(out, reduced_shape(x.shape, axes, p.keepdims))
    return out.astype(p.out_dtype) if p.out_dtype is not None else out


OPS += [
    Op("norm", params=NormParam, input_names=["data"], infer_shape=_infer("norm"),
       infer_type=fixed_out_type(lambda attrs, ins: attrs.out_dtype or ins[0]),
       compute={XP: _norm_compute},
       gradient=Gradient("_backward_norm", ("out_grad", "in_data", "out_data")),
       domain=Domain(_norm_sample, reference=with_attrs(NormParam, "norm", _norm_reference)),
       description="Vector norm of the elements over ``axis`` (the array flattened when None; "
                   "several axes are taken together as one vector): ord=2 is "
                   "``sqrt(sum(x^2))``, ord=1 is ``sum(|x|)``.  Output dtype = out_dtype or the "
                   "input's (integer inputs are computed in floating point and truncated; "
                   "MXNet's own integer kernel differs).  Full reductions return shape (1,).  "
                   "Gradient: ord=2 ``dy x / out`` (NaN where the norm is 0, as MXNet); ord=1 "
                   "``dy sign(x)``."),
    backward_op("norm", NormParam, 3, 1, _norm_backward),
]


# -- argmax / argmin ----------------------------------------------------------------------------
class ReduceAxisParam(Params):
    axis = Field(int, None, "The axis along which to perform the reduction. Negative values "
                            "means indexing from right to left. If None, the input is flattened.")
    keepdims = Field(bool, False, "If this is set to True, the reduced axis is left in the "
                                  "result as dimension with size one.")


def _arg_shape(op: str, shape: Sequence[int], axis: int | None, keepdims: bool) -> tuple:
    if axis is None:
        return (1,) * len(shape) if keepdims else (1,)
    return reduced_shape(shape, (norm_axis(op, axis, len(shape)),), keepdims)


def arg_reduction(name: str, fn_name: str, *, desc: str, channel: bool = False) -> Op:
    """argmax/argmin over ``axis`` (ReduceAxisParam), or over axis 1 for ``argmax_channel``."""
    params = NoParams if channel else ReduceAxisParam

    def axis_keep(attrs):
        return (1, False) if channel else (attrs.axis, attrs.keepdims)

    def infer(attrs, ins, outs):
        if ins[0] is None:
            return ins, outs
        return ins, [_arg_shape(name, ins[0], *axis_keep(attrs))]

    def compute(attrs, ctx, inputs, req, outputs):
        x = inputs[0]
        axis, _ = axis_keep(attrs)
        axis = None if axis is None else norm_axis(name, axis, x.ndim)
        put(outputs[0], req[0], getattr(ctx.xp, fn_name)(x, axis=axis))

    def sample(draw):
        shape = S.shape(draw, min_dims=2 if channel else 1)
        raw: dict[str, Any] = {}
        if not channel:
            raw["keepdims"] = S.boolean(draw, "keepdims")
            if not S.boolean(draw, "axis is None"):
                raw["axis"] = S.axis(draw, len(shape))
        return Case([S.grid(draw, shape)], raw)  # distinct values: no ties to break

    def reference(raw, x):
        axis, keepdims = axis_keep(params.parse(name, raw))
        out = getattr(np, fn_name)(x, axis=axis)
        return np.reshape(out, _arg_shape(name, x.shape, axis, keepdims)).astype(x.dtype)

    return Op(name, description=desc, params=params, input_names=["data"], infer_shape=infer,
              compute={XP: compute}, gradient=ZeroGradient(),
              domain=Domain(sample, reference=reference))


_ARG_NOTE = ("The indices are returned in the input's dtype (float32 for float32 data, as MXNet "
             "1.x); the first occurrence wins ties and NaN counts as the extreme.  With axis=None "
             "the input is flattened and the result has shape (1,) (all-ones with keepdims).  "
             "Gradient zero.")

OPS += [
    arg_reduction("argmax", "argmax",
                  desc="Indices of the maximum values along an axis.  " + _ARG_NOTE),
    arg_reduction("argmin", "argmin",
                  desc="Indices of the minimum values along an axis.  " + _ARG_NOTE),
    arg_reduction("argmax_channel", "argmax", channel=True,
                  desc="Indices of the maximum along axis 1 (the channel axis): input "
                       "(n, c, ...) gives (n, ...).  " + _ARG_NOTE),
]
