"""``fill_element_0index`` (MXNet's legacy NDArray function ``MatFillRowElem``): a copy of
a matrix with one element per row replaced, ``out[i, rhs[i]] = mhs[i]``.

``lhs`` is (N, M), ``mhs`` and ``rhs`` are (N,); indices are truncated to integers (MXNet
passes them as float arrays) and must lie in [0, M).  MXNet declares no gradient for it;
dagnet's is the one the formula implies: lhs gets the head gradient except at the filled
places, mhs the head gradient at them, the indices zero.
"""

from __future__ import annotations

import numpy as np

from dagnet import OperatorError
from dagnet.operator import XP, Case, Domain, Gradient, NoParams, Op

from . import _sampling as S
from ._common import backward_op, first_input_type, put, shape_error

__all__ = ["OPS"]

_NAME = "fill_element_0index"


def _infer(attrs, ins, outs):
    lhs, mhs, rhs = ins
    if lhs is not None and len(lhs) != 2:
        raise shape_error(_NAME, f"lhs must be a matrix (N, M), got shape {tuple(lhs)}")
    rows = lhs[0] if lhs is not None else (mhs or rhs or [None])[0]
    for name, shape in (("mhs", mhs), ("rhs", rhs)):
        if shape is not None and (len(shape) != 1 or (rows and shape[0] and shape[0] != rows)):
            raise shape_error(_NAME, f"{name} must be a vector of one value per row of lhs "
                                     f"({rows},), got shape {tuple(shape)}")
    if lhs is None:
        return ins, outs
    return [lhs, (lhs[0],), (lhs[0],)], [lhs]


def _columns(xp, lhs, rhs):
    cols = rhs.astype(np.int64)
    if cols.size and bool(xp.any((cols < 0) | (cols >= lhs.shape[1]))):
        raise OperatorError(f"operator {_NAME!r}: an index in rhs is outside [0, "
                            f"{lhs.shape[1]}), the columns of lhs")
    return xp.arange(lhs.shape[0]), cols


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    lhs, mhs, rhs = inputs
    rows, cols = _columns(xp, lhs, rhs)
    value = lhs.copy()
    value[rows, cols] = mhs.astype(lhs.dtype)
    put(outputs[0], req[0], value)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, lhs, _, rhs = inputs
    rows, cols = _columns(xp, lhs, rhs)
    grad_lhs = g.copy()
    grad_lhs[rows, cols] = 0
    put(outputs[0], req[0], grad_lhs)
    put(outputs[1], req[1], g[rows, cols])
    put(outputs[2], req[2], 0)


def _sample(draw):
    n, m = S.shape(draw, 2, 2)
    return Case([S.floats(draw, (n, m)), S.floats(draw, (n,)), S.integers(draw, (n,), 0, m - 1)])


def _reference(raw, lhs, mhs, rhs):
    out = lhs.copy()
    out[np.arange(lhs.shape[0]), rhs.astype(np.int64)] = mhs
    return out


OPS = [
    Op(_NAME, num_inputs=3, input_names=["lhs", "mhs", "rhs"], infer_shape=_infer,
       infer_type=first_input_type(2), compute={XP: _forward},
       gradient=Gradient(f"_backward_{_NAME}", ("out_grad", "in_data")),
       domain=Domain(_sample, reference=_reference, differentiable=(0, 1)),
       description="Fill one element of each row of ``lhs`` (N, M): ``out[i, rhs[i]] = "
                   "mhs[i]``, the rest copied.  Indices (any dtype) are truncated to integers "
                   "and must lie in [0, M).  Dtype = lhs's.  Gradient: lhs gets the head "
                   "gradient outside the filled places, mhs the head gradient at them, rhs "
                   "zero."),
    backward_op(_NAME, NoParams, 4, 3, _backward),
]
