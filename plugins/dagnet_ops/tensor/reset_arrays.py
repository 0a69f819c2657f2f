"""``reset_arrays`` (MXNet's ``contrib/reset_arrays.cc``): zero ``num_arrays`` arrays in place.

What ``Parameter.zero_grad`` runs: one operator call for many gradients.  It has no
outputs; every input is mutated, each keeping its own shape and dtype.
"""

from __future__ import annotations

from dagnet.operator import REQUIRED, XP, Case, Domain, Field, NoGradient, Op, Params

from . import _sampling as S


class ResetArraysParam(Params):
    num_arrays = Field(int, REQUIRED, "how many arrays are given (and zeroed)", low=1)


def _count(attrs):
    return attrs.num_arrays


def _names(attrs):
    return [f"array_{i}" for i in range(attrs.num_arrays)]


def _keep_shapes(attrs, ins, outs):
    return list(ins), []


def _keep_types(attrs, ins, outs):
    return list(ins), []


def _forward(attrs, ctx, inputs, req, outputs):
    for array in inputs:
        array[...] = 0


def _case(draw):
    count = S.integer(draw, 1, 3, "num_arrays")
    return Case([S.floats(draw, S.shape(draw)) for _ in range(count)], {"num_arrays": count})


OPS: list[Op] = [
    Op("reset_arrays", params=ResetArraysParam, num_inputs=_count, num_outputs=0,
       input_names=_names, output_names=[], mutate_inputs=lambda a: range(a.num_arrays),
       infer_shape=_keep_shapes, infer_type=_keep_types, compute={XP: _forward},
       gradient=NoGradient("reset_arrays writes its inputs in place"),
       key_var_num_args="num_arrays",
       domain=Domain(_case, reference=lambda params, *arrays: []),
       description="Set every input array to zero in place (``num_arrays`` of them, any "
                   "shapes and dtypes); no outputs, no gradient.  Gluon's ``zero_grad`` "
                   "resets many gradients with one call."),
]
