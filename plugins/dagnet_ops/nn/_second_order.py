"""The gradient rules of neural-network backward operators, written as operator calls
(:class:`~dagnet.operator.ComposedGradient`), so gradients of gradients exist.

Each function is ``compose(F, attrs, out_grads, inputs, outputs, needed)``: the
head gradients of the backward operator's outputs, its inputs, and which of the
inputs' gradients are used; it returns one gradient per input (None: zero).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fully_connected_backward_gradient", "dropout_backward_gradient",
           "activation_backward_gradient", "leaky_relu_backward_gradient",
           "affine_backward_gradient", "softmax_backward_gradient",
           "pooling_backward_gradient", "embedding_backward_gradient"]


def _as_matrix(F: Any, array: Any, attrs: Any, features: int) -> Any:
    """FullyConnected's view of its data as a matrix: (batch, features)."""
    return F.Reshape(array, shape=(0, -1) if attrs.flatten else (-1, features))


def fully_connected_backward_gradient(F: Any, attrs: Any, out_grads: list, inputs: list,
                                      outputs: Any, needed: list) -> list:
    """The gradient of ``_backward_FullyConnected(dy, x, w[, b]) = (dy w, dy^T x[, sum dy])``
    given head gradients ``(gx, gw[, gb])``: ``dy`` gets ``gx w^T + x gw^T + gb``, ``x`` gets
    ``dy gw``, ``w`` gets ``dy^T gx``, and ``b`` none (nothing depends on it)."""
    gx, gw = out_grads[0], out_grads[1]
    dy, x, w = inputs[0], inputs[1], inputs[2]
    hidden, flatten = attrs.num_hidden, attrs.flatten
    features = w.shape[1]
    grads: list = [None] * len(inputs)
    if needed[0]:
        through_x = F.FullyConnected(gx, w, no_bias=True, num_hidden=hidden, flatten=flatten)
        if attrs.no_bias:
            through_w = F.FullyConnected(x, gw, no_bias=True, num_hidden=hidden, flatten=flatten)
        else:
            through_w = F.FullyConnected(x, gw, out_grads[2], num_hidden=hidden, flatten=flatten)
        grads[0] = F.elemwise_add(through_x, through_w)
    if needed[1]:
        product = F.FullyConnected(dy, F.transpose(gw), no_bias=True, num_hidden=features,
                                   flatten=flatten)
        grads[1] = F.reshape_like(product, x)
    if needed[2]:
        grads[2] = F.dot(F.Reshape(dy, shape=(-1, hidden)), _as_matrix(F, gx, attrs, features),
                         transpose_a=True)
    return grads


def dropout_backward_gradient(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any,
                              needed: list) -> list:
    """The gradient of ``_backward_Dropout(dy, out, mask) = dy * mask``: ``dy`` gets
    ``g * mask``.  ``out`` is not used by it; the mask is the draw's constant (Dropout passes
    no gradient through its hidden mask output), so neither gets one."""
    g, mask = out_grads[0], inputs[2]
    return [F.elemwise_mul(g, mask) if needed[0] else None, None, None]


# the derivative, with respect to the output y, of each activation's dy/dx (as a function of y)
_ACTIVATION_SECOND = {
    "relu": lambda F, y: None,  # piecewise constant
    "sigmoid": lambda F, y: F._rminus_scalar(F._mul_scalar(y, scalar=2.0), scalar=1.0),
    "tanh": lambda F, y: F._mul_scalar(y, scalar=-2.0),
    "softrelu": lambda F, y: F.exp(F.negative(y)),  # d(1 - e^-y) = e^-y
    "softsign": lambda F, y: F._mul_scalar(  # d((1 - |y|)^2) = -2 sign(y) (1 - |y|)
        F.elemwise_mul(F.sign(y), F._rminus_scalar(F.abs(y), scalar=1.0)), scalar=-2.0),
}


def activation_backward_gradient(F: Any, attrs: Any, out_grads: list, inputs: list,
                                 outputs: Any, needed: list) -> list:
    """The gradient of ``_backward_Activation(dy, y) = dy * d(y)``: ``dy`` gets the backward
    op itself on the head gradient ``g``, ``y`` gets ``g * dy * d'(y)``."""
    g, (dy, y) = out_grads[0], inputs
    d_dy = F.call("_backward_Activation", [g, y], attrs, like=[dy]) if needed[0] else None
    d_y = None
    if needed[1]:
        second = _ACTIVATION_SECOND[attrs.act_type](F, y)
        if second is not None:
            d_y = F.elemwise_mul(F.elemwise_mul(g, dy), second)
    return [d_dy, d_y]


def leaky_relu_backward_gradient(selu_scale: float):
    """The rule of ``_backward_LeakyReLU`` (``selu_scale``: SELU's lambda * alpha).

    Its backward is ``dy * d(x)`` (prelu: and ``sum(dy * x)`` over the slope's elements
    where ``x <= 0``): ``dy`` gets the backward op itself on the head gradient, ``x`` gets
    ``g * dy * d'(x)`` -- zero for the piecewise-linear kinds (leaky, rrelu), the
    exponential part for elu and selu, ``phi(x) (2 - x^2)`` for gelu."""

    def second(F: Any, kind: str, attrs: Any, x: Any) -> Any:
        if kind in ("elu", "selu"):
            below = F.elemwise_mul(F.exp(F._minimum_scalar(x, scalar=0.0)),
                                   F._lesser_equal_scalar(x, scalar=0.0))
            return F._mul_scalar(below, scalar=attrs.slope if kind == "elu" else selu_scale)
        if kind == "gelu":
            x2 = F.square(x)
            return F._mul_scalar(F.elemwise_mul(F.exp(F._mul_scalar(x2, scalar=-0.5)),
                                                F._rminus_scalar(x2, scalar=2.0)),
                                 scalar=1 / math.sqrt(2 * math.pi))
        return None

    def compose(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any,
                needed: list) -> list:
        kind, gx = attrs.act_type, out_grads[0]
        grads: list = [None] * len(inputs)
        if kind == "prelu":
            return _prelu(F, attrs, out_grads, inputs, needed)
        x = inputs[2] if kind == "rrelu" else inputs[1]
        if needed[0]:
            grads[0] = F.call("_backward_LeakyReLU", [gx, *inputs[1:]], attrs, like=[x])
        position = 2 if kind == "rrelu" else 1
        if needed[position]:
            slope = second(F, kind, attrs, x)
            if slope is not None:
                grads[position] = F.elemwise_mul(F.elemwise_mul(gx, inputs[0]), slope)
        return grads

    return compose


def _prelu(F: Any, attrs: Any, out_grads: list, inputs: list, needed: list) -> list:
    """prelu: ``dx = dy (x > 0 ? 1 : gamma_c)``, ``dgamma = sum(dy x [x <= 0])`` per channel."""
    (gx, g_gamma), (dy, x, gamma, y) = out_grads, inputs
    below = F._lesser_equal_scalar(x, scalar=0.0)
    channel = (1, -1) + (1,) * (len(x.shape) - 2)
    g_gamma_b = F.Reshape(g_gamma, shape=channel)
    grads: list = [None] * 4
    if needed[0]:
        through_x = F.call("_backward_LeakyReLU", [gx, x, gamma, y], attrs, like=[x, gamma])[0]
        grads[0] = F.elemwise_add(through_x,
                                  F.broadcast_mul(g_gamma_b, F.elemwise_mul(x, below)))
    if needed[1]:
        grads[1] = F.broadcast_mul(g_gamma_b, F.elemwise_mul(dy, below))
    if needed[2]:
        per_element = F.elemwise_mul(F.elemwise_mul(gx, dy), below)
        axes = tuple(a for a in range(len(x.shape)) if a != 1 or gamma.shape == (1,))
        grads[2] = F.reshape_like(F.sum(per_element, axis=axes), gamma)
    return grads


def affine_backward_gradient(forward: str):
    """The rule of the backward op of ``forward``, a product bilinear in its data ``x`` and
    weight ``w`` plus an optional bias: ``y = P(x, w) + B(b)`` (Convolution,
    Deconvolution).  Its backward writes ``(Dx(dy, w), Dw(dy, x)[, B^T dy])``; given head
    gradients ``(gx, gw[, gb])`` its gradient is ``P(gx, w) + P(x, gw) + B(gb)`` -- the
    forward op twice -- for ``dy``, ``Dx(dy, gw)`` for ``x`` and ``Dw(dy, gx)`` for ``w``
    (the backward op again), none for the bias."""
    backward = f"_backward_{forward}"

    def compose(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any,
                needed: list) -> list:
        gx, gw = out_grads[0], out_grads[1]
        dy, x, w, rest = inputs[0], inputs[1], inputs[2], list(inputs[3:])
        params = _params(attrs)
        op = getattr(F, forward)
        grads: list = [None] * len(inputs)
        if needed[0]:
            through_x = op(gx, w, **{**params, "no_bias": True})
            through_w = (op(x, gw, **{**params, "no_bias": True}) if attrs.no_bias
                         else op(x, gw, out_grads[2], **params))
            grads[0] = F.elemwise_add(through_x, through_w)
        if needed[1]:
            grads[1] = F.call(backward, [dy, x, gw, *rest], attrs, like=[x, w, *rest])[0]
        if needed[2]:
            grads[2] = F.call(backward, [dy, gx, w, *rest], attrs, like=[x, w, *rest])[1]
        return grads

    return compose


def softmax_backward_gradient(log: bool, negate: bool):
    """The rule of ``_backward_softmax`` / ``_backward_log_softmax`` / ``_backward_softmin``,
    whose inputs are ``(dy, y)``; with ``c = (-1 if negate else 1) / temperature`` and sums
    ``<a, b>`` along ``axis``:

    - softmax: ``dx = c y (dy - <dy, y>)``: ``dy`` gets ``c y (g - <g, y>)``, ``y`` gets
      ``c (g dy - g <dy, y> - dy <g, y>)``;
    - log_softmax: ``dx = c (dy - e^y <dy, 1>)``: ``dy`` gets ``c (g - <g, e^y>)``, ``y``
      gets ``-c g e^y <dy, 1>``.
    """

    def compose(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any,
                needed: list) -> list:
        g, (dy, y) = out_grads[0], inputs
        scale = (-1.0 if negate else 1.0) / (attrs.temperature or 1.0)

        def total(a: Any) -> Any:  # the sum along the softmax axis, kept for broadcasting
            return F.sum(a, axis=attrs.axis, keepdims=True)

        d_dy = d_y = None
        if log:
            e_y = F.exp(y)
            if needed[0]:
                d_dy = F.broadcast_sub(g, total(F.elemwise_mul(g, e_y)))
            if needed[1]:
                d_y = F.negative(F.broadcast_mul(F.elemwise_mul(g, e_y), total(dy)))
        else:
            g_y = total(F.elemwise_mul(g, y))
            if needed[0]:
                d_dy = F.elemwise_mul(y, F.broadcast_sub(g, g_y))
            if needed[1]:
                dy_y = total(F.elemwise_mul(dy, y))
                d_y = F.elemwise_sub(F.elemwise_mul(g, F.broadcast_sub(dy, dy_y)),
                                     F.broadcast_mul(dy, g_y))
        return [None if d is None else F._mul_scalar(d, scalar=scale) for d in (d_dy, d_y)]

    return compose


def _params(attrs: Any) -> dict:
    """The parsed parameters to call the forward op with (unset optional ones left out)."""
    return {k: v for k, v in attrs.to_dict().items() if v is not None}


def pooling_backward_gradient(F: Any, attrs: Any, out_grads: list, inputs: list, outputs: Any,
                              needed: list) -> list:
    """The gradient of ``_backward_Pooling(dy, x, y)``: avg and sum pooling are linear, so
    ``dy`` gets the pooling of the head gradient; max and lp pooling route ``dy`` by the
    values of ``x``, whose gradient is not available again (as in MXNet)."""
    if attrs.pool_type not in ("avg", "sum"):
        raise NotImplementedError(
            f"the gradient of {attrs.pool_type} pooling cannot be differentiated again; "
            f"avg and sum pooling's can")
    return [F.Pooling(out_grads[0], **_params(attrs)) if needed[0] else None, None, None]


def embedding_backward_gradient(F: Any, attrs: Any, out_grads: list, inputs: list,
                                outputs: Any, needed: list) -> list:
    """The gradient of ``_backward_Embedding(dy, data, weight)``, linear in ``dy`` (it adds
    the rows of ``dy`` into the rows ``data`` names): ``dy`` gets the lookup of the weight's
    head gradient; the indices and the weight get none."""
    data = inputs[1]
    first = F.Embedding(data, out_grads[1], **_params(attrs)) if needed[0] else None
    return [first, None, None]
