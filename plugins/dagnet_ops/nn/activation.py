"""Activation functions: ``Activation`` (relu, sigmoid, tanh, softrelu, softsign) and
``LeakyReLU`` (leaky, elu, selu, gelu, prelu with a learned slope, rrelu with a random one)."""

from __future__ import annotations

import math

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    ComposedGradient,
    Domain,
    Field,
    Gradient,
    Op,
    OpReqType,
    Params,
    assign,
    elemwise_shape,
)
from dagnet.resource import ResourceRequest

from .._draw import Draw
from ._common import each, erf, pieces, reduce_to, set_shape
from ._second_order import activation_backward_gradient, leaky_relu_backward_gradient

__all__ = ["OPS"]


# -- Activation ----------------------------------------------------------------------------------
# Each forward writes its last pass straight into the output (which may be the input
# itself); each derivative is written in terms of the output y, so the backward pass
# keeps only the output and the input buffer may be overwritten in place.
def _sigmoid(xp, x, out):
    xp.exp(-xp.logaddexp(0, -x), out=out)


def _softsign(xp, x, out):
    xp.divide(x, 1 + xp.abs(x), out=out)


_ACTIVATIONS = {
    # relu's derivative stays a bool mask: the multiply reads a byte, not a float, per entry
    "relu": (lambda xp, x, out: xp.maximum(x, 0, out=out), lambda xp, y: y > 0),
    "sigmoid": (_sigmoid, lambda xp, y: y * (1 - y)),
    "tanh": (lambda xp, x, out: xp.tanh(x, out=out), lambda xp, y: 1 - y * y),
    "softrelu": (lambda xp, x, out: xp.logaddexp(0, x, out=out), lambda xp, y: -xp.expm1(-y)),
    "softsign": (_softsign, lambda xp, y: (1 - xp.abs(y)) ** 2),
}


class ActivationParam(Params):
    act_type = Field(str, REQUIRED, "the activation function", choices=sorted(_ACTIVATIONS))


def _activation_forward(attrs, ctx, inputs, req, outputs):
    xp, out, r = ctx.xp, outputs[0], req[0]
    if r is OpReqType.NULL:
        return
    target = xp.empty_like(out) if r is OpReqType.ADD else out
    function = _ACTIVATIONS[attrs.act_type][0]
    parts, threads = pieces(xp, inputs[0], target)
    each(lambda p: function(xp, p[0], p[1]), parts, threads)
    if r is OpReqType.ADD:
        out += target


def _activation_backward(attrs, ctx, inputs, req, outputs):
    xp, (dy, y), out, r = ctx.xp, inputs, outputs[0], req[0]
    if r is OpReqType.NULL:
        return
    derivative = _ACTIVATIONS[attrs.act_type][1]
    if r is OpReqType.ADD:
        out += dy * derivative(xp, y)
        return
    parts, threads = pieces(xp, dy, y, out)
    each(lambda p: xp.multiply(p[0], derivative(xp, p[1]), out=p[2]), parts, threads)


def _activation_sample(draw):
    d = Draw(draw)
    return Case([d.away_from_zero(d.shape(d.int(1, 3)), 0.05, 3.0)],
                {"act_type": d.choice(sorted(_ACTIVATIONS), "act_type")})


def _activation_reference(params, x):
    return {
        "relu": lambda: np.maximum(x, 0),
        "sigmoid": lambda: 1 / (1 + np.exp(-x)),
        "tanh": lambda: np.tanh(x),
        "softrelu": lambda: np.log(1 + np.exp(x)),
        "softsign": lambda: x / (1 + np.abs(x)),
    }[params["act_type"]]()


Activation = Op(
    "Activation",
    description="""Applies an activation function elementwise.

``relu``: ``max(x, 0)``; ``sigmoid``: ``1 / (1 + exp(-x))``; ``tanh``;
``softrelu``: ``log(1 + exp(x))``; ``softsign``: ``x / (1 + |x|)``.
The gradient is computed from the output alone (ReLU's gradient at 0 is 0).""",
    params=ActivationParam,
    input_names=["data"],
    output_names=["output"],
    infer_shape=elemwise_shape("Activation"),
    compute={XP: _activation_forward},
    gradient=Gradient("_backward_Activation", uses=("out_grad", "out_data")),
    inplace=[(0, 0)],
    domain=Domain(_activation_sample, _activation_reference),
)

BackwardActivation = Op(
    "_backward_Activation", params=ActivationParam, num_inputs=2,
    compute={XP: _activation_backward}, gradient=ComposedGradient(activation_backward_gradient),
    inplace=[(0, 0)], is_backward=True, forward_op="Activation",
)


# -- LeakyReLU -----------------------------------------------------------------------------------
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


class LeakyReLUParam(Params):
    act_type = Field(str, "leaky", "the activation function",
                     choices=("elu", "gelu", "leaky", "prelu", "rrelu", "selu"))
    slope = Field(float, 0.25, "slope for leaky, alpha for elu")
    lower_bound = Field(float, 0.125, "lower bound of the random slope (rrelu)")
    upper_bound = Field(float, 0.334, "upper bound of the random slope (rrelu)")


def _leaky_infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    names = ["data", "gamma"]
    for shape in outs:  # every output (rrelu's mask too) has the data's shape
        set_shape(ins, 0, shape, "LeakyReLU", names)
    for i in range(len(outs)):
        set_shape(outs, i, ins[0], "LeakyReLU", ["output", "mask"], "output")
    data = ins[0]
    if attrs.act_type == "prelu" and data is not None:
        if not data:
            raise ShapeError("operator 'LeakyReLU' with act_type='prelu': data needs at least "
                             "one axis, got a scalar")
        if ins[1] is None:  # one slope per channel (one for all on 1-d data) unless given
            set_shape(ins, 1, (data[1],) if len(data) > 1 else (1,), "LeakyReLU", names)
        else:
            _gamma_shape(tuple(ins[1]), tuple(data))
    return ins, outs


def _gamma_shape(gamma: tuple, data: tuple) -> tuple:
    """Where prelu's gamma lies against the data (MXNet's rule): its axes, from the last,
    match the batch and channel axes (equal or 1); every other axis is 1.  ``(C,)`` is one
    slope per channel, ``(1,)`` one for all, ``(N, C)`` one per sample and channel."""
    result = [1] * len(data)
    s = len(gamma) - 1
    for i in range(len(data) - 1, -1, -1):
        if s >= 0 and i <= 1 and gamma[s] in (data[i], 1):
            result[i] = gamma[s]
            s -= 1
    if s != -1:
        raise ShapeError(f"operator 'LeakyReLU' with act_type='prelu': gamma of shape {gamma} "
                         f"does not fit data of shape {data}; give one slope per channel "
                         f"({data[1]},), one for all (1,), or one per sample and channel")
    return tuple(result)


def _channel_view(gamma, shape):
    return gamma.reshape(_gamma_shape(tuple(gamma.shape), tuple(shape)))


def _rrelu_slope(attrs):
    return (attrs.lower_bound + attrs.upper_bound) / 2


def _leaky_forward(attrs, ctx, inputs, req, outputs):
    xp, x, kind = ctx.xp, inputs[0], attrs.act_type
    if kind == "leaky":
        y = xp.where(x > 0, x, x * attrs.slope)
    elif kind == "prelu":
        y = xp.where(x > 0, x, x * _channel_view(inputs[1], x.shape))
    elif kind == "elu":
        y = xp.where(x > 0, x, attrs.slope * xp.expm1(xp.minimum(x, 0)))
    elif kind == "selu":
        y = _SELU_LAMBDA * xp.where(x > 0, x, _SELU_ALPHA * xp.expm1(xp.minimum(x, 0)))
    elif kind == "gelu":
        y = 0.5 * x * (1 + erf(xp, x * (1 / math.sqrt(2))))
    else:  # rrelu: a random slope per element in training, their mean otherwise
        if ctx.is_train:
            generator = ctx.requested[0].generator
            width = attrs.upper_bound - attrs.lower_bound
            slope = (attrs.lower_bound + width * generator.random(x.shape)).astype(x.dtype)
            assign(outputs[1], req[1], slope)
        else:
            slope = _rrelu_slope(attrs)
            assign(outputs[1], req[1], 0)
        y = xp.where(x > 0, x, x * slope)
    assign(outputs[0], req[0], y)


def _leaky_backward(attrs, ctx, inputs, req, outputs):
    xp, kind = ctx.xp, attrs.act_type
    dy, x = inputs[0], inputs[2 if kind == "rrelu" else 1]
    positive = x > 0
    if kind == "leaky":
        dx = xp.where(positive, dy, dy * attrs.slope)
    elif kind == "prelu":
        gamma = inputs[2]
        dx = dy * xp.where(positive, 1, _channel_view(gamma, x.shape))
        if req[1] is not OpReqType.NULL:
            per_channel = _channel_view(gamma, x.shape).shape
            dgamma = reduce_to(xp, dy * xp.where(positive, 0, x), per_channel)
            assign(outputs[1], req[1], dgamma.reshape(gamma.shape))
    elif kind == "elu":
        dx = dy * xp.where(positive, 1, attrs.slope * xp.exp(xp.minimum(x, 0)))
    elif kind == "selu":
        dx = dy * (_SELU_LAMBDA * xp.where(positive, 1, _SELU_ALPHA * xp.exp(xp.minimum(x, 0))))
    elif kind == "gelu":
        cdf = 0.5 * (1 + erf(xp, x * (1 / math.sqrt(2))))
        dx = dy * (cdf + x * xp.exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi)))
    else:
        slope = inputs[-1] if ctx.is_train else _rrelu_slope(attrs)  # the mask holds the slopes
        dx = xp.where(positive, dy, dy * slope)
    assign(outputs[0], req[0], dx)


def _leaky_sample(draw):
    d = Draw(draw)
    kind = d.choice(["leaky", "prelu", "elu", "selu", "gelu", "rrelu"], "act_type")
    shape = d.shape(d.int(2, 4)) if kind == "prelu" else d.shape(d.int(1, 3))
    params = {"act_type": kind, "slope": d.float(0.01, 1.5, "slope")}
    inputs = [d.away_from_zero(shape, 0.05, 2.0)]
    if kind == "prelu":
        gamma = d.choice([(1,), (shape[1],), shape[:2]], "gamma shape")
        inputs.append(d.uniform(gamma, 0.0, 1.0))
    return Case(inputs, params)


def _leaky_reference(params, x, gamma=None):
    p = LeakyReLUParam.parse("LeakyReLU", params)
    if p.act_type == "gelu":
        return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    if p.act_type == "selu":
        return _SELU_LAMBDA * np.where(x > 0, x, _SELU_ALPHA * (np.exp(x) - 1))
    if p.act_type == "elu":
        return np.where(x > 0, x, p.slope * (np.exp(x) - 1))
    if p.act_type == "prelu":
        return np.where(x > 0, x, x * _channel_view(gamma, x.shape))
    if p.act_type == "rrelu":
        return [np.where(x > 0, x, x * _rrelu_slope(p)), np.zeros_like(x)]
    return np.where(x > 0, x, x * p.slope)


LeakyReLU = Op(
    "LeakyReLU",
    description="""Leaky rectified linear units and relatives, elementwise.

``leaky``: ``x > 0 ? x : slope * x``; ``prelu``: ``x > 0 ? x : gamma[c] * x`` with a
learned ``gamma`` per channel (axis 1; shape ``(C,)``, ``(1,)`` or ``(N, C)``);
``elu``: ``x > 0 ? x : slope * (exp(x) - 1)``; ``selu``: ``lambda * (x > 0 ? x :
alpha * (exp(x) - 1))`` with the fixed constants of Klambauer et al.;
``gelu``: ``x * Phi(x)`` (the erf form); ``rrelu``: in training a slope drawn
uniformly from ``[lower_bound, upper_bound)`` per element (returned as the second
output ``mask``), otherwise their mean, with ``mask`` zero.""",
    params=LeakyReLUParam,
    num_inputs=lambda a: 2 if a.act_type == "prelu" else 1,
    num_outputs=lambda a: 2 if a.act_type == "rrelu" else 1,
    input_names=lambda a: ["data", "gamma"] if a.act_type == "prelu" else ["data"],
    output_names=lambda a: ["output", "mask"] if a.act_type == "rrelu" else ["output"],
    input_init={"gamma": '["Constant", {"value": 0.25}]'},  # MXNet's starting prelu slope
    infer_shape=_leaky_infer_shape,
    compute={XP: _leaky_forward},
    gradient=Gradient("_backward_LeakyReLU", uses=("out_grad", "in_data", "out_data")),
    resources=lambda a: [ResourceRequest("random")] if a.act_type == "rrelu" else [],
    domain=Domain(_leaky_sample, _leaky_reference),
)

BackwardLeakyReLU = Op(
    "_backward_LeakyReLU",
    params=LeakyReLUParam,
    num_inputs=lambda a: {"prelu": 4, "rrelu": 5}.get(a.act_type, 3),
    num_outputs=lambda a: 2 if a.act_type == "prelu" else 1,
    compute={XP: _leaky_backward},
    gradient=ComposedGradient(leaky_relu_backward_gradient(_SELU_LAMBDA * _SELU_ALPHA)),
    is_backward=True,
    forward_op="LeakyReLU",
)

OPS = [Activation, BackwardActivation, LeakyReLU, BackwardLeakyReLU]
