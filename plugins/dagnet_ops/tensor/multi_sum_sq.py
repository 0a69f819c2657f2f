"""``multi_sum_sq`` (MXNet's ``contrib/multi_sum_sq.cc``): the sum of squares of each of
``num_arrays`` arrays, in one float32 array of shape ``(num_arrays,)``.

What a global gradient norm over many parameters runs (GluonNLP's ``grad_global_norm``):
one call instead of one reduction per gradient.  MXNet gives it no gradient.
"""

from __future__ import annotations

import numpy as np

from dagnet import DTypeError
from dagnet.operator import REQUIRED, XP, Case, Domain, Field, NoGradient, Op, Params

from . import _sampling as S
from ._common import put

__all__ = ["OPS"]

_FLOAT32 = np.dtype(np.float32)


class MultiSumSqParam(Params):
    num_arrays = Field(int, REQUIRED, "how many arrays are given", low=1)


def _infer_shape(attrs, ins, outs):
    return list(ins), [(attrs.num_arrays,)]


def _infer_type(attrs, ins, outs):
    known = {np.dtype(t) for t in ins if t is not None}
    if len(known) > 1:
        raise DTypeError(f"operator 'multi_sum_sq' needs one dtype for all its inputs, got "
                         f"{', '.join(sorted(t.name for t in known))}; cast them first")
    common = known.pop() if known else None
    return [common] * len(ins), [_FLOAT32]


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    # float64 inputs sum in float64; the narrower ones in float32 (what MXNet accumulates in)
    sums = [xp.sum(xp.square(x, dtype=xp.float64 if x.dtype == np.float64 else xp.float32))
            for x in inputs]
    put(outputs[0], req[0], xp.stack(sums).astype(np.float32))


def _case(draw):
    count = S.integer(draw, 1, 3, "num_arrays")
    return Case([S.floats(draw, S.shape(draw)) for _ in range(count)], {"num_arrays": count})


def _reference(params, *arrays):
    return np.array([np.sum(np.square(a, dtype=np.float64)) for a in arrays], dtype=np.float32)


OPS: list[Op] = [
    Op("multi_sum_sq", params=MultiSumSqParam, num_inputs=lambda a: a.num_arrays,
       input_names=lambda a: [f"array_{i}" for i in range(a.num_arrays)],
       key_var_num_args="num_arrays", infer_shape=_infer_shape, infer_type=_infer_type,
       compute={XP: _forward}, gradient=NoGradient("MXNet's multi_sum_sq has none"),
       domain=Domain(_case, _reference, rtol=1e-5, atol=1e-6),
       description="The sum of squares of each of the ``num_arrays`` inputs (one dtype, any "
                   "shapes): a float32 array of shape ``(num_arrays,)``.  No gradient."),
]
