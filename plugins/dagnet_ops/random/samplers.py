"""``_random_<d>``: samples of a given shape from a distribution with scalar parameters
(uniform, normal, gamma, exponential, poisson, negative_binomial,
generalized_negative_binomial), and ``_random_randint``.

The stream comes from the device's generator (``ResourceRequest('random')``), so
``dagnet.random.seed(n)`` makes every draw reproducible.  Parameter values are checked
by the kernel, as in MXNet: a bad value (a negative ``scale``) fails the operation, and
the error is raised at the next wait on its output (MXNet's exception tests rely on it).
"""

from __future__ import annotations

import numpy as np

from dagnet import ParamError, ShapeError
from dagnet.operator import (
    REQUIRED,
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
from dagnet.util import is_np_shape

from .._draw import Draw
from ._distributions import DISTRIBUTIONS, Distribution, check_values

__all__ = ["OPS", "DeviceField", "NOTE", "draw_scalars", "sampler"]


class DeviceField(Field):
    """MXNet's ``ctx`` string parameter (``''`` or ``'cpu(0)'``); a Context becomes its name."""

    def _convert(self, value):
        if hasattr(value, "device_type") and hasattr(value, "device_id"):
            return f"{value.device_type}({value.device_id})"
        return super()._convert(value)


FLOAT_DTYPES = ("float16", "float32", "float64")


def _common_fields(dtypes=FLOAT_DTYPES, default_name="float32"):
    return {
        "shape": Field(Shape, None, "the output shape (None: taken from the output array)"),
        "ctx": DeviceField(str, "", "the device to sample on, as 'cpu(0)' or 'gpu(1)' "
                                    "('' : the default device); used by the front end"),
        "dtype": Field(DType, None, f"the output dtype (None: {default_name}, or the output "
                                    f"array's)", choices=dtypes),
    }


def _params_class(dist: Distribution) -> type[Params]:
    fields = {s.name: Field(s.type, s.default, s.desc) for s in dist.scalars}
    name = "".join(part.title() for part in dist.name.split("_")) + "Param"
    return type(name, (Params,), {**fields, **_common_fields()})


def _make_infer_shape(name):
    def infer(attrs, ins, outs):
        shape = outs[0]
        if attrs.shape or (shape is None and is_np_shape()):  # shape=(): one value
            wanted = tuple(attrs.shape)
            if shape is not None and tuple(shape) != wanted and all(shape):
                raise ShapeError(f"operator {name!r}: shape={wanted} does not match the output "
                                 f"array's shape {tuple(shape)}")
            shape = wanted
        return [], [shape]

    return infer


def _make_infer_type(default):
    def infer(attrs, ins, outs):
        if attrs.dtype is not None:
            return [], [merge_dtype(np.dtype(attrs.dtype), outs[0], "sampled output")]
        return [], [outs[0] if outs[0] is not None else np.dtype(default)]

    return infer


def _kernel(name, dist):
    def compute(attrs, ctx, inputs, req, outputs):
        out = outputs[0]
        values = [getattr(attrs, s.name) for s in dist.scalars]
        check_values(name, dist, [s.name for s in dist.scalars], values, np)
        assign(out, req[0], dist.draw(ctx.requested[0].generator, ctx.xp, values,
                                      tuple(out.shape)))

    return compute


def draw_scalars(d: Draw, dist: Distribution) -> dict:
    """Valid scalar parameters of ``dist`` for a conformance-suite case."""
    params = {}
    for s in dist.scalars:
        low = 0.0 if s.low is None else s.low + (0.1 if s.open_low else 0.0)
        high = s.high if s.high is not None else low + 3.0
        params[s.name] = d.int(1, 4, s.name) if s.type is int else d.float(low, high, s.name)
    if dist.ordered:  # the second bound above the first
        first, second = (s.name for s in dist.scalars)
        params[second] = params[first] + abs(params[second])
    return params


def _domain(dist):
    def sample(draw):
        d = Draw(draw)
        return Case([], dict(draw_scalars(d, dist), shape=d.shape(d.int(1, 3))))

    return Domain(sample, None)


NOTE = """No reference: samples differ between runs, so the conformance suite checks only
the declarations, shapes and the ``null`` write mode (``add`` is not supported,
like MXNet's samplers, which only write); the distribution is tested directly."""


def sampler(name, params, compute, domain, doc, aliases=(), default_dtype="float32"):
    """A sampler without inputs: output shape from ``shape=`` or the output array."""
    return Op(
        name,
        description=f"{doc}\n\n{NOTE}",
        params=params,
        num_inputs=0,
        input_names=[],
        output_names=["output"],
        infer_shape=_make_infer_shape(name),
        infer_type=_make_infer_type(default_dtype),
        compute={XP: compute},
        gradient=NoGradient("sampling"),
        resources=[ResourceRequest("random")],
        supported_req=frozenset({OpReqType.WRITE, OpReqType.NULL}),
        domain=domain,
        aliases=aliases,
    )


def _distribution_sampler(dist: Distribution) -> Op:
    name = f"_random_{dist.name}"
    aliases = (f"random_{dist.name}",) + ((dist.name,) if dist.name in ("uniform", "normal")
                                          else ())
    return sampler(name, _params_class(dist), _kernel(name, dist), _domain(dist),
                   f"Samples from {dist.doc}.", aliases)


# -- randint ---------------------------------------------------------------------------
class RandIntParam(Params):
    low = Field(int, REQUIRED, "lower bound (inclusive)")
    high = Field(int, REQUIRED, "upper bound (exclusive)")
    shape = Field(Shape, None, "the output shape (None: taken from the output array)")
    ctx = DeviceField(str, "", "the device to sample on, as 'cpu(0)' or 'gpu(1)' "
                               "('' : the default device); used by the front end")
    dtype = Field(DType, None, "the output dtype (None: int32, or the output array's)",
                  choices=("int32", "int64"))


def _randint(attrs, ctx, inputs, req, outputs):
    if attrs.high <= attrs.low:
        raise ParamError(f"operator '_random_randint': low={attrs.low} must be below "
                         f"high={attrs.high} (samples lie in [low, high))")
    out = outputs[0]
    info = np.iinfo(out.dtype)
    if attrs.low < info.min or attrs.high - 1 > info.max:
        raise ParamError(f"operator '_random_randint': [{attrs.low}, {attrs.high}) does not fit "
                         f"the output dtype {np.dtype(out.dtype).name}; use dtype='int64'")
    generator = ctx.requested[0].generator
    assign(out, req[0], generator.integers(attrs.low, attrs.high, size=tuple(out.shape),
                                           dtype=ctx.xp.int64))


def _sample_randint(draw):
    d = Draw(draw)
    low = d.int(-50, 50, "low")
    return Case([], {"low": low, "high": low + d.int(1, 20, "width"),
                     "shape": d.shape(d.int(1, 3))})


RandInt = sampler(
    "_random_randint", RandIntParam, _randint, Domain(_sample_randint, None),
    "Samples integers uniformly from ``[low, high)``.", ("random_randint",),
    default_dtype="int32")

OPS = [_distribution_sampler(d) for d in DISTRIBUTIONS.values()] + [RandInt]
