"""``_npx_constraint_check`` (``mx.npx.constraint_check``, MXNet's
``np_constraint_check.cc``): ``array(True)`` when every element of a boolean array is
true; otherwise the kernel fails with a ValueError carrying ``msg``, raised at the next
wait on the output.

Multiplying a value by the result keeps the check in a graph (``x * check(x > 0, msg)``):
an output nothing reads would be pruned from it.
"""

from __future__ import annotations

import numpy as np

from dagnet import DTypeError, ParamError
from dagnet.operator import XP, Case, Domain, Field, Op, OpReqType, Params, ZeroGradient

from . import _sampling as S
from ._common import put


class ConstraintCheckParam(Params):
    msg = Field(str, "Constraint violated.", "the message of the ValueError raised when an "
                                             "element is false")


def _check(attrs, ctx, inputs, req, outputs):
    if not bool(ctx.xp.all(inputs[0])):
        raise ParamError(attrs.msg)
    put(outputs[0], req[0], True)


def _scalar_out(attrs, ins, outs):
    return ins, [()]


def _bool_out(attrs, ins, outs):
    if ins[0] is not None and np.dtype(ins[0]) != np.bool_:
        raise DTypeError(f"operator '_npx_constraint_check': the input must be a boolean "
                         f"array, got {np.dtype(ins[0]).name}")
    return [np.dtype(np.bool_)], [np.dtype(np.bool_)]


def _sample(draw):
    return Case([np.ones(S.shape(draw, min_dims=0), dtype=np.bool_)],
                {"msg": S.choice(draw, ["Constraint violated.", "scale must be positive"])})


OPS = [Op(
    "_npx_constraint_check",
    description="``array(True)`` (bool, shape ()) when every element of ``input`` (a "
                "boolean array) is true; otherwise a ValueError with ``msg`` when the result "
                "is read.  Gradient zero.",
    params=ConstraintCheckParam,
    input_names=["input"],
    infer_shape=_scalar_out,
    infer_type=_bool_out,
    compute={XP: _check},
    gradient=ZeroGradient(),
    supported_req=frozenset({OpReqType.WRITE, OpReqType.NULL}),
    domain=Domain(_sample, lambda params, x: np.array(True)),
)]
