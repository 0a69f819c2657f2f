"""``_sample_<d>``: one distribution per element of parameter arrays (MXNet's
``src/operator/random/multisample_op``).

The parameter inputs share one shape ``P``; the output has shape ``P + shape`` and holds
``prod(shape)`` samples drawn with each element's parameters.  This is what
``mx.nd.random.normal(mu_array, sigma_array, shape=...)`` calls.  The output dtype is
``dtype`` (default float32), whatever the parameters' floating dtype.  Gradients with
respect to the parameters are zero, as in MXNet.
"""

from __future__ import annotations

import numpy as np

from dagnet import DTypeError, ShapeError
from dagnet.operator import (
    XP,
    Case,
    Domain,
    DType,
    Field,
    Op,
    OpReqType,
    Params,
    Shape,
    ZeroGradient,
    assign,
    merge_dtype,
    merge_shape,
)
from dagnet.resource import ResourceRequest

from .._draw import Draw
from ._distributions import DISTRIBUTIONS, Distribution, check_values
from .samplers import FLOAT_DTYPES, NOTE

__all__ = ["OPS", "MultiSampleParam"]


class MultiSampleParam(Params):
    shape = Field(Shape, (), "the shape sampled from each distribution (appended to the "
                             "parameters' shape)")
    dtype = Field(DType, None, "the output dtype (None: float32)", choices=FLOAT_DTYPES)


def _infer_shape(name, n_inputs):
    def infer(attrs, ins, outs):
        extra = tuple(attrs.shape)
        params = None
        for i, s in enumerate(ins):
            params = merge_shape(params, s, f"operator {name!r}, parameter input {i}")
        out = outs[0]
        if out is not None and params is None and len(out) >= len(extra):
            params = tuple(out[:len(out) - len(extra)])
        if params is not None:
            out = merge_shape(out, tuple(params) + extra, f"operator {name!r}, output")
        if out is not None and params is not None and len(out) != len(params) + len(extra):
            raise ShapeError(f"operator {name!r}: output shape {tuple(out)} is not the "
                             f"parameters' shape {tuple(params)} followed by shape={extra}")
        return [params] * n_inputs, [out]

    return infer


def _infer_type(name, n_inputs):
    def infer(attrs, ins, outs):
        merged = None
        for t in ins:
            merged = merge_dtype(merged, t, f"operator {name!r}: parameter inputs")
        if merged is not None and np.dtype(merged).name not in FLOAT_DTYPES:
            raise DTypeError(f"operator {name!r}: parameters must be float16, float32 or "
                             f"float64 arrays, got {np.dtype(merged).name}")
        wanted = np.dtype(attrs.dtype) if attrs.dtype is not None else None
        out = merge_dtype(wanted, outs[0], f"operator {name!r}: output")
        return [merged] * n_inputs, [out if out is not None else np.dtype(np.float32)]

    return infer


def _multisample_op(dist: Distribution) -> Op:
    name = f"_sample_{dist.name}"
    n = len(dist.inputs)

    def compute(attrs, ctx, inputs, req, outputs):
        xp, out = ctx.xp, outputs[0]
        check_values(name, dist, dist.inputs, inputs, xp)
        extra = (1,) * len(attrs.shape)
        params = [p.astype(xp.float64).reshape(p.shape + extra) for p in inputs]
        assign(out, req[0], dist.draw(ctx.requested[0].generator, xp, params, tuple(out.shape)))

    def sample(draw):
        d = Draw(draw)
        shape = d.shape(d.int(1, 2))
        inputs = []
        for s in dist.scalars:
            low = 0.0 if s.low is None else s.low + (0.1 if s.open_low else 0.0)
            high = s.high if s.high is not None else low + 3.0
            values = d.rng.uniform(low, high, size=shape)
            inputs.append(np.ceil(values) if s.type is int else values)
        if dist.ordered:  # the second bound above the first
            inputs[1] = inputs[0] + np.abs(inputs[1])
        return Case(inputs, {"shape": d.shape(d.int(0, 2))})

    return Op(
        name,
        description=f"Samples from {dist.doc}, one distribution per element of the parameter "
                    f"arrays ({', '.join(dist.inputs)}); output shape: their shape followed "
                    f"by ``shape``.\n\n{NOTE}",
        params=MultiSampleParam,
        num_inputs=n,
        input_names=list(dist.inputs),
        output_names=["output"],
        infer_shape=_infer_shape(name, n),
        infer_type=_infer_type(name, n),
        compute={XP: compute},
        gradient=ZeroGradient(),
        resources=[ResourceRequest("random")],
        supported_req=frozenset({OpReqType.WRITE, OpReqType.NULL}),
        domain=Domain(sample, None),
        aliases=(f"sample_{dist.name}",),
    )


OPS = [_multisample_op(d) for d in DISTRIBUTIONS.values()]
