"""``_image_to_tensor`` (MXNet's ``image/image_random.cc``, ``mx.nd.image.to_tensor``):
(H, W, C) or (N, H, W, C) images in [0, 255], of any dtype, to float32 (C, H, W) or
(N, C, H, W) in [0, 1].

``out[..., c, h, w] = x[..., h, w, c] / 255``.  Gradient: the head gradient moved back to
channel-last and divided by 255 (MXNet declares a plain copy, whose shape does not fit).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Gradient, NoParams, Op

from . import _sampling as S
from ._common import backward_op, put

_OP = "_image_to_tensor"


def _check(shape: Any) -> None:
    if len(shape) not in (3, 4):
        raise ShapeError(f"operator {_OP!r}: images must be (height, width, channels) or "
                         f"(N, height, width, channels), got shape {tuple(shape)}")


def _channel_first(shape: tuple) -> tuple:
    return (*shape[:-3], shape[-1], shape[-3], shape[-2])


def _infer_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    if ins[0] is None and outs[0] is not None:
        _check(outs[0])
        out = tuple(outs[0])
        ins[0] = (*out[:-3], out[-2], out[-1], out[-3])
    if ins[0] is not None:
        _check(ins[0])
        outs[0] = _channel_first(tuple(ins[0]))
    return ins, outs


def _infer_type(attrs, ins, outs):
    return [ins[0]], [np.dtype(np.float32)]


def _to_tensor(xp: Any, x: Any) -> Any:
    _check(x.shape)
    axes = (2, 0, 1) if x.ndim == 3 else (0, 3, 1, 2)
    return xp.transpose(x.astype(np.float32), axes) / np.float32(255.0)


def _forward(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], _to_tensor(ctx.xp, inputs[0]))


def _backward(attrs, ctx, inputs, req, outputs):
    g = inputs[0]
    axes = (1, 2, 0) if g.ndim == 3 else (0, 2, 3, 1)
    put(outputs[0], req[0], ctx.xp.transpose(g, axes) / 255.0)


def _case(draw):
    return Case([S.floats(draw, S.shape(draw, min_dims=3, max_dims=4), 0, 255)])


def _reference(raw, x):
    axes = (2, 0, 1) if x.ndim == 3 else (0, 3, 1, 2)
    return (np.transpose(x, axes) / 255.0).astype(np.float32)


OPS: list[Op] = [
    Op(_OP, params=NoParams, input_names=["data"], infer_shape=_infer_shape,
       infer_type=_infer_type, compute={XP: _forward},
       gradient=Gradient("_backward_image_to_tensor", ("out_grad",)),
       # the output is float32 whatever the input: too coarse for central differences, so
       # the gradient is checked against its closed form in tests/ops
       domain=Domain(_case, reference=_reference, differentiable=()),
       description="Images (H, W, C) or (N, H, W, C) in [0, 255], any dtype, to float32 "
                   "(C, H, W) or (N, C, H, W) in [0, 1].  Gradient: the head gradient back "
                   "in channel-last order, divided by 255."),
    backward_op("image_to_tensor", NoParams, 1, 1, _backward),
]
