"""The gradient rules of neural-network backward operators, written as operator calls
(:class:`~dagnet.operator.ComposedGradient`), so gradients of gradients exist.

Each function is ``compose(F, attrs, out_grads, inputs, outputs, needed)``: the
head gradients of the backward operator's outputs, its inputs, and which of the
inputs' gradients are used; it returns one gradient per input (None: zero).
"""

from __future__ import annotations

from typing import Any

__all__ = ["fully_connected_backward_gradient", "dropout_backward_gradient",
           "activation_backward_gradient"]


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
