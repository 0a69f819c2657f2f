"""Array creation (MXNet's ``init_op.cc``): ``_zeros``, ``_ones``, ``_full``, ``_arange``,
``_eye`` (no inputs; what ``nd.zeros``/``ones``/``full``/``arange``/``eye`` call) and
``zeros_like``, ``ones_like``.

The ``ctx`` parameter is accepted for MXNet compatibility and ignored: the
array is made on the device the operator runs on.  A 0 in ``shape`` means
"unknown" (MXNet 1.x), to be inferred from the consumers in a graph.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    DType,
    Field,
    NoGradient,
    Op,
    Params,
    Shape,
    ZeroGradient,
    merge_shape,
)
from dagnet.util import is_np_shape

from . import _sampling as S
from ._common import fixed_out_type, put, same_shape, shape_error, with_attrs

_DTYPES = ("bfloat16", "bool", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")
_NO_INPUTS = NoGradient("it creates an array from its parameters and has no inputs")


class InitOpParam(Params):
    shape = Field(Shape, (), "The shape of the output")
    ctx = Field(str, "", "Context of output, in format [cpu|gpu|cpu_pinned](n).Only used for "
                         "imperative calls.")
    dtype = Field(DType, "float32", "Target data type.", choices=_DTYPES)


class FullParam(InitOpParam):
    value = Field(float, REQUIRED, "Value with which to fill newly created tensor")


class RangeParam(Params):
    start = Field(float, REQUIRED, "Start of interval. The interval includes this value. The "
                                   "default start value is 0.")
    stop = Field(float, None, "End of interval. The interval does not include this value, "
                              "except in some cases where step is not an integer and floating "
                              "point round-off affects the length of out.")
    step = Field(float, 1.0, "Spacing between values.")
    repeat = Field(int, 1, "The repeating time of all elements. E.g repeat=3, the element a "
                           "will be repeated three times --> a, a, a.", low=1)
    infer_range = Field(bool, False, "When set to True, infer the stop position from the start, "
                                     "step, repeat, and output tensor size.")
    ctx = Field(str, "", "Context of output, in format [cpu|gpu|cpu_pinned](n).Only used for "
                         "imperative calls.")
    dtype = Field(DType, "float32", "Target data type.", choices=_DTYPES[:1] + _DTYPES[2:])


class EyeParam(Params):
    N = Field(int, REQUIRED, "Number of rows in the output.", low=0)
    M = Field(int, 0, "Number of columns in the output. If 0, defaults to N", low=0)
    k = Field(int, 0, "Index of the diagonal. 0 (the default) refers to the main diagonal.A "
                      "positive value refers to an upper diagonal.A negative value to a lower "
                      "diagonal.")
    ctx = Field(str, "", "Context of output, in format [cpu|gpu|cpu_pinned](n).Only used for "
                         "imperative calls.")
    dtype = Field(DType, "float32", "Target data type.", choices=_DTYPES[2:])


def _from_param(op: str, shape_of) -> Any:
    """Output shape from the parameters, merged with what the graph knows of the output."""
    def infer(attrs, ins, outs):
        want = shape_of(attrs)
        if want is None:
            return ins, outs
        try:
            return ins, [merge_shape(want, outs[0], "")]
        except Exception:
            raise shape_error(op, f"the parameters give shape {want} but the output has shape "
                                  f"{tuple(outs[0])}") from None

    return infer


def _init_shape(attrs):
    # () is MXNet 1.x's "unknown", unless NumPy shape semantics make it a scalar's shape
    return tuple(attrs.shape) if attrs.shape or is_np_shape() else None


def _arange_length(attrs: RangeParam) -> int:
    start, stop = (0.0, attrs.start) if attrs.stop is None else (attrs.start, attrs.stop)
    if attrs.step == 0:
        raise shape_error("_arange", "step must not be 0")
    n = math.ceil((stop - start) / attrs.step)
    if n <= 0:
        raise shape_error("_arange", f"invalid range (start, stop, step) = ({start}, {stop}, "
                                     f"{attrs.step}): it holds no values")
    return n


def _arange(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    out = outputs[0]
    start = 0.0 if attrs.stop is None else attrs.start
    n = out.shape[0] // attrs.repeat  # the output's length: infer_range may have set it
    if out.dtype.kind in "iub":  # MXNet computes in the output type: start and step truncate
        values = int(start) + xp.arange(n, dtype=np.int64) * int(attrs.step)
    else:
        values = start + xp.arange(n, dtype=np.float64) * attrs.step
    put(out, req[0], xp.repeat(values, attrs.repeat))


def _arange_reference(p):
    start, stop = (0.0, p.start) if p.stop is None else (p.start, p.stop)
    n = math.ceil((stop - start) / p.step)
    if np.dtype(p.dtype).kind in "iu":
        values = int(start) + np.arange(n) * int(p.step)
    else:
        values = start + np.arange(n) * p.step
    return np.repeat(values, p.repeat).astype(p.dtype)


def _sample_init(draw, full: bool = False):
    dtype = S.choice(draw, ["float32", "float64", "int32", "uint8"], "dtype")
    params: dict[str, Any] = {"shape": S.shape(draw, min_dims=1), "dtype": dtype}
    if full:
        params["value"] = S.number(draw, -3, 3, label="value")
    return Case([], params)


def _sample_arange(draw):
    start = S.number(draw, -5, 5, label="start")
    step = S.number(draw, 0.25, 2, label="|step|") * (1 if S.boolean(draw, "step sign") else -1)
    n = S.integer(draw, 1, 6, "length")
    params: dict[str, Any] = {"start": start, "stop": start + step * (n - 0.5), "step": step,
                              "repeat": S.integer(draw, 1, 3, "repeat"),
                              "dtype": S.choice(draw, ["float32", "float64"], "dtype")}
    return Case([], params)


class LikeParam(Params):
    # MXNet's zeros_like and ones_like parse no parameters, so an attribute such as dtype
    # is stored in the graph and ignored: the output keeps the input's dtype.
    dtype = Field(str, None, "accepted for MXNet compatibility and ignored: the output has "
                             "the input's dtype")


def _like(name: str, value: float, desc: str) -> Op:
    return Op(name, params=LikeParam, input_names=["data"],
              infer_shape=same_shape(name, ["data"]),
              compute={XP: lambda attrs, ctx, ins, req, outs: put(outs[0], req[0], value)},
              gradient=ZeroGradient(), description=desc,
              domain=Domain(lambda draw: Case([S.floats(draw, S.shape(draw))]),
                            reference=lambda raw, x: np.full_like(x, value)))


OPS: list[Op] = [
    Op("_zeros", params=InitOpParam, num_inputs=0, input_names=[],
       infer_shape=_from_param("_zeros", _init_shape),
       infer_type=fixed_out_type(lambda attrs, ins: attrs.dtype),
       compute={XP: lambda attrs, ctx, ins, req, outs: put(outs[0], req[0], 0)},
       gradient=_NO_INPUTS, domain=Domain(_sample_init, reference=with_attrs(
           InitOpParam, "_zeros", lambda p: np.zeros(p.shape, p.dtype))),
       description="An array of zeros of ``shape`` and ``dtype`` (default float32)."),
    Op("_ones", params=InitOpParam, num_inputs=0, input_names=[],
       infer_shape=_from_param("_ones", _init_shape),
       infer_type=fixed_out_type(lambda attrs, ins: attrs.dtype),
       compute={XP: lambda attrs, ctx, ins, req, outs: put(outs[0], req[0], 1)},
       gradient=_NO_INPUTS, domain=Domain(_sample_init, reference=with_attrs(
           InitOpParam, "_ones", lambda p: np.ones(p.shape, p.dtype))),
       description="An array of ones of ``shape`` and ``dtype`` (default float32)."),
    Op("_full", params=FullParam, num_inputs=0, input_names=[],
       infer_shape=_from_param("_full", _init_shape),
       infer_type=fixed_out_type(lambda attrs, ins: attrs.dtype),
       compute={XP: lambda attrs, ctx, ins, req, outs: put(
           outs[0], req[0], ctx.xp.asarray(attrs.value).astype(outs[0].dtype))},
       gradient=_NO_INPUTS,
       domain=Domain(lambda draw: _sample_init(draw, full=True), reference=with_attrs(
           FullParam, "_full", lambda p: np.full(p.shape, np.float64(p.value).astype(p.dtype)))),
       description="An array of ``shape`` filled with ``value``, in ``dtype`` (default float32; "
                   "an integer dtype truncates the value: 3.5 -> 3)."),
    Op("_arange", params=RangeParam, num_inputs=0, input_names=[],
       infer_shape=_from_param("_arange", lambda attrs: None if attrs.infer_range else
                               (_arange_length(attrs) * attrs.repeat,)),
       infer_type=fixed_out_type(lambda attrs, ins: attrs.dtype), compute={XP: _arange},
       gradient=_NO_INPUTS, domain=Domain(_sample_arange, reference=with_attrs(
           RangeParam, "_arange", _arange_reference)),
       description="Evenly spaced values ``start, start + step, ...`` below ``stop`` (with stop "
                   "None: from 0 below start), each repeated ``repeat`` times; length "
                   "``ceil((stop - start) / step) * repeat``, an empty range is an error.  "
                   "Integer dtypes truncate start and step first (as MXNet: arange(0, 2.5, 0.5, "
                   "dtype='int32') is all zeros).  With infer_range the length comes from the "
                   "output's shape in the graph."),
    Op("_eye", params=EyeParam, num_inputs=0, input_names=[],
       infer_shape=_from_param("_eye", lambda attrs: (attrs.N, attrs.M or attrs.N)),
       infer_type=fixed_out_type(lambda attrs, ins: attrs.dtype),
       compute={XP: lambda attrs, ctx, ins, req, outs: put(outs[0], req[0], ctx.xp.eye(
           attrs.N, attrs.M or attrs.N, attrs.k, dtype=outs[0].dtype))},
       gradient=_NO_INPUTS, domain=Domain(lambda draw: Case([], {
           "N": S.integer(draw, 1, 4, "N"), "M": S.integer(draw, 0, 4, "M"),
           "k": S.integer(draw, -2, 2, "k")}), reference=with_attrs(
           EyeParam, "_eye", lambda p: np.eye(p.N, p.M or p.N, p.k, dtype=p.dtype))),
       description="A 2-D array of shape (N, M or N) with ones on diagonal ``k`` and zeros "
                   "elsewhere, in ``dtype`` (default float32)."),
    _like("zeros_like", 0.0, "An array of zeros with the input's shape and dtype.  Gradient "
                             "zero."),
    _like("ones_like", 1.0, "An array of ones with the input's shape and dtype.  Gradient zero."),
]
