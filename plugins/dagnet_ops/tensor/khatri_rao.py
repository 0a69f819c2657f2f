"""``khatri_rao``: the column-wise Kronecker product of ``num_args`` matrices.

For matrices ``A_1 (M_1, N) ... A_n (M_n, N)`` the result has shape ``(M_1 ... M_n, N)``;
its column ``k`` is the Kronecker product of the inputs' columns ``k``, the first input's
row index varying slowest.  MXNet registers no gradient for it; dagnet gives the exact
one: the head gradient, reshaped to ``(M_1, ..., M_n, N)``, contracted with every other
input's column.
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import REQUIRED, XP, Case, Domain, Field, Gradient, Op, Params

from . import _sampling as S
from ._common import backward_op, put, shape_error

__all__ = ["OPS"]

_NAME = "khatri_rao"


class KhatriRaoParam(Params):
    num_args = Field(int, REQUIRED, "Number of input matrices.", low=1)


def _infer(attrs, ins, outs):
    for i, shape in enumerate(ins):
        if shape is not None and len(shape) != 2:
            raise shape_error(_NAME, f"every input must be a matrix (2-D), arg{i} has shape "
                                     f"{tuple(shape)}")
    if any(s is None for s in ins):
        return ins, outs
    columns = {s[1] for s in ins}
    if len(columns) != 1:
        listed = ", ".join(f"arg{i} {tuple(s)}" for i, s in enumerate(ins))
        raise shape_error(_NAME, f"every input must have the same number of columns, got "
                                 f"{listed}")
    return ins, [(int(np.prod([s[0] for s in ins])), ins[0][1])]


def _product(xp, mats):
    """The (M_1, ..., M_n, N) outer product of the columns."""
    out = mats[0]
    for m in mats[1:]:
        out = out[..., None, :] * m.reshape((1,) * (out.ndim - 1) + m.shape)
    return out


def _forward(attrs, ctx, inputs, req, outputs):
    prod = _product(ctx.xp, list(inputs))
    put(outputs[0], req[0], prod.reshape(outputs[0].shape))


def _backward(attrs, ctx, inputs, req, outputs):
    xp, dy, mats = ctx.xp, inputs[0], list(inputs[1:])
    n = len(mats)
    g = dy.reshape(tuple(m.shape[0] for m in mats) + (dy.shape[-1],))
    for i in range(n):
        others = mats[:i] + [xp.ones((1, g.shape[-1]), dtype=g.dtype)] + mats[i + 1:]
        weight = _product(xp, others)  # (M_1, .., 1, .., M_n, N)
        axes = tuple(j for j in range(n) if j != i)
        put(outputs[i], req[i], (g * weight).sum(axis=axes).reshape(mats[i].shape))


def _sample(draw):
    n = S.integer(draw, 1, 3, "num_args")
    cols = S.integer(draw, 1, 3, "columns")
    mats = [S.floats(draw, (S.integer(draw, 1, 3, "rows"), cols)) for _ in range(n)]
    return Case(mats, {"num_args": n})


def _reference(raw, *mats):
    out = mats[0]
    for m in mats[1:]:
        out = np.stack([np.kron(out[:, k], m[:, k]) for k in range(m.shape[1])], axis=1)
    return out


OPS = [
    Op(_NAME, params=KhatriRaoParam, num_inputs=lambda attrs: attrs.num_args,
       input_names=lambda attrs: [f"arg{i}" for i in range(attrs.num_args)],
       key_var_num_args="num_args", infer_shape=_infer,
       compute={XP: _forward}, gradient=Gradient("_backward_khatri_rao", ("out_grad", "in_data")),
       domain=Domain(_sample, reference=_reference),
       description="The column-wise Khatri-Rao product of ``num_args`` matrices of one "
                   "column count N: shape ``(M_1 ... M_n, N)``, column k the Kronecker "
                   "product of the inputs' columns k (the first input's rows varying "
                   "slowest).  Gradient: the head gradient contracted with the other "
                   "inputs' columns (MXNet has none)."),
    backward_op(_NAME, KhatriRaoParam, lambda attrs: attrs.num_args + 1,
                lambda attrs: attrs.num_args, _backward),
]
