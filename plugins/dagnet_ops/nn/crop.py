"""``Crop`` (MXNet's legacy ``crop.cc``): a spatial window of NCHW data, of size ``h_w``
or of the second input's height and width, taken at ``offset`` (y, x) or centred.

Gradient: the head gradient placed in the window of a zero array; the second input,
read for its shape only, gets zero.
"""

from __future__ import annotations

from dagnet import ShapeError
from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, Shape, assign

from .._draw import Draw

__all__ = ["OPS"]


class CropParam(Params):
    num_args = Field(int, 1, "1: crop to h_w; 2: crop to the second input's height and "
                             "width", low=1, high=2)
    offset = Field(Shape, (0, 0), "the window's top-left corner (y, x)")
    h_w = Field(Shape, (0, 0), "the window's (height, width) when num_args is 1")
    center_crop = Field(bool, False, "centre the window (offset is ignored)")


def _window(attrs: CropParam, data: tuple, like: tuple | None) -> tuple[int, int, int, int]:
    """(top, left, height, width) of the window in data (N, C, H, W)."""
    if len(data) != 4:
        raise ShapeError(f"operator 'Crop': data must be 4-D (N, C, H, W), got {tuple(data)}")
    if attrs.num_args == 2:
        if like is None or len(like) < 4:
            raise ShapeError(f"operator 'Crop': crop_like must be 4-D, got {like}")
        height, width = int(like[2]), int(like[3])
    else:
        height, width = (int(v) for v in attrs.h_w)
    if attrs.center_crop:
        top, left = (int(data[2]) - height) // 2, (int(data[3]) - width) // 2
    else:
        top, left = (int(v) for v in attrs.offset)
    if height < 1 or width < 1 or top < 0 or left < 0 or top + height > data[2] or \
            left + width > data[3]:
        raise ShapeError(f"operator 'Crop': the window {height}x{width} at ({top}, {left}) "
                         f"does not fit in data {tuple(data)}")
    return top, left, height, width


def _infer(attrs, ins, outs):
    data = ins[0]
    like = ins[1] if len(ins) > 1 else None
    if data is None or not all(data) or (attrs.num_args == 2 and (like is None or
                                                                 not all(like))):
        return ins, outs
    _, _, height, width = _window(attrs, data, like)
    return ins, [(data[0], data[1], height, width)]


def _index(attrs, data_shape, like_shape):
    top, left, height, width = _window(attrs, data_shape, like_shape)
    return (slice(None), slice(None), slice(top, top + height), slice(left, left + width))


def _forward(attrs, ctx, inputs, req, outputs):
    like = inputs[1].shape if len(inputs) > 1 else None
    assign(outputs[0], req[0], inputs[0][_index(attrs, inputs[0].shape, like)])


def _backward(attrs, ctx, inputs, req, outputs):
    g = inputs[0]
    shape = outputs[0].shape
    like = outputs[1].shape if len(outputs) > 1 else None
    grad = ctx.xp.zeros(shape, dtype=g.dtype)
    grad[_index(attrs, shape, like)] = g
    assign(outputs[0], req[0], grad)
    if len(outputs) > 1:
        assign(outputs[1], req[1], 0)


def _case(draw):
    d = Draw(draw)
    shape = (d.int(1, 2), d.int(1, 2), d.int(2, 5), d.int(2, 5))
    height, width = d.int(1, shape[2]), d.int(1, shape[3])
    data = d.uniform(shape)
    attrs = {"center_crop": d.bool("center_crop")}
    if not attrs["center_crop"]:
        attrs["offset"] = (d.int(0, shape[2] - height), d.int(0, shape[3] - width))
    if d.bool("crop_like"):
        like = d.uniform((1, 1, height, width))
        return Case([data, like], {**attrs, "num_args": 2})
    return Case([data], {**attrs, "h_w": (height, width)})


def _reference(raw, data, like=None):
    attrs = CropParam.parse("Crop", raw)
    return data[_index(attrs, data.shape, None if like is None else like.shape)]


OPS = [
    Op("Crop", params=CropParam, num_inputs=lambda a: a.num_args,
       input_names=lambda a: ["data", "crop_like"][:a.num_args], key_var_num_args="num_args",
       infer_shape=_infer, compute={XP: _forward},
       gradient=Gradient("_backward_Crop", ("out_grad",)),
       domain=Domain(_case, reference=_reference, differentiable=(0,)),
       description="A (height, width) window of NCHW data: h_w, or the second input's "
                   "height and width (num_args=2), at offset (y, x) or centred "
                   "(center_crop).  Output (N, C, height, width), data's dtype.  Gradient: "
                   "the head gradient in the window of zeros; crop_like gets zero."),
    Op("_backward_Crop", params=CropParam, num_inputs=1,
       num_outputs=lambda a: a.num_args, compute={XP: _backward}, is_backward=True,
       forward_op="Crop"),
]
