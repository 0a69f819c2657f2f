"""``_npi_percentile`` (MXNet's ``np_percentile_op.cc``, behind ``mx.np.percentile`` and
``mx.np.quantile``): the ``q``-th percentiles of the input over ``axis``.

``q`` is a scalar parameter (``q_scalar``) or a second input of at most one dimension,
in [0, 100] (an error otherwise).  Over the reduced axes the values are sorted and the
percentile sits at position ``q / 100 * (n - 1)``; between two neighbours it is chosen
by ``interpolation``: ``linear`` (weighted), ``lower``, ``higher``, ``midpoint`` (their
mean) or ``nearest`` (the position rounded half away from zero, as C's ``round``).

Output: shape ``q.shape + reduced shape`` (NumPy's; ``keepdims`` keeps the reduced axes
as 1), float64 for float64 input, float32 otherwise.  Not differentiable: MXNet gives a
zero gradient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet.operator import XP, Case, Domain, Field, Op, Params, Shape, ZeroGradient

from . import _sampling as S
from ._common import fixed_out_type, norm_axis, put, shape_error, with_attrs

_NAME = "_npi_percentile"
_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


class PercentileParam(Params):
    axis = Field(Shape, None, "Axis or axes along which the percentiles are computed (None: "
                              "the flattened array).", optional=True)
    interpolation = Field(str, "linear", "How a percentile between two data points is "
                                         "chosen.", choices=_METHODS)
    keepdims = Field(bool, False, "Keep the reduced axes as dimensions of size one.")
    q_scalar = Field(float, None, "The percentile when it is a number (no second input).",
                     optional=True)


def _axes(attrs: PercentileParam, ndim: int) -> tuple[int, ...]:
    if attrs.axis is None:
        return tuple(range(ndim))
    axes = tuple(norm_axis(_NAME, a, ndim) for a in attrs.axis)
    if len(set(axes)) != len(axes):
        raise shape_error(_NAME, f"axis {tuple(attrs.axis)} has duplicates")
    return axes


def _reduced(attrs: PercentileParam, shape: tuple) -> tuple:
    axes = _axes(attrs, len(shape))
    if attrs.keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _infer_shape(attrs, ins, outs):
    data = ins[0]
    q = () if attrs.q_scalar is not None else (ins[1] if len(ins) > 1 else None)
    if data is None or q is None:
        return ins, outs
    if len(q) > 1:
        raise shape_error(_NAME, f"q must have at most one dimension, got shape {tuple(q)}")
    return ins, [tuple(q) + _reduced(attrs, tuple(data))]


def _out_type(attrs, ins):
    if ins[0] is None:
        return None
    return np.dtype(np.float64) if np.dtype(ins[0]) == np.float64 else np.dtype(np.float32)


def _percentiles(xp: Any, attrs: PercentileParam, a: Any, q: Any) -> Any:
    """The percentiles ``q`` (a 0-d or 1-d float64 array) of ``a`` (float64)."""
    if bool(xp.any((q < 0) | (q > 100))):
        raise ValueError(f"operator {_NAME!r}: percentile exceeds the valid range [0, 100] "
                         f"(quantiles: [0, 1])")
    axes = _axes(attrs, a.ndim)
    rest = [i for i in range(a.ndim) if i not in axes]
    kept = tuple(a.shape[i] for i in rest)
    flat = xp.transpose(a, rest + list(axes)).reshape(kept + (-1,))
    ordered = xp.sort(flat, axis=-1)
    n = ordered.shape[-1]
    if n == 0:
        raise ValueError(f"operator {_NAME!r}: no values to take percentiles of (the reduced "
                         f"axes of shape {a.shape} are empty)")
    position = q.reshape(-1) * (n - 1) / 100.0
    below, above = xp.floor(position), xp.ceil(position)
    method = attrs.interpolation
    if method == "nearest":  # C's round: halves away from zero
        below = above = xp.floor(position + 0.5)
    elif method == "lower":
        above = below
    elif method == "higher":
        below = above
    low = xp.take(ordered, below.astype(np.int64), axis=-1)
    high = xp.take(ordered, above.astype(np.int64), axis=-1)
    if method == "linear":
        value = low + (high - low) * (position - below)
    elif method == "midpoint":
        value = (low + high) / 2
    else:
        value = low
    value = xp.moveaxis(value, -1, 0)  # q's axis first
    if attrs.keepdims:
        value = value.reshape((value.shape[0],) + tuple(
            1 if i in axes else a.shape[i] for i in range(a.ndim)))
    return value.reshape(q.shape + value.shape[1:])


def _compute(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    q = (xp.asarray(attrs.q_scalar, dtype=np.float64) if attrs.q_scalar is not None
         else inputs[1].astype(np.float64))
    put(outputs[0], req[0], _percentiles(xp, attrs, inputs[0].astype(np.float64), q))


def _sample(draw):
    shape = S.shape(draw)
    params: dict[str, Any] = {
        "interpolation": S.choice(draw, list(_METHODS), "interpolation"),
        "keepdims": S.boolean(draw, "keepdims"),
        "axis": None if S.boolean(draw, "axis None") else tuple(
            S.subset(draw, list(range(len(shape))), "axes") or [0])}
    data = S.floats(draw, shape, -5.0, 5.0)
    if S.boolean(draw, "q scalar"):
        params["q_scalar"] = S.number(draw, 0.0, 100.0, label="q")
        return Case([data], params)
    q = S.floats(draw, (S.integer(draw, 1, 3, "q count"),), 0.0, 100.0)
    return Case([data, q], params)


def _reference(p: PercentileParam, a: np.ndarray, *q: np.ndarray) -> np.ndarray:
    quantiles = np.asarray(p.q_scalar if p.q_scalar is not None else q[0], np.float64)
    method = "linear" if p.interpolation == "midpoint" else p.interpolation
    axis = None if p.axis is None else tuple(p.axis)
    if p.interpolation == "midpoint":
        low = np.percentile(a, quantiles, axis=axis, method="lower", keepdims=p.keepdims)
        high = np.percentile(a, quantiles, axis=axis, method="higher", keepdims=p.keepdims)
        return (low + high) / 2
    if p.interpolation == "nearest":  # numpy rounds halves to even; MXNet away from zero
        n = a.size if axis is None else int(np.prod([a.shape[i] for i in axis]))
        position = np.floor(quantiles * (n - 1) / 100.0 + 0.5)
        quantiles = np.minimum((position + 1e-6) * 100.0 / max(n - 1, 1), 100.0)
        method = "lower"
    return np.percentile(a, quantiles, axis=axis, method=method, keepdims=p.keepdims)


OPS: list[Op] = [
    Op(_NAME, params=PercentileParam,
       num_inputs=lambda attrs: 1 if attrs.q_scalar is not None else 2,
       input_names=lambda attrs: ["a"] if attrs.q_scalar is not None else ["a", "q"],
       infer_shape=_infer_shape, infer_type=fixed_out_type(_out_type),
       compute={XP: _compute}, gradient=ZeroGradient(),
       domain=Domain(_sample, reference=with_attrs(PercentileParam, _NAME, _reference),
                     differentiable=()),
       description="The q-th percentiles (q in [0, 100]; a number ``q_scalar`` or an input "
                   "of at most one dimension) of the data over ``axis`` (None: all of it), "
                   "by ``interpolation`` (linear, lower, higher, midpoint, nearest).  Output "
                   "shape q.shape + the reduced shape; float64 for float64 data, else "
                   "float32.  Zero gradient (MXNet's)."),
]
