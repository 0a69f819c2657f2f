"""Quantization (MXNet's ``quantization/quantize.cc``, ``quantize_v2.cc``,
``dequantize.cc``): float32 data to int8 or uint8 and back, with the float range the
integers stand for, computed as MXNet 1.9.1's CPU build computes them.

``_contrib_quantize`` follows MXNet's reference kernel (its CPU build has no other):

- ``uint8``: ``q = trunc((x - min) * 255 / (max - min) + 0.5)``; the range stays
  ``(min, max)``.
- ``int8`` keeps zero at zero: with ``r = max(|min|, |max|)``,
  ``q = sign(x) * min(|x| * 127 / r + 0.5, 127)`` truncated; the range becomes ``(-r, r)``.

``_contrib_quantize_v2`` and ``_contrib_dequantize`` follow the MKL-DNN kernels MXNet's CPU
build runs for them (and its quantized models are made with): zero stays at zero for both
types, with ``r = max(|min|, |max|)`` standing for 127.5 (int8) or 255.5 (uint8) steps,
``q = round(x * 127.5 / r)`` (or 255.5), to the nearest integer (halves to even) and
saturated to the type; ``x = q * r / 127.5`` (or 255.5).  ``_contrib_quantize_v2`` takes
the range as ``min_calib_range``/``max_calib_range`` or else from the data's own minimum and
maximum, and returns ``(-r, r)`` for int8 and the range itself for uint8; ``out_type='auto'``
picks uint8 for a calibrated range starting at or above zero, int8 otherwise; integer input
passes through with the calibrated range (or 0..255 / -127..127).  An empty range (all
values equal) quantizes everything to 0.  None of them has a gradient.
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import XP, Case, Domain, Field, NoGradient, Op, Params

from .._draw import Draw
from ._common import contrib_error, put

__all__ = ["OPS"]

_FLOAT = np.dtype(np.float32)
_INT_TYPES = {"int8": np.dtype(np.int8), "uint8": np.dtype(np.uint8)}
_NO_GRADIENT = NoGradient("quantization is forward only (MXNet registers no gradient)")


class QuantizeParam(Params):
    out_type = Field(str, "uint8", "Output data type.", choices=("int8", "uint8"))


class QuantizeV2Param(Params):
    out_type = Field(str, "int8", "Output data type. `auto` can be specified to automatically "
                                  "determine output type according to min_calib_range.",
                     choices=("auto", "int8", "uint8"))
    min_calib_range = Field(float, None, "The minimum scalar value in the form of float32. If "
                                         "present, it will be used to quantize the fp32 data "
                                         "into int8 or uint8.")
    max_calib_range = Field(float, None, "The maximum scalar value in the form of float32. If "
                                         "present, it will be used to quantize the fp32 data "
                                         "into int8 or uint8.")


class DequantizeParam(Params):
    out_type = Field(str, "float32", "Output data type.", choices=("float32",))


def quantize_values(xp, x, lo: float, hi: float, out_type: str):
    """(quantized values, range min, range max) by the formulas above."""
    x = x.astype(np.float32)
    if out_type == "uint8":
        scale = np.float32(255.0 / (hi - lo) if hi != lo else 0.0)  # an empty range: all 0
        q = xp.trunc((x - np.float32(lo)) * scale + np.float32(0.5))
        return xp.clip(q, 0, 255).astype(np.uint8), lo, hi
    real = max(abs(lo), abs(hi))
    scale = np.float32(127.0 / real if real else 0.0)
    q = xp.sign(x) * xp.minimum(xp.abs(x) * scale + np.float32(0.5), np.float32(127.0))
    return xp.trunc(q).astype(np.int8), -real, real


#: the steps a range stands for in MXNet's MKL-DNN kernels (``kInt8Range``, ``kUint8Range``)
MKLDNN_LEVELS = {np.dtype(np.int8): 127.5, np.dtype(np.uint8): 255.5}
_BOUNDS = {"int8": (-128, 127), "uint8": (0, 255)}


def mkldnn_quantize_values(xp, x, lo: float, hi: float, out_type: str):
    """(quantized values, range min, range max) as MXNet's MKL-DNN kernel quantizes."""
    real = max(abs(lo), abs(hi))
    levels = MKLDNN_LEVELS[_INT_TYPES[out_type]]
    scale = np.float32(levels / real if real else 0.0)  # an empty range: all 0
    q = xp.clip(xp.rint(x.astype(np.float32) * scale), *_BOUNDS[out_type])
    if out_type == "uint8":
        return q.astype(np.uint8), lo, hi
    return q.astype(np.int8), -real, real


def dequantize_values(q, lo: float, hi: float):
    """Float32 values of ``q`` (int8 or uint8) standing for the range ``(lo, hi)``, as
    MXNet's MKL-DNN kernel dequantizes."""
    step = np.float32(max(abs(lo), abs(hi)) / MKLDNN_LEVELS[np.dtype(q.dtype)])
    return q.astype(np.float32) * step


def _scalar(a) -> float:
    return float(a.reshape(-1)[0])


def _range_shapes(op):
    def infer(attrs, ins, outs):
        data = ins[0] if ins[0] is not None else outs[0]
        for shape in ins[1:]:
            if shape is not None and tuple(shape) not in ((1,), ()):
                raise contrib_error(op, f"min_range and max_range hold one value each, got "
                                        f"shape {tuple(shape)}")
        return [data, (1,), (1,)], [data] + [(1,)] * (len(outs) - 1)

    return infer


def _floats(op, ins):
    """The inputs' dtypes (float32 where unknown); each must be a float type.  MXNet takes
    float32 only; dagnet computes in float32 whatever float it is given."""
    types = [np.dtype(t) if t is not None else _FLOAT for t in ins]
    for name, t in zip(("data", "min_range", "max_range"), types):
        if t.kind != "f":
            raise contrib_error(op, f"{name} must be float32, got {t.name}")
    return types


def _quantize_type(attrs, ins, outs):
    return _floats("_contrib_quantize", ins), [_INT_TYPES[attrs.out_type], _FLOAT, _FLOAT]


def _quantize(attrs, ctx, inputs, req, outputs):
    q, lo, hi = quantize_values(ctx.xp, inputs[0], _scalar(inputs[1]), _scalar(inputs[2]),
                                attrs.out_type)
    put(outputs[0], req[0], q)
    put(outputs[1], req[1], lo)
    put(outputs[2], req[2], hi)


def _v2_out_type(attrs) -> str:
    if attrs.out_type != "auto":
        return attrs.out_type
    calibrated = attrs.min_calib_range is not None and attrs.max_calib_range is not None
    return "uint8" if calibrated and attrs.min_calib_range >= 0.0 else "int8"


def _v2_shape(attrs, ins, outs):
    data = ins[0] if ins[0] is not None else outs[0]
    return [data], [data, (1,), (1,)]


def _v2_type(attrs, ins, outs):
    given = ins[0]
    if given is not None and np.dtype(given).kind != "f" and \
            np.dtype(given) not in _INT_TYPES.values():
        raise contrib_error("_contrib_quantize_v2", f"data must be float32, int8 or uint8, got "
                                                    f"{np.dtype(given).name}")
    if given is not None and np.dtype(given).kind != "f":
        return [given], [given, _FLOAT, _FLOAT]  # already quantized: passed through
    return [given if given is not None else _FLOAT], \
        [_INT_TYPES[_v2_out_type(attrs)], _FLOAT, _FLOAT]


def _quantize_v2(attrs, ctx, inputs, req, outputs):
    x = inputs[0]
    calibrated = attrs.min_calib_range is not None and attrs.max_calib_range is not None
    if x.dtype.kind != "f":
        if calibrated:
            lo, hi = attrs.min_calib_range, attrs.max_calib_range
        else:
            lo, hi = (0.0, 255.0) if x.dtype == np.uint8 else (-127.0, 127.0)
        put(outputs[0], req[0], x)
    else:
        if calibrated:
            lo, hi = attrs.min_calib_range, attrs.max_calib_range
        else:
            lo, hi = float(x.min()), float(x.max())
        q, lo, hi = mkldnn_quantize_values(ctx.xp, x, lo, hi, _v2_out_type(attrs))
        put(outputs[0], req[0], q)
    put(outputs[1], req[1], lo)
    put(outputs[2], req[2], hi)


def _dequantize_type(attrs, ins, outs):
    given = ins[0]
    if given is not None and np.dtype(given) not in _INT_TYPES.values():
        raise contrib_error("_contrib_dequantize", f"data must be int8 or uint8, got "
                                                   f"{np.dtype(given).name}")
    return [given] + _floats("_contrib_dequantize", [None] + list(ins[1:]))[1:], [_FLOAT]


def _dequantize(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], dequantize_values(inputs[0], _scalar(inputs[1]),
                                              _scalar(inputs[2])))


def _range_case(d: Draw):
    shape = d.shape(d.int(1, 3), 1, 4)
    lo = d.float(-2.0, 0.0)
    hi = d.float(0.1, 2.0)
    data = d.uniform(shape, lo, hi).astype(np.float32)
    return shape, data, np.array([lo], np.float32), np.array([hi], np.float32)


def _quantize_sample(draw):
    d = Draw(draw)
    _, data, lo, hi = _range_case(d)
    return Case([data, lo, hi], {"out_type": d.choice(["int8", "uint8"])})


def _quantize_reference(raw, data, lo, hi):
    attrs = QuantizeParam.parse("_contrib_quantize", raw)
    q, a, b = quantize_values(np, data, float(lo[0]), float(hi[0]), attrs.out_type)
    return [q, np.array([a], np.float32), np.array([b], np.float32)]


def _v2_sample(draw):
    d = Draw(draw)
    _, data, lo, hi = _range_case(d)
    params = {"out_type": d.choice(["auto", "int8", "uint8"])}
    if d.bool("calibrated"):
        params["min_calib_range"] = float(lo[0]) if d.bool("signed") else 0.0
        params["max_calib_range"] = float(hi[0])
    return Case([data], params)


def _v2_reference(raw, data):
    attrs = QuantizeV2Param.parse("_contrib_quantize_v2", raw)
    calibrated = attrs.min_calib_range is not None
    lo = attrs.min_calib_range if calibrated else float(data.min())
    hi = attrs.max_calib_range if calibrated else float(data.max())
    real = max(abs(lo), abs(hi))
    data = data.astype(np.float32)  # MKL-DNN scales in float32
    if _v2_out_type(attrs) == "uint8":
        q = np.clip(np.rint(data * np.float32(255.5 / real)), 0, 255).astype(np.uint8)
        return [q, np.array([lo], np.float32), np.array([hi], np.float32)]
    q = np.clip(np.rint(data * np.float32(127.5 / real)), -128, 127).astype(np.int8)
    return [q, np.array([-real], np.float32), np.array([real], np.float32)]


def _dequantize_sample(draw):
    d = Draw(draw)
    shape, data, lo, hi = _range_case(d)
    q, _, _ = quantize_values(np, data, float(lo[0]), float(hi[0]),
                              d.choice(["int8", "uint8"]))
    return Case([q, lo, hi], {})


def _dequantize_reference(raw, q, lo, hi):
    real = max(abs(float(lo[0])), abs(float(hi[0])))
    return q.astype(np.float64) * (real / (255.5 if q.dtype == np.uint8 else 127.5))


OPS = [
    Op("_contrib_quantize", params=QuantizeParam, num_inputs=3, num_outputs=3,
       input_names=["data", "min_range", "max_range"],
       infer_shape=_range_shapes("_contrib_quantize"), infer_type=_quantize_type,
       compute={XP: _quantize}, gradient=_NO_GRADIENT,
       domain=Domain(_quantize_sample, reference=_quantize_reference, dtypes=("float32",)),
       description="Quantize float32 data to ``out_type`` (uint8 or int8) for the range given "
                   "by the one-element arrays min_range and max_range; also returns the range "
                   "the integers stand for ((-r, r) for int8).  No gradient."),
    Op("_contrib_quantize_v2", params=QuantizeV2Param, num_inputs=1, num_outputs=3,
       input_names=["data"],
       infer_shape=_v2_shape, infer_type=_v2_type, compute={XP: _quantize_v2},
       gradient=_NO_GRADIENT,
       domain=Domain(_v2_sample, reference=_v2_reference, dtypes=("float32",)),
       description="Quantize float32 data to int8, uint8 or (``auto``) by the calibrated "
                   "range's sign, for min_calib_range/max_calib_range or the data's own range; "
                   "integer data passes through.  Returns the data and its range.  No "
                   "gradient."),
    Op("_contrib_dequantize", params=DequantizeParam, num_inputs=3,
       input_names=["data", "min_range", "max_range"],
       infer_shape=_range_shapes("_contrib_dequantize"), infer_type=_dequantize_type,
       compute={XP: _dequantize}, gradient=_NO_GRADIENT,
       domain=Domain(_dequantize_sample, reference=_dequantize_reference, dtypes=("float32",)),
       description="Float32 values of int8 or uint8 data standing for the range (min_range, "
                   "max_range).  No gradient."),
]
