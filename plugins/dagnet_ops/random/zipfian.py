"""Samplers of the log-uniform (Zipfian) distribution over classes ``0 .. range_max - 1``,
``P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)``, used for sampled softmax:

- ``_sample_unique_zipfian``: per batch row, ``shape[1]`` distinct classes drawn without
  replacement, and how many draws that took;
- ``_contrib_rand_zipfian`` (``mx.nd.contrib.rand_zipfian``): ``num_sampled`` classes
  drawn with replacement, and the expected counts of the true and the sampled classes.
"""

from __future__ import annotations

import math

import numpy as np

from dagnet import ParamError, ShapeError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    NoGradient,
    Op,
    OpReqType,
    Params,
    Shape,
    ZeroGradient,
    assign,
    merge_shape,
)
from dagnet.resource import ResourceRequest

from .._draw import Draw
from .samplers import NOTE

__all__ = ["OPS"]


# -- _sample_unique_zipfian ---------------------------------------------------------------
class UniqueZipfianParam(Params):
    range_max = Field(int, REQUIRED, "the number of classes", low=1)
    shape = Field(Shape, None, "(batch size, distinct classes to draw per row)")


def _unique_shape(attrs, ins, outs):
    shape = tuple(attrs.shape) if attrs.shape is not None else outs[0]
    if shape is None:
        return [], outs
    if len(shape) != 2:
        raise ShapeError(f"operator '_sample_unique_zipfian': shape must be (batch size, "
                         f"classes per row), got {tuple(shape)}")
    if shape[1] > attrs.range_max:
        raise ParamError(f"operator '_sample_unique_zipfian': cannot draw {shape[1]} distinct "
                         f"classes out of range_max={attrs.range_max}")
    return [], [merge_shape(outs[0], shape, "_sample_unique_zipfian samples"),
                merge_shape(outs[1], (shape[0],), "_sample_unique_zipfian trial counts")]


def _unique_types(attrs, ins, outs):
    return [], [np.dtype(np.int64), np.dtype(np.int64)]


def _draw_classes(xp, generator, size, log_range):
    # exp(u * log(range_max)) lies in [1, range_max): rounded and shifted, a class id
    return xp.rint(xp.exp(generator.random(size) * log_range)).astype(xp.int64) - 1


def _unique_zipfian(attrs, ctx, inputs, req, outputs):
    xp, generator = ctx.xp, ctx.requested[0].generator
    samples, trials = outputs
    batch, wanted = samples.shape
    log_range = math.log(attrs.range_max)
    drawn = xp.empty((batch, wanted), dtype=xp.int64)
    counts = xp.empty((batch,), dtype=xp.int64)
    for row in range(batch):
        seen = xp.zeros(attrs.range_max, dtype=bool)
        found, tries = 0, 0
        while found < wanted:
            chunk = _draw_classes(xp, generator, max(2 * (wanted - found), 64), log_range)
            _, first = xp.unique(chunk, return_index=True)
            first = xp.sort(first)
            first = first[~seen[chunk[first]]]  # new classes, in the order they were drawn
            take = first[:wanted - found]
            drawn[row, found:found + take.size] = chunk[take]
            seen[chunk[take]] = True
            found += int(take.size)
            tries += int(take[-1]) + 1 if found == wanted else chunk.size
        counts[row] = tries
    assign(samples, req[0], drawn)
    assign(trials, req[1], counts)


def _sample_unique(draw):
    d = Draw(draw)
    range_max = d.int(1, 50, "range_max")
    return Case([], {"range_max": range_max,
                     "shape": (d.int(1, 3, "batch"), d.int(1, range_max, "classes"))})


UniqueZipfian = Op(
    "_sample_unique_zipfian",
    description=f"""Draws distinct classes from the log-uniform distribution over
``[0, range_max)``: class ``round(exp(u * log(range_max))) - 1`` for uniform ``u``,
drawn until each batch row holds ``shape[1]`` distinct classes (in the order first
drawn).  Outputs: the classes (int64, ``shape``) and the number of draws per row (int64,
``(shape[0],)``).

{NOTE}""",
    params=UniqueZipfianParam,
    num_inputs=0,
    num_outputs=2,
    input_names=[],
    output_names=["output", "num_trials"],
    infer_shape=_unique_shape,
    infer_type=_unique_types,
    compute={XP: _unique_zipfian},
    gradient=NoGradient("sampling"),
    resources=[ResourceRequest("random")],
    supported_req=frozenset({OpReqType.WRITE, OpReqType.NULL}),
    domain=Domain(_sample_unique, None),
)


# -- _contrib_rand_zipfian -------------------------------------------------------------------
class RandZipfianParam(Params):
    num_sampled = Field(int, REQUIRED, "classes to draw (with replacement)", low=1)
    range_max = Field(int, REQUIRED, "the number of classes", low=1)


def _rand_shape(attrs, ins, outs):
    sampled = (attrs.num_sampled,)
    return ins, [merge_shape(outs[0], sampled, "rand_zipfian sampled classes"),
                 merge_shape(outs[1], ins[0], "rand_zipfian expected counts of the true "
                                              "classes"),
                 merge_shape(outs[2], sampled, "rand_zipfian expected counts of the sampled "
                                               "classes")]


def _rand_types(attrs, ins, outs):
    return ins, [np.dtype(np.int64), np.dtype(np.float64), np.dtype(np.float64)]


def _expected_count(xp, classes, log_range, num_sampled):
    classes = classes.astype(xp.float64)
    return xp.log((classes + 2.0) / (classes + 1.0)) / log_range * num_sampled


def _rand_zipfian(attrs, ctx, inputs, req, outputs):
    xp, generator = ctx.xp, ctx.requested[0].generator
    log_range = math.log(attrs.range_max + 1)
    u = generator.random((attrs.num_sampled,)) * log_range
    sampled = (xp.exp(u) - 1).astype(xp.int64) % attrs.range_max
    assign(outputs[0], req[0], sampled)
    assign(outputs[1], req[1], _expected_count(xp, inputs[0], log_range, attrs.num_sampled))
    assign(outputs[2], req[2], _expected_count(xp, sampled, log_range, attrs.num_sampled))


def _sample_rand(draw):
    d = Draw(draw)
    range_max = d.int(1, 50, "range_max")
    classes = d.rng.integers(0, range_max, size=d.shape(d.int(1, 2))).astype(np.float64)
    return Case([classes], {"num_sampled": d.int(1, 20, "num_sampled"),
                            "range_max": range_max})


RandZipfian = Op(
    "_contrib_rand_zipfian",
    description=f"""Draws ``num_sampled`` classes with replacement from the log-uniform
distribution over ``[0, range_max)``, ``P(c) = log((c + 2) / (c + 1)) / log(range_max + 1)``
(MXNet's ``contrib.rand_zipfian``, for sampled softmax).  Outputs: the sampled classes
(int64), the expected counts ``P(c) * num_sampled`` of the classes in ``true_classes``
and of the sampled classes (float64).  The gradient with respect to the class ids is
zero: they are labels.

{NOTE}""",
    params=RandZipfianParam,
    num_inputs=1,
    num_outputs=3,
    input_names=["true_classes"],
    output_names=["sampled_classes", "expected_count_true", "expected_count_sampled"],
    infer_shape=_rand_shape,
    infer_type=_rand_types,
    compute={XP: _rand_zipfian},
    gradient=ZeroGradient(),
    resources=[ResourceRequest("random")],
    supported_req=frozenset({OpReqType.WRITE, OpReqType.NULL}),
    domain=Domain(_sample_rand, None),
)

OPS = [UniqueZipfian, RandZipfian]
