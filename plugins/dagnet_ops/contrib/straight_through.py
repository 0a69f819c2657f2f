"""The straight-through estimators ``_contrib_round_ste`` and ``_contrib_sign_ste``
(MXNet's ``stes_op.cc``): ``round`` and ``sign`` in the forward pass, the identity in the
backward pass -- the head gradient passes through unchanged, so a network can train
through a quantizing step whose true derivative is zero almost everywhere.

The conformance suite checks their forward against numpy; their gradient is by
definition not the numerical one, so it is checked by the tests of this behaviour
(``tests/ops/test_issue25_contrib_ops.py``), not by central differences.
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import XP, Case, Domain, Gradient, Op, elemwise_shape

from .._draw import Draw
from ._common import put

__all__ = ["OPS"]


def _identity_backward(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], inputs[0])


def _round_half_away(xp, x):
    """MXNet's ``round`` (C's): halves go away from zero, not to even as numpy's."""
    t = xp.trunc(x)
    return xp.where(xp.abs(x - t) >= 0.5, t + xp.sign(x), t)


def _sample(draw):
    d = Draw(draw)
    return Case([d.uniform((d.int(1, 4, "rows"), d.int(1, 4, "columns")), -4.0, 4.0)])


def _ste(name: str, forward, what: str) -> list[Op]:
    full = f"_contrib_{name}_ste"
    return [
        Op(full, input_names=["data"], infer_shape=elemwise_shape(full),
           compute={XP: lambda attrs, ctx, inputs, req, outputs:
                    put(outputs[0], req[0], forward(ctx.xp, inputs[0]))},
           gradient=Gradient(f"_backward_{name}_ste", ("out_grad",)), inplace=[(0, 0)],
           domain=Domain(_sample, reference=lambda raw, x: forward(np, x), differentiable=()),
           description=f"{what} in the forward pass; the backward pass hands the head "
                       f"gradient through unchanged (a straight-through estimator).  "
                       f"Dtype = data's."),
        Op(f"_backward_{name}_ste", num_inputs=1, compute={XP: _identity_backward},
           inplace=[(0, 0)], is_backward=True, forward_op=full,
           description=f"Gradient of {full}: the head gradient itself."),
    ]


OPS = [
    *_ste("round", _round_half_away,
          "``round(x)``, halves away from zero as MXNet's ``round``"),
    *_ste("sign", lambda xp, x: xp.sign(x), "``sign(x)`` (0 at 0)"),
]
