"""Small operators of MXNet's ``contrib`` namespace (``mx.nd.contrib.*``):
``div_sqrt_dim``, ``index_array``, ``arange_like``, ``allclose``, ``index_copy`` and
``gradientmultiplier``.
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import (
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    NoParams,
    Op,
    Params,
    Shape,
    ZeroGradient,
)

from . import _sampling as S
from ._common import (
    backward_op,
    first_input_type,
    fixed_out_type,
    known,
    norm_axis,
    put,
    same_shape,
    shape_error,
    with_attrs,
)


# -- div_sqrt_dim -----------------------------------------------------------------------------
def _div_sqrt_dim(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    put(outputs[0], req[0], x / np.sqrt(x.shape[-1]))


def _div_sqrt_dim_back(attrs, ctx, inputs, req, outputs):
    g = inputs[0]
    put(outputs[0], req[0], g / np.sqrt(g.shape[-1]))


# -- index_array ------------------------------------------------------------------------------
class IndexArrayParam(Params):
    axes = Field(Shape, None, "The axes to include in the index array. Supports negative "
                              "values.", optional=True)


def _index_axes(attrs: IndexArrayParam, ndim: int) -> list[int]:
    if attrs.axes is None:
        return list(range(ndim))
    return [norm_axis("_contrib_index_array", a, ndim, "axes") for a in attrs.axes]


def _index_array_infer(attrs, ins, outs):
    data = ins[0]
    if data is None:
        return ins, outs
    return ins, [tuple(data) + (len(_index_axes(attrs, len(data))),)]


def _index_array(attrs, ctx, inputs, req, outputs):
    xp, x = ctx.xp, inputs[0]
    axes = _index_axes(attrs, x.ndim)
    if not axes or x.size == 0:  # a scalar or an empty input has no indices to list
        put(outputs[0], req[0], xp.zeros(outputs[0].shape, dtype=outputs[0].dtype))
        return
    grids = xp.indices(x.shape)
    put(outputs[0], req[0], xp.stack([grids[a] for a in axes], axis=-1))


def _np_index_array(p, x):
    grids = np.indices(x.shape)
    axes = range(x.ndim) if p.axes is None else [a % x.ndim for a in p.axes]
    return np.stack([grids[a] for a in axes], axis=-1)


# -- arange_like ------------------------------------------------------------------------------
class ArangeLikeParam(Params):
    start = Field(float, 0.0, "Start of interval. The interval includes this value. The "
                              "default start value is 0.")
    step = Field(float, 1.0, "Spacing between values.")
    repeat = Field(int, 1, "The repeating time of all elements. E.g repeat=3, the element a "
                           "will be repeated three times --> a, a, a.", low=1)
    ctx = Field(str, "", "Context of output, in format [cpu|gpu|cpu_pinned](n).Only used for "
                         "imperative calls.")
    axis = Field(int, None, "Arange elements according to the size of a certain axis of input "
                            "array. The negative numbers are interpreted counting from the "
                            "backward. If not provided, will arange elements according to the "
                            "input shape.", optional=True)


def _arange_like_infer(attrs, ins, outs):
    data = ins[0]
    if not known(data):
        return ins, outs
    if attrs.axis is None:
        return ins, [tuple(data)]
    return ins, [(data[norm_axis("_contrib_arange_like", attrs.axis, len(data))],)]


def _arange_values(xp, attrs: ArangeLikeParam, n: int):
    idx = xp.arange(n) // attrs.repeat
    return attrs.start + idx * attrs.step


def _arange_like(attrs, ctx, inputs, req, outputs):
    out = outputs[0]
    put(out, req[0], _arange_values(ctx.xp, attrs, out.size).reshape(out.shape))


def _np_arange_like(p, x):
    shape = x.shape if p.axis is None else (x.shape[p.axis],)
    return _arange_values(np, p, int(np.prod(shape))).reshape(shape).astype(x.dtype)


# -- allclose ---------------------------------------------------------------------------------
class AllCloseParam(Params):
    rtol = Field(float, 1e-5, "Relative tolerance.")
    atol = Field(float, 1e-8, "Absolute tolerance.")
    equal_nan = Field(bool, True, "Whether to compare NaN's as equal. If True, NaN's in A will "
                                  "be considered equal to NaN's in B in the output array.")


def _allclose(attrs, ctx, inputs, req, outputs):
    a, b = inputs
    close = ctx.xp.allclose(a, b, rtol=attrs.rtol, atol=attrs.atol, equal_nan=attrs.equal_nan)
    put(outputs[0], req[0], ctx.xp.full(outputs[0].shape, 1 if bool(close) else 0))


def _allclose_sample(draw):
    shape = S.shape(draw)
    a = S.floats(draw, shape)
    b = a + (S.floats(draw, shape, -1e-6, 1e-6) if S.boolean(draw, "close") else 0.5)
    return Case([a, b])


# -- index_copy -------------------------------------------------------------------------------
def _index_copy_infer(attrs, ins, outs):
    old, index, new = ins
    if known(old) and known(index) and new is None:
        new = (index[0],) + tuple(old[1:])
    if known(old) and known(new) and tuple(new[1:]) != tuple(old[1:]):
        raise shape_error("_contrib_index_copy", f"new_tensor {tuple(new)} must have "
                                                 f"old_tensor's trailing shape {tuple(old[1:])}")
    return [old, index if index is not None else (new[0],) if known(new) else None, new], [old]


def _index_copy(attrs, ctx, inputs, req, outputs):
    old, index, new = inputs
    out = old.copy()
    out[index.astype(np.int64)] = new
    put(outputs[0], req[0], out)


def _index_copy_back(attrs, ctx, inputs, req, outputs):
    g, _old, index, _new = inputs
    i = index.astype(np.int64)
    g_old = g.copy()
    g_old[i] = 0
    put(outputs[0], req[0], g_old)
    put(outputs[1], req[1], 0)
    put(outputs[2], req[2], g[i])


def _index_copy_sample(draw):
    shape = S.shape(draw, min_dims=1)
    n = shape[0]
    rows = np.unique(S.integers(draw, (S.integer(draw, 1, n, "rows"),), 0, n - 1))
    return Case([S.floats(draw, shape), rows, S.floats(draw, (len(rows),) + shape[1:])])


def _np_index_copy(raw, old, index, new):
    out = old.copy()
    out[index.astype(np.int64)] = new
    return out


# -- quadratic --------------------------------------------------------------------------------
class QuadraticParam(Params):
    a = Field(float, 0.0, "Coefficient of the quadratic term in the quadratic function.")
    b = Field(float, 0.0, "Coefficient of the linear term in the quadratic function.")
    c = Field(float, 0.0, "Constant term in the quadratic function.")


def _quadratic(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    put(outputs[0], req[0], attrs.a * x * x + attrs.b * x + attrs.c)


def _quadratic_back(attrs, ctx, inputs, req, outputs):
    g, x = inputs
    put(outputs[0], req[0], g * (2 * attrs.a * x + attrs.b))


# -- gradientmultiplier -----------------------------------------------------------------------
class GradientMultiplierParam(Params):
    scalar = Field(float, 1.0, "Scalar input value")
    is_int = Field(bool, True, "Indicate whether scalar input is int type")


OPS: list[Op] = [
    Op("_contrib_div_sqrt_dim", input_names=["data"],
       infer_shape=same_shape("_contrib_div_sqrt_dim", ["data"]), compute={XP: _div_sqrt_dim},
       gradient=Gradient("_backward_contrib_div_sqrt_dim", ("out_grad",)),
       domain=Domain(lambda draw: Case([S.floats(draw, S.shape(draw))]),
                     reference=lambda raw, x: x / np.sqrt(x.shape[-1])),
       description="Divide by the square root of the last dimension: "
                   "``out = x / sqrt(x.shape[-1])`` (scaled dot-product attention's scaling).  "
                   "Gradient ``dy / sqrt(x.shape[-1])``."),
    backward_op("contrib_div_sqrt_dim", NoParams, 1, 1, _div_sqrt_dim_back),
    Op("_contrib_index_array", params=IndexArrayParam, input_names=["data"],
       infer_shape=_index_array_infer,
       infer_type=fixed_out_type(lambda attrs, ins: np.dtype(np.int64)),
       compute={XP: _index_array}, gradient=ZeroGradient(),
       domain=Domain(lambda draw: _index_array_case(draw),
                     reference=with_attrs(IndexArrayParam, "_contrib_index_array",
                                          _np_index_array)),
       description="The index of every element: for data of shape (d1, ..., dn) an int64 "
                   "array of shape (d1, ..., dn, len(axes)) whose last axis holds each "
                   "element's coordinates along ``axes`` (all axes when None).  Gradient "
                   "zero."),
    Op("_contrib_arange_like", params=ArangeLikeParam, input_names=["data"],
       infer_shape=_arange_like_infer, infer_type=first_input_type(1),
       compute={XP: _arange_like}, gradient=ZeroGradient(),
       domain=Domain(lambda draw: _arange_like_case(draw),
                     reference=with_attrs(ArangeLikeParam, "_contrib_arange_like",
                                          _np_arange_like)),
       description="``start + (i // repeat) * step`` for i counting the elements of data's "
                   "shape (or of its ``axis``), in data's dtype.  Gradient zero."),
    Op("_contrib_allclose", params=AllCloseParam, num_inputs=2, input_names=["a", "b"],
       infer_shape=lambda attrs, ins, outs: (ins, [()]),
       infer_type=fixed_out_type(lambda attrs, ins: np.dtype(np.uint8)),
       compute={XP: _allclose}, gradient=ZeroGradient(),
       domain=Domain(_allclose_sample, reference=with_attrs(
           AllCloseParam, "_contrib_allclose", lambda p, a, b: np.array(
               np.allclose(a, b, rtol=p.rtol, atol=p.atol, equal_nan=p.equal_nan))),
           differentiable=()),
       description="1 (uint8) when every ``|a - b| <= atol + rtol |b|`` (numpy's allclose; "
                   "NaNs equal when equal_nan), else 0, as a 0-d array (as MXNet).  "
                   "Gradient zero."),
    Op("_contrib_index_copy", num_inputs=3,
       input_names=["old_tensor", "index_vector", "new_tensor"],
       infer_shape=_index_copy_infer, infer_type=first_input_type(1),
       compute={XP: _index_copy},
       gradient=Gradient("_backward_contrib_index_copy", ("out_grad", "in_data")),
       domain=Domain(_index_copy_sample, reference=_np_index_copy, differentiable=(0, 2)),
       description="A copy of old_tensor with the rows listed in index_vector replaced by "
                   "the rows of new_tensor, in order.  Dtype = old_tensor's.  Gradient: "
                   "old_tensor gets the head gradient with those rows zeroed, new_tensor "
                   "the head gradient's rows at index_vector; the index gets zero."),
    backward_op("contrib_index_copy", NoParams, 4, 3, _index_copy_back),
    Op("_contrib_quadratic", params=QuadraticParam, input_names=["data"],
       infer_shape=same_shape("_contrib_quadratic", ["data"]), compute={XP: _quadratic},
       gradient=Gradient("_backward_contrib_quadratic", ("out_grad", "in_data")),
       inplace=[(0, 0)],
       domain=Domain(lambda draw: Case([S.floats(draw, S.shape(draw))],
                                       {"a": S.number(draw, -2, 2), "b": S.number(draw, -2, 2),
                                        "c": S.number(draw, -2, 2)}),
                     reference=with_attrs(QuadraticParam, "_contrib_quadratic",
                                          lambda p, x: p.a * x * x + p.b * x + p.c)),
       description="``a x^2 + b x + c``, element-wise (MXNet's example contrib operator).  "
                   "Dtype = data's.  Gradient ``(2 a x + b) dy``."),
    backward_op("contrib_quadratic", QuadraticParam, 2, 1, _quadratic_back),
    Op("_contrib_gradientmultiplier", params=GradientMultiplierParam, input_names=["data"],
       infer_shape=same_shape("_contrib_gradientmultiplier", ["data"]),
       compute={XP: lambda attrs, ctx, inputs, req, outputs: put(outputs[0], req[0],
                                                                 inputs[0])},
       gradient=Gradient("_backward_contrib_gradientmultiplier", ("out_grad",)),
       domain=Domain(lambda draw: Case([S.floats(draw, S.shape(draw))],
                                       {"scalar": S.number(draw, -2, 2)}),
                     reference=lambda raw, x: x, differentiable=()),
       description="Identity in the forward pass; the backward multiplies the head gradient "
                   "by ``scalar`` (a gradient reversal layer with a negative scalar).",
       inplace=[(0, 0)]),
    backward_op("contrib_gradientmultiplier", GradientMultiplierParam, 1, 1,
                lambda attrs, ctx, inputs, req, outputs: put(outputs[0], req[0],
                                                             inputs[0] * attrs.scalar)),
]


def _index_array_case(draw):
    shape = S.shape(draw)
    axes = S.axes(draw, len(shape))
    return Case([S.floats(draw, shape)], {"axes": axes})


def _arange_like_case(draw):
    shape = S.shape(draw)
    params = {"start": S.number(draw, -2, 2), "step": S.number(draw, 0.5, 2),
              "repeat": S.integer(draw, 1, 3)}
    if S.boolean(draw, "along an axis"):
        params["axis"] = S.axis(draw, len(shape))
    return Case([S.floats(draw, shape)], params)
