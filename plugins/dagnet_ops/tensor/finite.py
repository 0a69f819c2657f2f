"""``all_finite`` and ``multi_all_finite`` (MXNet's ``all_finite.cc``): whether every
element of one or several arrays is finite, as a float32 array of shape (1,).

MXNet uses them in mixed-precision training to skip an update after an overflow.
With ``init_output=False`` the output is only ever lowered to 0, never raised to 1,
so one output can collect the verdicts of several calls.
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import XP, Case, Domain, Field, Op, Params, ZeroGradient

from . import _sampling as S
from ._common import fixed_out_type, put


class AllFiniteParam(Params):
    init_output = Field(bool, True, "Initialize output to 1.")


class MultiAllFiniteParam(Params):
    num_arrays = Field(int, 1, "Number of arrays.", low=1)
    init_output = Field(bool, True, "Initialize output to 1.")


def _verdict(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    finite = all(bool(xp.all(xp.isfinite(x))) for x in inputs)
    if attrs.init_output:
        put(outputs[0], req[0], xp.full((1,), 1.0 if finite else 0.0, dtype=np.float32))
    elif not finite:
        outputs[0][...] = 0


def _sample(draw, n):
    arrays = []
    for _ in range(n):
        x = S.floats(draw, S.shape(draw))
        if S.boolean(draw, "overflow"):
            x.flat[0] = np.inf
        arrays.append(x)
    return arrays


def _reference(raw, *arrays):
    return np.array([float(all(np.isfinite(a).all() for a in arrays))], dtype=np.float32)


def _one_out(attrs, ins, outs):
    return ins, [(1,)]


OPS: list[Op] = [
    Op("all_finite", params=AllFiniteParam, input_names=["data"], infer_shape=_one_out,
       infer_type=fixed_out_type(lambda attrs, ins: np.dtype(np.float32)),
       compute={XP: _verdict}, gradient=ZeroGradient(),
       domain=Domain(lambda draw: Case(_sample(draw, 1)), reference=_reference),
       description="1 (float32, shape (1,)) when every element of data is finite, else 0.  "
                   "With init_output=False the output is set to 0 on a non-finite element and "
                   "left as it was otherwise.  Gradient zero."),
    Op("multi_all_finite", params=MultiAllFiniteParam, num_inputs=lambda a: a.num_arrays,
       input_names=lambda a: [f"arg{i}" for i in range(a.num_arrays)],
       key_var_num_args="num_arrays", infer_shape=_one_out,
       infer_type=fixed_out_type(lambda attrs, ins: np.dtype(np.float32)),
       compute={XP: _verdict}, gradient=ZeroGradient(),
       domain=Domain(lambda draw: _multi_case(draw), reference=_reference),
       description="1 (float32, shape (1,)) when every element of all ``num_arrays`` inputs "
                   "is finite, else 0 (init_output as for all_finite).  Gradient zero."),
]


def _multi_case(draw):
    n = S.integer(draw, 1, 3, "num_arrays")
    return Case(_sample(draw, n), {"num_arrays": n})
