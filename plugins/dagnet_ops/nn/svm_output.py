"""``SVMOutput`` (MXNet's ``svm_output.cc``): a multi-class hinge-loss output layer.

Forward passes the scores through.  Backward reads no head gradient (it is a
loss, so an executor's ``backward()`` needs none) and gives, with ``t = +1`` for
the label's class and ``-1`` otherwise, ``-c t [margin - t x > 0]``
(``use_linear``, L1-SVM) or
``-2 c t max(margin - t x, 0)`` (L2-SVM), with ``c`` the regularization
coefficient.  The label gets a zero gradient.
"""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, assign, merge_shape

from .._draw import Draw

__all__ = ["OPS"]


class SVMOutputParam(Params):
    margin = Field(float, 1.0, "The loss function penalizes outputs that lie outside this "
                               "margin. Default margin is 1.")
    regularization_coefficient = Field(float, 1.0, "Regularization parameter for the SVM. This "
                                                   "balances the tradeoff between coefficient "
                                                   "size and error.")
    use_linear = Field(bool, False, "Whether to use L1-SVM objective. L2-SVM objective is used "
                                    "by default.")


def _infer(attrs, ins, outs):
    data = merge_shape(ins[0], outs[0], "SVMOutput data")
    if data is None:
        return ins, outs
    if len(data) < 2:
        raise ShapeError(f"operator 'SVMOutput': data must be (batch, classes, ...), got "
                         f"{tuple(data)}")
    label = merge_shape(ins[1], (data[0],) + tuple(data[2:]), "SVMOutput label")
    return [data, label], [data]


def _infer_type(attrs, ins, outs):
    data = ins[0] if ins[0] is not None else outs[0]
    return [data, ins[1] if ins[1] is not None else data], [data]


def _forward(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], inputs[0])


def _signs(xp, x, label):
    classes = xp.arange(x.shape[1]).reshape((1, -1) + (1,) * (x.ndim - 2))
    return xp.where(label.astype(np.int64)[:, None] == classes, 1.0, -1.0)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    x, label = inputs
    t = _signs(xp, x, label)
    slack = attrs.margin - t * x
    c = attrs.regularization_coefficient
    if attrs.use_linear:
        grad = -c * t * (slack > 0)
    else:
        grad = -2 * c * t * xp.maximum(slack, 0)
    assign(outputs[0], req[0], grad)
    assign(outputs[1], req[1], 0)


def _case(draw):
    d = Draw(draw)
    batch, classes = d.int(1, 4), d.int(2, 4)
    label = np.array([d.int(0, classes - 1) for _ in range(batch)], dtype=np.float64)
    return Case([d.uniform((batch, classes), -2, 2), label],
                {"use_linear": d.bool("use_linear"), "margin": d.float(0.5, 1.5, "margin")})


OPS = [
    Op("SVMOutput", params=SVMOutputParam, num_inputs=2, input_names=["data", "label"],
       infer_shape=_infer, infer_type=_infer_type, compute={XP: _forward},
       gradient=Gradient("_backward_SVMOutput", ("in_data",)),
       domain=Domain(_case, reference=lambda raw, x, label: x, differentiable=()),
       description="Hinge-loss output: forward passes data (batch, classes) through; the "
                   "gradient (the head gradient is ignored, as for every loss output) is "
                   "``-c t [margin - t x > 0]`` with use_linear (L1-SVM) or "
                   "``-2 c t max(margin - t x, 0)`` (L2-SVM), t = +1 at the label's class and "
                   "-1 elsewhere, c = regularization_coefficient.  The label gets zero."),
    Op("_backward_SVMOutput", params=SVMOutputParam, num_inputs=2, num_outputs=2,
       compute={XP: _backward}, is_backward=True, forward_op="SVMOutput"),
]
