"""Regression loss layers: ``LinearRegressionOutput``, ``LogisticRegressionOutput`` and
``MAERegressionOutput``.  Each outputs its prediction and, in the backward pass, ignores
the head gradient and gives the gradient of its loss."""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, assign

from .._draw import Draw
from ._common import data_type, set_shape

__all__ = ["OPS"]


class RegressionOutputParam(Params):
    grad_scale = Field(float, 1.0, "scale the gradient by this factor")


def _infer_shape(op):
    def infer(attrs, ins, outs):
        ins, outs = list(ins), list(outs)
        set_shape(ins, 0, outs[0], op, ["data", "label"])
        data, label = ins
        if data is not None:
            set_shape(outs, 0, data, op, ["output"], "output")
            if label is None:  # one output per example: a vector of labels
                ins[1] = (data[0],) if len(data) == 2 and data[1] == 1 else tuple(data)
            elif all(label) and all(data) and (
                    label[0] != data[0] or int(np.prod(label)) != int(np.prod(data))):
                raise ShapeError(f"operator {op!r}, input 'label': shape {tuple(label)} does not "
                                 f"fit data {tuple(data)} (same first axis and size expected)")
        return ins, outs

    return infer


def _make(name, transform, gradient, reference, formula):
    def forward(attrs, ctx, inputs, req, outputs):
        assign(outputs[0], req[0], transform(ctx.xp, inputs[0]))

    def backward(attrs, ctx, inputs, req, outputs):
        xp, (_, label, out) = ctx.xp, inputs
        per_example = label.size // label.shape[0] if label.ndim else 1
        grad = gradient(xp, out, label.reshape(out.shape)) * (attrs.grad_scale / per_example)
        assign(outputs[0], req[0], grad)
        assign(outputs[1], req[1], 0)

    def sample(draw):
        d = Draw(draw)
        shape = d.shape(d.int(1, 3))
        label_shape = shape[:1] if len(shape) == 2 and shape[1] == 1 else shape
        low = 0 if name == "LogisticRegressionOutput" else -1
        label = d.uniform(label_shape, low, 1)
        return Case([d.uniform(shape, -2, 2), label],
                    {"grad_scale": d.float(0.5, 2.0, "grad_scale")})

    forward_op = Op(
        name,
        description=f"""{formula}

The label has the data's shape (or ``(batch,)`` for ``(batch, 1)`` data).
Backward ignores the head gradient, as a loss layer does, and scales by
``grad_scale / (label.size / label.shape[0])``; ``label`` gets no gradient.
The conformance suite checks the forward pass; the loss gradient is tested directly.""",
        params=RegressionOutputParam,
        num_inputs=2,
        input_names=["data", "label"],
        output_names=["output"],
        infer_shape=_infer_shape(name),
        infer_type=data_type(label_inputs=(1,)),
        compute={XP: forward},
        gradient=Gradient(f"_backward_{name}", uses=("in_data", "out_data")),
        inplace=[(0, 0)],
        domain=Domain(sample, lambda params, x, label: reference(x), differentiable=()),
    )
    backward_op = Op(f"_backward_{name}", params=RegressionOutputParam, num_inputs=3, num_outputs=2,
                     compute={XP: backward}, is_backward=True, forward_op=name)
    return [forward_op, backward_op]


OPS = [
    *_make("LinearRegressionOutput", lambda xp, x: x, lambda xp, out, label: out - label,
           lambda x: x, "Linear regression: outputs ``data``; the gradient is ``out - label`` "
                        "(of the squared error / 2)."),
    *_make("LogisticRegressionOutput", lambda xp, x: xp.exp(-xp.logaddexp(0, -x)),
           lambda xp, out, label: out - label, lambda x: 1 / (1 + np.exp(-x)),
           "Logistic regression: outputs ``sigmoid(data)``; the gradient is ``out - label`` "
           "(of the binary cross-entropy)."),
    *_make("MAERegressionOutput", lambda xp, x: x, lambda xp, out, label: xp.sign(out - label),
           lambda x: x, "Mean absolute error regression: outputs ``data``; the gradient is "
                        "``sign(out - label)``."),
]
