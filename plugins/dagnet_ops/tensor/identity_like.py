"""``_identity_with_attr_like_rhs`` (MXNet's ``elemwise_unary_op_basic.cc``): pass ``lhs``
through while tying its shape to ``rhs``'s.

Graph builders use it to state a shape constraint: the output (and ``lhs``) must
have ``rhs``'s shape, which lets inference run backward into ``lhs``'s producers.
Gradient: the head gradient to lhs, zero to rhs.
"""

from __future__ import annotations

from dagnet.operator import XP, Case, Domain, Gradient, NoParams, Op

from . import _sampling as S
from ._common import backward_op, first_input_type, put, same_shape


def _forward(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], inputs[0])


def _backward(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], inputs[0])
    put(outputs[1], req[1], 0)


def _case(draw):
    shape = S.shape(draw)
    return Case([S.floats(draw, shape), S.floats(draw, shape)])


OPS: list[Op] = [
    Op("_identity_with_attr_like_rhs", num_inputs=2, input_names=["lhs", "rhs"],
       infer_shape=same_shape("_identity_with_attr_like_rhs", ["lhs", "rhs"]),
       infer_type=first_input_type(1), compute={XP: _forward},
       gradient=Gradient("_backward_identity_with_attr_like_rhs", ("out_grad",)),
       domain=Domain(_case, reference=lambda raw, lhs, rhs: lhs, differentiable=(0,)),
       description="lhs unchanged, with the output's (and lhs's) shape tied to rhs's: a shape "
                   "constraint that lets inference run backward.  Dtype = lhs's.  Gradient: "
                   "the head gradient to lhs, zero to rhs."),
    backward_op("identity_with_attr_like_rhs", NoParams, 1, 2, _backward),
]
