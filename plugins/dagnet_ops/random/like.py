"""``_random_<d>_like``: samples with the shape and dtype of an input array, from a
distribution with scalar parameters (MXNet's ``mx.nd.random.<d>_like``).

Only the input's shape and dtype are read, never its values; the gradient with respect
to it is zero, as in MXNet.
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import (
    XP,
    Case,
    Domain,
    Field,
    Op,
    OpReqType,
    Params,
    ZeroGradient,
    assign,
    elemwise_shape,
    elemwise_type,
)
from dagnet.resource import ResourceRequest

from .._draw import Draw
from ._distributions import DISTRIBUTIONS, Distribution, check_values
from .samplers import NOTE, draw_scalars

__all__ = ["OPS"]


def _params_class(dist: Distribution) -> type[Params]:
    fields = {s.name: Field(s.type, s.default, s.desc) for s in dist.scalars}
    name = "".join(part.title() for part in dist.name.split("_")) + "LikeParam"
    return type(name, (Params,), fields)


def _like_op(dist: Distribution) -> Op:
    name = f"_random_{dist.name}_like"

    def compute(attrs, ctx, inputs, req, outputs):
        out = outputs[0]
        values = [getattr(attrs, s.name) for s in dist.scalars]
        check_values(name, dist, [s.name for s in dist.scalars], values, np)
        assign(out, req[0], dist.draw(ctx.requested[0].generator, ctx.xp, values,
                                      tuple(out.shape)))

    def sample(draw):
        d = Draw(draw)
        return Case([d.uniform(d.shape(d.int(1, 3)))], draw_scalars(d, dist))

    return Op(
        name,
        description=f"Samples from {dist.doc}, shaped like ``data``.\n\n{NOTE}",
        params=_params_class(dist),
        num_inputs=1,
        input_names=["data"],
        output_names=["output"],
        infer_shape=elemwise_shape(name),
        infer_type=elemwise_type,
        compute={XP: compute},
        gradient=ZeroGradient(),
        resources=[ResourceRequest("random")],
        supported_req=frozenset({OpReqType.WRITE, OpReqType.NULL}),
        domain=Domain(sample, None),
    )


OPS = [_like_op(d) for d in DISTRIBUTIONS.values()]
