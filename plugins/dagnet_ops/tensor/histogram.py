"""``_histogram`` (MXNet's ``histogram.cc``, behind ``nd.histogram``/``sym.histogram``):
numpy's ``histogram`` over the flattened input.

Either ``bin_cnt`` equal bins over ``range`` (one input), or the bin edges given
as a second input ``bins``.  Outputs: the counts (int64) and the bin edges (the
data's dtype).  Every bin is half-open except the last, which includes its right
edge; values outside the bins are not counted.  Not differentiable (zero gradient).
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import XP, Case, Domain, Field, Op, Params, ZeroGradient

from .._fields import FloatTuple
from . import _sampling as S
from ._common import known, put, shape_error, with_attrs


class HistogramParam(Params):
    bin_cnt = Field(int, None, "Number of bins for uniform case", optional=True, low=1)
    range = FloatTuple(None, "The lower and upper range of the bins. if not provided, range "
                             "is simply (a.min(), a.max()). values outside the range are "
                             "ignored. the first element of the range must be less than or "
                             "equal to the second. range affects the automatic bin "
                             "computation as well. while bin width is computed to be "
                             "optimal based on the actual data within range, the bin count "
                             "will fill the entire range including portions containing no "
                             "data.", optional=True)


def _n_inputs(attrs: HistogramParam) -> int:
    return 1 if attrs.bin_cnt is not None else 2


def _range(attrs: HistogramParam) -> tuple[float, float]:
    if attrs.range is None or len(attrs.range) != 2:
        raise shape_error("_histogram", "bin_cnt needs range=(low, high)")
    lo, hi = (float(v) for v in attrs.range)
    if lo > hi:
        raise shape_error("_histogram", f"range=({lo}, {hi}): the low end exceeds the high end")
    return lo, hi


def _infer(attrs, ins, outs):
    if attrs.bin_cnt is not None:
        n = attrs.bin_cnt
    elif known(ins[1]) if len(ins) > 1 else False:
        n = ins[1][0] - 1
    else:
        return ins, outs
    return ins, [(n,), (n + 1,)]


def _type(attrs, ins, outs):
    data = ins[0] if ins[0] is not None else (ins[1] if len(ins) > 1 else None)
    return ins, [np.dtype(np.int64), data if data is not None else outs[1]]


def _edges(xp, attrs, inputs):
    if attrs.bin_cnt is not None:
        lo, hi = _range(attrs)
        return xp.linspace(lo, hi, attrs.bin_cnt + 1)
    return inputs[1].astype(np.float64)


def _compute(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    edges = _edges(xp, attrs, inputs)
    counts, _ = xp.histogram(inputs[0].astype(np.float64).ravel(), bins=edges)
    put(outputs[0], req[0], counts)
    put(outputs[1], req[1], edges)


def _sample(draw):
    x = S.floats(draw, S.shape(draw), -3.0, 3.0)
    if S.boolean(draw, "uniform bins"):
        return Case([x], {"bin_cnt": S.integer(draw, 1, 5, "bin_cnt"), "range": (-2, 2)})
    edges = np.unique(S.grid(draw, (S.integer(draw, 2, 5, "edges"),), -2.0, 2.0, step=0.25))
    return Case([x, edges])


def _reference(p: HistogramParam, x: np.ndarray, *edges: np.ndarray) -> list:
    bins = np.linspace(*p.range, p.bin_cnt + 1) if p.bin_cnt is not None else edges[0]
    counts, bounds = np.histogram(x.ravel(), bins=bins)
    return [counts, bounds]


OPS: list[Op] = [
    Op("_histogram", params=HistogramParam, num_inputs=_n_inputs,
       input_names=lambda a: ["data"] if a.bin_cnt is not None else ["data", "bins"],
       num_outputs=2, infer_shape=_infer, infer_type=_type, compute={XP: _compute},
       gradient=ZeroGradient(),
       domain=Domain(_sample, reference=with_attrs(HistogramParam, "_histogram", _reference),
                     differentiable=()),
       description="Histogram of the flattened data: ``bin_cnt`` equal bins over ``range``, "
                   "or the edges given as input ``bins`` (rising).  Outputs the counts "
                   "(int64, one per bin) and the edges (data's dtype); the last bin includes "
                   "its right edge and values outside are not counted (numpy's histogram).  "
                   "Not differentiable: zero gradient."),
]
