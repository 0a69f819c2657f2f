"""``_image_normalize`` (MXNet's ``image/image_random.cc``, ``mx.nd.image.normalize``):
per-channel standardization of (C, H, W) or (N, C, H, W) images.

``out[c] = (x[c] - mean[c]) / std[c]``; a single mean or std applies to every
channel.  Gradient ``dy / std[c]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Gradient, Op, Params

from .._fields import FloatTuple
from . import _sampling as S
from ._common import backward_op, put, same_shape, with_attrs


class NormalizeParam(Params):
    mean = FloatTuple((0.0, 0.0, 0.0, 0.0), "Sequence of means for each channel. Default value "
                                            "is 0.")
    std = FloatTuple((1.0, 1.0, 1.0, 1.0), "Sequence of standard deviations for each channel. "
                                           "Default value is 1.")


def _per_channel(xp: Any, values: tuple, x: Any, what: str) -> Any:
    channels = x.shape[-3]
    if len(values) == 1:
        values = values * channels
    if len(values) < channels:
        raise ShapeError(f"operator '_image_normalize': {what} has {len(values)} values for "
                         f"{channels} channels")
    return xp.asarray(values[:channels], dtype=np.float64).reshape(channels, 1, 1)


def _check(x: Any) -> None:
    if x.ndim not in (3, 4):
        raise ShapeError(f"operator '_image_normalize': images must be (C, H, W) or "
                         f"(N, C, H, W), got {x.shape}")


def _normalize(xp: Any, p: NormalizeParam, x: Any) -> Any:
    _check(x)
    return (x - _per_channel(xp, p.mean, x, "mean")) / _per_channel(xp, p.std, x, "std")


def _forward(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], _normalize(ctx.xp, attrs, inputs[0]))


def _backward(attrs, ctx, inputs, req, outputs):
    g = inputs[0]
    put(outputs[0], req[0], g / _per_channel(ctx.xp, attrs.std, g, "std"))


def _case(draw):
    shape = S.shape(draw, min_dims=3, max_dims=4)
    c = shape[-3]
    return Case([S.floats(draw, shape)],
                {"mean": tuple(S.floats(draw, (c,)).tolist()),
                 "std": tuple(S.floats(draw, (c,), 0.5, 2).tolist())})


OPS: list[Op] = [
    Op("_image_normalize", params=NormalizeParam, input_names=["data"],
       infer_shape=same_shape("_image_normalize", ["data"]), compute={XP: _forward},
       gradient=Gradient("_backward_image_normalize", ("out_grad",)),
       domain=Domain(_case, reference=with_attrs(
           NormalizeParam, "_image_normalize", lambda p, x: _normalize(np, p, x))),
       description="Standardize each channel of (C, H, W) or (N, C, H, W) images: "
                   "``(x - mean[c]) / std[c]`` (one value applies to all channels).  Dtype = "
                   "data's.  Gradient ``dy / std[c]``."),
    backward_op("image_normalize", NormalizeParam, 1, 1, _backward),
]
