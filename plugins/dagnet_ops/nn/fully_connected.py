"""``FullyConnected``: a dense layer, ``Y = X W^T + b``."""

from __future__ import annotations

import numpy as np

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
)

from .._draw import Draw
from ._common import known, set_shape, transposed_product_pays
from ._second_order import fully_connected_backward_gradient

__all__ = ["OPS", "sample_case"]


class FullyConnectedParam(Params):
    num_hidden = Field(int, REQUIRED, "number of hidden units (output features)", low=1)
    no_bias = Field(bool, False, "disable the bias")
    flatten = Field(bool, True, "collapse every axis after the first into one before the product; "
                                "if False the product runs over the last axis only")


def _input_names(attrs):
    return ["data", "weight"] if attrs.no_bias else ["data", "weight", "bias"]


def _infer_shape(attrs, ins, outs):
    names, hidden = _input_names(attrs), attrs.num_hidden
    ins, outs = list(ins), list(outs)
    data, out = ins[0], outs[0]
    if data is not None and len(data) >= 1:
        if attrs.flatten:
            rest = data[1:]
            features = int(np.prod(rest)) if known(rest) else 0
            if ins[1] is not None and features == 0 and len(data) == 2:
                features = ins[1][1]  # the weight tells the single feature axis
                set_shape(ins, 0, (data[0], features), "FullyConnected", names)
            set_shape(outs, 0, (ins[0][0], hidden), "FullyConnected", ["output"], "output")
        else:
            features = data[-1] or (ins[1][1] if ins[1] is not None else 0)
            set_shape(ins, 0, (*data[:-1], features), "FullyConnected", names)
            set_shape(outs, 0, (*ins[0][:-1], hidden), "FullyConnected", ["output"], "output")
        set_shape(ins, 1, (hidden, features), "FullyConnected", names)
        if out is not None and len(out) == len(outs[0]):  # a known output fills the batch axes
            lead = out[:1] if attrs.flatten else out[:-1]
            set_shape(ins, 0, (*lead, *ins[0][len(lead):]), "FullyConnected", names)
    elif ins[1] is not None:
        set_shape(ins, 1, (hidden, ins[1][1]), "FullyConnected", names)
    if not attrs.no_bias:
        # MXNet takes a bias of (num_hidden,) or, as a column, (num_hidden, 1)
        column = ins[2] is not None and len(ins[2]) == 2 and ins[2][1] == 1
        set_shape(ins, 2, (hidden, 1) if column else (hidden,), "FullyConnected", names)
    return ins, outs


def _as_matrix(attrs, x):
    return x.reshape(x.shape[0], -1) if attrs.flatten else x.reshape(-1, x.shape[-1])


def _product(xp, out, req, a, b):
    """``out (req) a @ b``; a write goes straight into ``out`` (a matrix view of it)
    instead of through a temporary and a copy."""
    if req is OpReqType.NULL:
        return
    if req is not OpReqType.ADD and out.flags.c_contiguous:
        xp.matmul(a, b, out=out.reshape(a.shape[0], b.shape[1]))
    else:
        assign(out, req, (a @ b).reshape(out.shape))


def _forward(attrs, ctx, inputs, req, outputs):
    xp, x, w, y = ctx.xp, _as_matrix(attrs, inputs[0]), inputs[1], outputs[0]
    bias = None if attrs.no_bias else inputs[2].reshape(-1)  # a (num_hidden, 1) column too
    if req[0] is OpReqType.NULL:
        return
    if req[0] is OpReqType.ADD or not y.flags.c_contiguous:
        _product(xp, y, req[0], x, w.T)
        if bias is not None:
            y += bias  # onto the product just written or added
    else:
        y = y.reshape(x.shape[0], w.shape[0])
        if transposed_product_pays(xp, x, w):
            yt = xp.matmul(w, x.T).T  # the transposed copy rides on the bias add
            if bias is None:
                y[...] = yt
            else:
                xp.add(yt, bias, out=y)
        else:
            xp.matmul(x, w.T, out=y)
            if bias is not None:
                y += bias


def _backward(attrs, ctx, inputs, req, outputs):
    dy, x, w = inputs[0], inputs[1], inputs[2]
    xp, dy = ctx.xp, dy.reshape(-1, attrs.num_hidden)
    _product(xp, outputs[0], req[0], dy, w)
    _product(xp, outputs[1], req[1], dy.T, _as_matrix(attrs, x))
    if not attrs.no_bias and req[2] is not OpReqType.NULL:
        if req[2] is OpReqType.ADD or not outputs[2].flags.c_contiguous \
                or outputs[2].ndim != 1:
            assign(outputs[2], req[2], dy.sum(axis=0).reshape(outputs[2].shape))
        else:
            dy.sum(axis=0, out=outputs[2])


def sample_case(draw):
    """A conformance case of FullyConnected (the fused dense layer's starts from it)."""
    d = Draw(draw)
    flatten, no_bias = d.bool("flatten"), d.bool("no_bias")
    shape = d.shape(d.int(2, 3))
    hidden = d.int(1, 4, "num_hidden")
    features = int(np.prod(shape[1:])) if flatten else shape[-1]
    inputs = [d.uniform(shape), d.uniform((hidden, features))]
    if not no_bias:
        inputs.append(d.uniform((hidden, 1) if d.bool("bias_column") else (hidden,)))
    return Case(inputs, {"num_hidden": hidden, "no_bias": no_bias, "flatten": flatten})


def _reference(params, x, w, b=None):
    p = FullyConnectedParam.parse("FullyConnected", params)
    if p.flatten:
        y = x.reshape(x.shape[0], -1) @ w.T
    else:
        y = np.einsum("...k,hk->...h", x, w)
    return y if b is None else y + b.reshape(-1)


FullyConnected = Op(
    "FullyConnected",
    description="""Applies a linear transformation: ``Y = X W^T + b``.

With ``flatten=True`` (default) ``data`` of shape ``(batch, d1, ..., dn)`` is
collapsed to ``(batch, d1*...*dn)`` and ``weight`` is ``(num_hidden, d1*...*dn)``;
the output is ``(batch, num_hidden)``.  With ``flatten=False`` the product runs
over the last axis: ``(x1, ..., xn, k)`` -> ``(x1, ..., xn, num_hidden)``,
``weight`` ``(num_hidden, k)``.  ``bias`` is ``(num_hidden,)`` (or the column
``(num_hidden, 1)``) unless ``no_bias``.
Gradient: ``dX = dY W``, ``dW = dY^T X``, ``db = sum(dY, axis=0)``.""",
    params=FullyConnectedParam,
    num_inputs=lambda a: 2 if a.no_bias else 3,
    input_names=_input_names,
    output_names=["output"],
    infer_shape=_infer_shape,
    compute={XP: _forward},
    gradient=Gradient("_backward_FullyConnected", uses=("out_grad", "in_data")),
    domain=Domain(sample_case, _reference),
)

BackwardFullyConnected = Op(
    "_backward_FullyConnected",
    params=FullyConnectedParam,
    num_inputs=lambda a: 3 if a.no_bias else 4,
    num_outputs=lambda a: 2 if a.no_bias else 3,
    compute={XP: _backward},
    gradient=ComposedGradient(fully_connected_backward_gradient),
    is_backward=True,
    forward_op="FullyConnected",
)

OPS = [FullyConnected, BackwardFullyConnected]
