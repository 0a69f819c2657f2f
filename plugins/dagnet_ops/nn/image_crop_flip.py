"""The geometric image operators of ``mx.nd.image`` (MXNet's ``image/image_random.cc`` and
``image/crop.cc``) on channel-last images: ``_image_flip_left_right`` and
``_image_flip_top_bottom`` mirror one ``(H, W, C)`` image, ``_image_crop`` cuts a
rectangle out of ``(H, W, C)`` or ``(N, H, W, C)`` images.  All keep the dtype (uint8
included) and are linear: a flip's gradient is the flipped head gradient, a crop's is the
head gradient placed back in the rectangle with zeros around it.
"""

from __future__ import annotations

import numpy as np

from dagnet import ShapeError
from dagnet.operator import (
    REQUIRED,
    XP,
    Case,
    Domain,
    Field,
    Gradient,
    NoParams,
    Op,
    OpReqType,
    Params,
    assign,
)

from .._draw import Draw
from ._common import set_shape

__all__ = ["OPS"]


# -- flips ----------------------------------------------------------------------------------
def _flip_op(name: str, axis: int, what: str) -> list[Op]:
    """A flip of axis ``axis`` of a (H, W, C) image, and its backward (the same flip)."""

    def infer_shape(attrs, ins, outs):
        ins, outs = list(ins), list(outs)
        set_shape(ins, 0, outs[0], name, ["data"])
        if ins[0] is not None:
            if len(ins[0]) != 3:
                raise ShapeError(f"operator {name!r}, input 'data': expected one image "
                                 f"(height, width, channels), got shape {tuple(ins[0])}")
            set_shape(outs, 0, ins[0], name, ["output"], "output")
        return ins, outs

    def flip(xp, x):
        return xp.flip(x, axis=axis)

    def compute(attrs, ctx, inputs, req, outputs):
        assign(outputs[0], req[0], flip(ctx.xp, inputs[0]))

    def sample(draw):
        d = Draw(draw)
        return Case([d.uniform(d.shape(3, 1, 4))])

    forward = Op(
        name, description=f"Mirror one (H, W, C) image {what}.  Dtype = data's (uint8 "
                          f"too).  Gradient: the head gradient mirrored the same way.",
        input_names=["data"], infer_shape=infer_shape, compute={XP: compute},
        gradient=Gradient(f"_backward{name}", ("out_grad",)),
        domain=Domain(sample, lambda params, x: flip(np, x)))
    backward = Op(f"_backward{name}", params=NoParams, num_inputs=1, compute={XP: compute},
                  is_backward=True, forward_op=name)
    return [forward, backward]


# -- crop ------------------------------------------------------------------------------------
class CropParam(Params):
    x = Field(int, REQUIRED, "left boundary of the cropping area", low=0)
    y = Field(int, REQUIRED, "top boundary of the cropping area", low=0)
    width = Field(int, REQUIRED, "width of the cropping area")
    height = Field(int, REQUIRED, "height of the cropping area")


def _crop_region(attrs, shape):
    """The index of the rectangle in data of ``shape`` (H, W, C) or (N, H, W, C), checked."""
    if len(shape) not in (3, 4):
        raise ShapeError(f"operator '_image_crop', input 'data': expected (height, width, "
                         f"channels) or (batch, height, width, channels), got shape "
                         f"{tuple(shape)}")
    if attrs.width <= 0 or attrs.height <= 0:
        raise ShapeError(f"operator '_image_crop': width and height must be > 0, got "
                         f"width={attrs.width}, height={attrs.height}")
    h, w = shape[-3], shape[-2]
    if h and attrs.y + attrs.height > h:
        raise ShapeError(f"operator '_image_crop': y + height = {attrs.y + attrs.height} "
                         f"exceeds the image height {h} (data shape {tuple(shape)})")
    if w and attrs.x + attrs.width > w:
        raise ShapeError(f"operator '_image_crop': x + width = {attrs.x + attrs.width} "
                         f"exceeds the image width {w} (data shape {tuple(shape)})")
    lead = (slice(None),) * (len(shape) - 3)
    return lead + (slice(attrs.y, attrs.y + attrs.height), slice(attrs.x, attrs.x + attrs.width))


def _crop_shape(attrs, ins, outs):
    ins, outs = list(ins), list(outs)
    data = ins[0]
    if data is not None:
        _crop_region(attrs, data)
        out = tuple(data[:-3]) + (attrs.height, attrs.width, data[-1])
        set_shape(outs, 0, out, "_image_crop", ["output"], "output")
    return ins, outs


def _crop(attrs, ctx, inputs, req, outputs):
    assign(outputs[0], req[0], inputs[0][_crop_region(attrs, inputs[0].shape)])


def _crop_backward(attrs, ctx, inputs, req, outputs):
    dx = outputs[0]
    region = _crop_region(attrs, dx.shape)
    if req[0] is OpReqType.ADD:
        dx[region] += inputs[0]
        return
    if req[0] is not OpReqType.NULL:
        dx[...] = 0
        dx[region] = inputs[0]


def _crop_sample(draw):
    d = Draw(draw)
    shape = d.shape(d.int(3, 4), 1, 4)
    h, w = shape[-3], shape[-2]
    height, width = d.int(1, h, "height"), d.int(1, w, "width")
    params = {"y": d.int(0, h - height, "y"), "x": d.int(0, w - width, "x"),
              "width": width, "height": height}
    return Case([d.uniform(shape)], params)


def _crop_reference(params, x):
    attrs = CropParam.parse("_image_crop", params)
    return x[_crop_region(attrs, x.shape)]


ImageCrop = Op(
    "_image_crop",
    description="""Cut the rectangle ``[y, y + height) x [x, x + width)`` out of a (H, W, C)
image or each of (N, H, W, C) images.  Dtype = data's.  Gradient: the head gradient in the
rectangle, zero elsewhere.""",
    params=CropParam,
    input_names=["data"],
    infer_shape=_crop_shape,
    compute={XP: _crop},
    gradient=Gradient("_backward_image_crop", ("out_grad",)),
    domain=Domain(_crop_sample, _crop_reference),
)

BackwardImageCrop = Op(
    "_backward_image_crop", params=CropParam, num_inputs=1, compute={XP: _crop_backward},
    is_backward=True, forward_op="_image_crop")

OPS = [*_flip_op("_image_flip_left_right", 1, "left to right (the width axis)"),
       *_flip_op("_image_flip_top_bottom", 0, "top to bottom (the height axis)"),
       ImageCrop, BackwardImageCrop]
