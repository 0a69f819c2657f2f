"""``_contrib_BilinearResize2D`` (MXNet's ``bilinear_resize.cc``): bilinear resampling of
the two spatial axes of NCHW data.

The output size comes from ``mode``: ``size`` takes ``height``/``width``, or with
``scale_height`` the input's size times the scales (as MXNet, ``scale_height`` decides
for both axes, so it needs ``scale_width`` too); ``odd_scale`` scales ``size - 1`` of an
odd side and adds one; ``like`` takes the second input's height and width; the
``to_even_*``/``to_odd_*`` modes move each odd (even) side one step down or up.  An
output pixel ``o`` reads the input at ``o * scale`` (``align_corners``, scale ``(in-1) /
(out-1)``) or ``(o + 0.5) * in / out - 0.5`` clamped at 0, between two neighbours with
linear weights.  Gradient: each head gradient is spread back with the same weights; the
``like`` input gets zero.
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import XP, Case, Domain, Field, Gradient, Op, Params, merge_shape

from .._draw import Draw
from ._common import contrib_error, put

__all__ = ["OPS"]

_NAME = "_contrib_BilinearResize2D"
_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
          "to_odd_up")


class BilinearSampleParam(Params):
    height = Field(int, 1, "output height (used by mode 'size' without scale_height)", low=1)
    width = Field(int, 1, "output width (used by mode 'size' without scale_height)", low=1)
    scale_height = Field(float, None, "height scale (modes 'size' and 'odd_scale')")
    scale_width = Field(float, None, "width scale (modes 'size' and 'odd_scale')")
    mode = Field(str, "size", "how the output size is chosen", choices=_MODES)
    align_corners = Field(bool, True, "map the corner pixels' centres onto each other")


def _num_inputs(attrs) -> int:
    return 2 if attrs.mode == "like" else 1


def _input_names(attrs) -> list[str]:
    return ["data", "like"] if attrs.mode == "like" else ["data"]


def _scale(attrs, name: str) -> float:
    value = getattr(attrs, name)
    if value is None:
        raise contrib_error(_NAME, f"mode={attrs.mode!r} with scale_height needs {name}; "
                                   f"give both scale_height and scale_width")
    return value


def _out_size(attrs, data, like) -> tuple[int, int] | None:
    h, w = data[2], data[3]
    mode = attrs.mode
    if mode == "size":
        if attrs.scale_height is not None:
            return int(attrs.scale_height * h), int(_scale(attrs, "scale_width") * w)
        return attrs.height, attrs.width
    if mode == "odd_scale":
        sh, sw = _scale(attrs, "scale_height"), _scale(attrs, "scale_width")
        return (int(h * sh) if h % 2 == 0 else int((h - 1) * sh) + 1,
                int(w * sw) if w % 2 == 0 else int((w - 1) * sw) + 1)
    if mode == "like":
        if like is None or len(like) != 4 or not like[2] or not like[3]:
            return None
        return like[2], like[3]
    down, even = mode.endswith("_down"), mode.startswith("to_even")

    def fix(n: int) -> int:
        if (n % 2 == 0) == even:
            return n
        return n - 1 if down else n + 1

    return fix(h), fix(w)


def _infer(attrs, ins, outs):
    data = ins[0]
    if data is None:
        return ins, outs
    if len(data) != 4:
        raise contrib_error(_NAME, f"data must be 4-D (N, C, H, W), got shape {tuple(data)}")
    if not data[2] or not data[3]:
        return ins, outs
    size = _out_size(attrs, data, ins[1] if len(ins) > 1 else None)
    if size is None:
        return ins, outs
    if size[0] < 1 or size[1] < 1:
        raise contrib_error(_NAME, f"the output size {size} (from mode={attrs.mode!r}) is "
                                   f"empty; choose a larger height/width or scale")
    shape = (data[0], data[1]) + tuple(size)
    return ins, [merge_shape(outs[0], shape, f"operator {_NAME!r} output")]


def _axis(in_size: int, out_size: int, align_corners: bool):
    """(low index, high index, weight of the high one) for each output position."""
    if out_size > 1:
        scale = (in_size - 1) / (out_size - 1) if align_corners else in_size / out_size
    else:
        scale = 0.0
    o = np.arange(out_size, dtype=np.float64)
    src = scale * o if align_corners else np.maximum(scale * (o + 0.5) - 0.5, 0.0)
    low = src.astype(np.int64)
    high = low + (low < in_size - 1)
    return low, high, src - low


def _matrix(in_size: int, out_size: int, align_corners: bool) -> np.ndarray:
    """The (out, in) interpolation matrix of one axis (the identity when the size stays:
    MXNet copies then, and its formula maps each position onto itself)."""
    if in_size == out_size:
        return np.eye(in_size)
    low, high, weight = _axis(in_size, out_size, align_corners)
    m = np.zeros((out_size, in_size))
    rows = np.arange(out_size)
    np.add.at(m, (rows, low), 1 - weight)
    np.add.at(m, (rows, high), weight)
    return m


def _matrices(xp, attrs, in_hw, out_hw, dtype):
    """The row and column interpolation matrices, in ``dtype`` on ``xp``'s device."""
    rows = _matrix(in_hw[0], out_hw[0], attrs.align_corners)
    cols = _matrix(in_hw[1], out_hw[1], attrs.align_corners)
    return xp.asarray(rows, dtype=dtype), xp.asarray(cols, dtype=dtype)


def _resize(xp, attrs, x, out_hw):
    rows, cols = _matrices(xp, attrs, x.shape[2:], tuple(out_hw), x.dtype)
    return xp.matmul(xp.matmul(rows, x), cols.T)


def _forward(attrs, ctx, inputs, req, outputs):
    put(outputs[0], req[0], _resize(ctx.xp, attrs, inputs[0], outputs[0].shape[2:]))


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    g, data = inputs[0], inputs[1]
    rows, cols = _matrices(xp, attrs, data.shape[2:], g.shape[2:], g.dtype)
    put(outputs[0], req[0], xp.matmul(xp.matmul(rows.T, g), cols))
    if len(outputs) > 1:
        put(outputs[1], req[1], 0)


def _sample(draw):
    d = Draw(draw)
    mode = d.choice(_MODES)
    shape = (d.int(1, 2), d.int(1, 2), d.int(1, 4), d.int(1, 4))
    params = {"mode": mode, "align_corners": d.bool()}
    inputs = [d.uniform(shape)]
    if mode == "size":
        if d.bool():
            params["scale_height"] = d.choice([0.5, 1.0, 1.5, 2.0])
            params["scale_width"] = d.choice([0.5, 1.0, 1.5, 2.0])
            if int(params["scale_height"] * shape[2]) < 1 or \
                    int(params["scale_width"] * shape[3]) < 1:
                params["scale_height"] = params["scale_width"] = 2.0
        else:
            params["height"], params["width"] = d.int(1, 5), d.int(1, 5)
    elif mode == "odd_scale":
        params["scale_height"], params["scale_width"] = 2.0, d.choice([1.0, 2.0, 3.0])
    elif mode == "like":
        inputs.append(d.uniform((1, 1, d.int(1, 5), d.int(1, 5))))
    elif mode.endswith("_down"):
        inputs = [d.uniform(shape[:2] + (d.int(2, 5), d.int(2, 5)))]
    return Case(inputs, params)


def _reference(raw, data, like=None):
    attrs = BilinearSampleParam.parse(_NAME, raw)
    size = _out_size(attrs, data.shape, None if like is None else like.shape)
    return _resize(np, attrs, data, size)


OPS = [
    Op(_NAME, params=BilinearSampleParam, num_inputs=_num_inputs, input_names=_input_names,
       infer_shape=_infer, compute={XP: _forward},
       gradient=Gradient(f"_backward{_NAME}", ("out_grad", "in_data")),
       domain=Domain(_sample, reference=_reference, differentiable=(0,)),
       description="Bilinear resize of NCHW data's height and width to a size chosen by "
                   "``mode`` (size: height/width or scale_height/scale_width; odd_scale; "
                   "like: the second input's; to_even_down/up, to_odd_down/up).  "
                   "``align_corners`` (default True) maps the corner pixels onto each other.  "
                   "Dtype = data's.  Gradient: spread back with the interpolation weights; "
                   "``like`` gets zero."),
    Op(f"_backward{_NAME}", params=BilinearSampleParam, num_inputs=lambda a: 1 + _num_inputs(a),
       num_outputs=_num_inputs, compute={XP: _backward}, is_backward=True, forward_op=_NAME),
]
