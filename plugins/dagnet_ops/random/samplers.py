"""``_random_uniform`` and ``_random_normal``: samples of a given shape.

The stream comes from the device's generator (``ResourceRequest('random')``), so
``dagnet.random.seed(n)`` makes every draw reproducible.
"""

from __future__ import annotations

import numpy as np

from dagnet import ParamError, ShapeError
from dagnet.operator import (
    XP,
    Case,
    Domain,
    DType,
    Field,
    NoGradient,
    Op,
    OpReqType,
    Params,
    Shape,
    assign,
    merge_dtype,
)
from dagnet.resource import ResourceRequest

from .._draw import Draw

__all__ = ["OPS"]


class _DeviceField(Field):
    """MXNet's ``ctx`` string parameter (``''`` or ``'cpu(0)'``); a Context becomes its name."""

    def _convert(self, value):
        if hasattr(value, "device_type") and hasattr(value, "device_id"):
            return f"{value.device_type}({value.device_id})"
        return super()._convert(value)


class _SamplerParam(Params):
    shape = Field(Shape, None, "the output shape (None: taken from the output array)")
    ctx = _DeviceField(str, "", "the device to sample on, as 'cpu(0)' or 'gpu(1)' "
                                "('' : the default device); used by the front end")
    dtype = Field(DType, None, "the output dtype (None: float32, or the output array's)",
                  choices=("float16", "float32", "float64"))


class UniformParam(_SamplerParam):
    low = Field(float, 0.0, "lower bound (inclusive)")
    high = Field(float, 1.0, "upper bound (exclusive)")


class NormalParam(_SamplerParam):
    loc = Field(float, 0.0, "mean")
    scale = Field(float, 1.0, "standard deviation", low=0.0)


def _make_infer_shape(name):
    def infer(attrs, ins, outs):
        shape = outs[0]
        if attrs.shape:
            wanted = tuple(attrs.shape)
            if shape is not None and tuple(shape) != wanted and all(shape):
                raise ShapeError(f"operator {name!r}: shape={wanted} does not match the output "
                                 f"array's shape {tuple(shape)}")
            shape = wanted
        return [], [shape]

    return infer


def _infer_type(attrs, ins, outs):
    if attrs.dtype is not None:
        return [], [merge_dtype(np.dtype(attrs.dtype), outs[0], "sampled output")]
    return [], [outs[0] if outs[0] is not None else np.dtype(np.float32)]


def _uniform(attrs, ctx, inputs, req, outputs):
    if attrs.high < attrs.low:
        raise ParamError(
            f"operator '_random_uniform': low={attrs.low} must not exceed high={attrs.high}")
    out = outputs[0]
    sample = ctx.requested[0].generator.random(out.shape)
    assign(out, req[0], attrs.low + (attrs.high - attrs.low) * sample)


def _normal(attrs, ctx, inputs, req, outputs):
    out = outputs[0]
    sample = ctx.requested[0].generator.standard_normal(out.shape)
    assign(out, req[0], attrs.loc + attrs.scale * sample)


def _sample_uniform(draw):
    d = Draw(draw)
    low = d.float(-3, 3, "low")
    return Case([], {"low": low, "high": low + d.float(0, 3, "width"),
                     "shape": d.shape(d.int(1, 3))})


def _sample_normal(draw):
    d = Draw(draw)
    return Case([], {"loc": d.float(-3, 3, "loc"), "scale": d.float(0, 3, "scale"),
                     "shape": d.shape(d.int(1, 3))})


_NOTE = """No reference: samples differ between runs, so the conformance suite checks only
the declarations, shapes and the ``null`` write mode (``add`` is not supported,
like MXNet's samplers, which only write); the distribution is tested directly."""


def _sampler(name, params, compute, sample, doc, aliases):
    return Op(
        name,
        description=f"{doc}\n\n{_NOTE}",
        params=params,
        num_inputs=0,
        input_names=[],
        output_names=["output"],
        infer_shape=_make_infer_shape(name),
        infer_type=_infer_type,
        compute={XP: compute},
        gradient=NoGradient("sampling"),
        resources=[ResourceRequest("random")],
        supported_req=frozenset({OpReqType.WRITE, OpReqType.NULL}),
        domain=Domain(sample, None),
        aliases=aliases,
    )


OPS = [
    _sampler("_random_uniform", UniformParam, _uniform, _sample_uniform,
             "Samples from the uniform distribution on ``[low, high)``.",
             ("random_uniform", "uniform")),
    _sampler("_random_normal", NormalParam, _normal, _sample_normal,
             "Samples from the normal distribution with mean ``loc`` and standard deviation "
             "``scale``.",
             ("random_normal", "normal")),
]
