"""Deformable convolution layers: a plain convolution learns, at every output position,
offsets (and for v2 a modulation mask) for the sampling points of a deformable
convolution on the same input.  Parameter names are MXNet 1.x's: ``offset_weight``,
``offset_bias``, ``deformable_conv_weight``, ``deformable_conv_bias``."""

from __future__ import annotations

from numbers import Number
from typing import Any

from .... import symbol
from ..._errors import GluonAssertionError
from ...block import HybridBlock
from ...nn import Activation

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(value: Any, what: str) -> tuple[int, int]:
    if isinstance(value, Number):
        return (int(value),) * 2
    value = tuple(int(v) for v in value)
    if len(value) != 2:
        raise GluonAssertionError(f"{what} must be a number or a list of 2 ints, got {value}")
    return value


class _Deformable(HybridBlock):
    """The two layers' shared body: the offset convolution's parameters, the deformable
    convolution's parameters and the optional activation.  ``taps_per_point`` is the
    number of offset channels each kernel point needs (2: dy and dx; 3: and a mask)."""

    taps_per_point = 2
    _op_name = ""

    def __init__(self, channels: int, kernel_size: Any = (1, 1), strides: Any = (1, 1),
                 padding: Any = (0, 0), dilation: Any = (1, 1), groups: int = 1,
                 num_deformable_group: int = 1, layout: str = "NCHW", use_bias: bool = True,
                 in_channels: int = 0, activation: str | None = None,
                 weight_initializer: Any = None, bias_initializer: Any = "zeros",
                 offset_weight_initializer: Any = "zeros",
                 offset_bias_initializer: Any = "zeros", offset_use_bias: bool = True,
                 op_name: str | None = None, adj: Any = None, prefix: str | None = None,
                 params: Any = None):
        super().__init__(prefix=prefix, params=params)
        if layout not in ("NCHW", "NHWC"):
            raise GluonAssertionError(f"{type(self).__name__} supports layout 'NCHW' or "
                                      f"'NHWC', got {layout!r}")
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            kernel = _pair(kernel_size, "kernel_size")
            points = kernel[0] * kernel[1] * num_deformable_group
            self._offset_split = 2 * points  # offsets first, then (v2) the mask
            common = {"kernel": kernel, "stride": _pair(strides, "strides"),
                      "dilate": _pair(dilation, "dilation"), "pad": _pair(padding, "padding"),
                      "num_group": groups, "layout": layout}
            if adj is not None:
                common["adj"] = adj
            self._kwargs_offset = dict(common, num_filter=self.taps_per_point * points,
                                       no_bias=not offset_use_bias)
            self._kwargs_deformable_conv = dict(common, num_filter=channels,
                                                num_deformable_group=num_deformable_group,
                                                no_bias=not use_bias)
            dshape = [0] * 4
            dshape[layout.find("N")] = 1
            dshape[layout.find("C")] = in_channels
            offset = symbol.Convolution(symbol.var("data", shape=tuple(dshape)),
                                        **self._kwargs_offset)
            offset_shapes = offset.infer_shape_partial()[0]
            self.offset_weight = self.params.get("offset_weight", shape=offset_shapes[1],
                                                 init=offset_weight_initializer,
                                                 allow_deferred_init=True)
            self.offset_bias = (self.params.get("offset_bias", shape=offset_shapes[2],
                                                init=offset_bias_initializer,
                                                allow_deferred_init=True)
                                if offset_use_bias else None)
            self.deformable_conv_weight = self.params.get(
                "deformable_conv_weight", shape=(channels, 0) + kernel,
                init=weight_initializer, allow_deferred_init=True)
            self.deformable_conv_bias = (self.params.get("deformable_conv_bias",
                                                         shape=(channels,),
                                                         init=bias_initializer,
                                                         allow_deferred_init=True)
                                         if use_bias else None)
            self.act = (Activation(activation, prefix=activation + "_")
                        if activation else None)

    def _sampling(self, F: Any, offset: Any) -> dict:
        """The deformable operator's sampling inputs made from the offset convolution."""
        return {"offset": offset}

    def hybrid_forward(self, F: Any, x: Any, offset_weight: Any, deformable_conv_weight: Any,
                       offset_bias: Any = None, deformable_conv_bias: Any = None) -> Any:
        offset_inputs = [x, offset_weight] + ([offset_bias] if offset_bias is not None else [])
        offset = F.Convolution(*offset_inputs, **self._kwargs_offset)
        bias = {} if deformable_conv_bias is None else {"bias": deformable_conv_bias}
        out = getattr(F.contrib, self._op_name)(data=x, weight=deformable_conv_weight,
                                                name="fwd", **self._sampling(F, offset), **bias,
                                                **self._kwargs_deformable_conv)
        return self.act(out) if self.act is not None else out

    def _alias(self) -> str:
        return "deformable_conv"

    def __repr__(self) -> str:
        k = self._kwargs_deformable_conv
        shape = self.deformable_conv_weight.shape
        text = (f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}, "
                f"kernel_size={k['kernel']}, stride={k['stride']}")
        if k["pad"] != (0, 0):
            text += f", padding={k['pad']}"
        if k["dilate"] != (1, 1):
            text += f", dilation={k['dilate']}"
        if k["num_group"] != 1:
            text += f", groups={k['num_group']}"
        if self.deformable_conv_bias is None:
            text += ", bias=False"
        if self.act is not None:
            text += f", {self.act}"
        return text + ")"


class DeformableConvolution(_Deformable):
    """2-D deformable convolution v1 (Dai et al., 2017): every kernel point samples the
    input at its grid position plus a learned offset (bilinear interpolation); a plain
    convolution of the same geometry computes the offsets (2 per kernel point and
    deformable group), starting from zero offsets.

    Inputs: ``data`` of shape (N, C, H, W); output (N, channels, H', W') as a
    convolution with the same kernel, strides, padding and dilation gives."""

    taps_per_point = 2
    _op_name = "DeformableConvolution"


class ModulatedDeformableConvolution(_Deformable):
    """2-D modulated deformable convolution v2 (Zhu et al., 2018): as
    :class:`DeformableConvolution`, and each sampled value is also scaled by a learned
    mask, ``2 * sigmoid`` of a third offset-convolution channel per kernel point (so a
    zero-initialized offset convolution starts as a plain convolution)."""

    taps_per_point = 3
    _op_name = "ModulatedDeformableConvolution"

    def _sampling(self, F: Any, offset: Any) -> dict:
        mask = F.slice_axis(offset, axis=1, begin=self._offset_split, end=None)
        return {"offset": F.slice_axis(offset, axis=1, begin=0, end=self._offset_split),
                "mask": F.sigmoid(mask) * 2}
