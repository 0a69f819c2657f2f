"""``_shuffle``: a copy of ``data`` with its first axis in random order (MXNet's
``shuffle_op``); each row keeps its contents.  It may run in place."""

from __future__ import annotations

import numpy as np

from dagnet.operator import (
    XP,
    Case,
    Domain,
    NoGradient,
    Op,
    OpReqType,
    assign,
    elemwise_shape,
    elemwise_type,
)
from dagnet.resource import ResourceRequest

from .._draw import Draw

__all__ = ["OPS"]


def _shuffle(attrs, ctx, inputs, req, outputs):
    data = inputs[0]
    if data.ndim == 0 or data.shape[0] < 2:
        assign(outputs[0], req[0], data)
        return
    generator = ctx.requested[0].generator
    permutation = getattr(generator, "permutation", None)  # cupy's Generator has none
    order = (permutation(data.shape[0]) if permutation is not None
             else ctx.xp.argsort(generator.random(data.shape[0])))
    assign(outputs[0], req[0], data[order])  # data[order] is a copy: safe in place


def _sample(draw):
    # equal rows: every order gives the same array, so the suite can compare with a
    # reference and check the in-place run (the order itself is tested directly)
    d = Draw(draw)
    row = d.uniform(d.shape(d.int(0, 2)))
    return Case([np.broadcast_to(row, (d.int(1, 4, "rows"),) + row.shape).copy()], {})


Shuffle = Op(
    "_shuffle",
    description="""Shuffles ``data`` along its first axis: a random permutation of the rows
(or elements, for 1-d data), each row's contents kept in order.  Not differentiable.

The conformance suite's cases have equal rows (the result is then known); the
permutation's distribution is tested directly.""",
    num_inputs=1,
    input_names=["data"],
    output_names=["output"],
    infer_shape=elemwise_shape("_shuffle"),
    infer_type=elemwise_type,
    compute={XP: _shuffle},
    gradient=NoGradient("shuffling is not differentiable"),
    inplace=[(0, 0)],
    resources=[ResourceRequest("random")],
    supported_req=frozenset({OpReqType.WRITE, OpReqType.INPLACE, OpReqType.NULL}),
    domain=Domain(_sample, lambda params, data: data),
    aliases=("shuffle",),
)

OPS = [Shuffle]
