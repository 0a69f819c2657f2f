"""MobileNet (Howard et al., 2017) and MobileNetV2 (Sandler et al., 2018) with MXNet 1.x's
structure and parameter names (``mobilenet0_conv0_weight``,
``mobilenetv20_features_linearbottleneck0_conv0_weight``), for width multipliers 1.0, 0.75,
0.5 and 0.25."""

from __future__ import annotations

from typing import Any

from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ..model_store import get_model_file

__all__ = ["MobileNet", "MobileNetV2", "LinearBottleneck", "RELU6", "mobilenet1_0",
           "mobilenet_v2_1_0", "mobilenet0_75", "mobilenet_v2_0_75", "mobilenet0_5",
           "mobilenet_v2_0_5", "mobilenet0_25", "mobilenet_v2_0_25", "get_mobilenet",
           "get_mobilenet_v2"]


class RELU6(HybridBlock):
    """``min(max(x, 0), 6)``, the activation of MobileNetV2."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return F.clip(x, 0, 6, name="relu6")


def _add_conv(out: nn.HybridSequential, channels: int = 1, kernel: int = 1, stride: int = 1,
              pad: int = 0, num_group: int = 1, active: bool = True,
              relu6: bool = False) -> None:
    """Append conv (no bias), batch norm and, when ``active``, ReLU or ReLU6 to ``out``."""
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation("relu"))


def _add_conv_dw(out: nn.HybridSequential, dw_channels: int, channels: int, stride: int,
                 relu6: bool = False) -> None:
    """Append a depthwise 3x3 convolution then a pointwise 1x1 one, each with BN and ReLU."""
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1,
              num_group=dw_channels, relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    """MobileNetV2's inverted residual: 1x1 expansion by ``t``, depthwise 3x3 with ``stride``,
    linear 1x1 projection to ``channels``; the input is added when shapes agree (stride 1
    and ``in_channels == channels``)."""

    def __init__(self, in_channels: int, channels: int, t: int, stride: int, **kwargs: Any):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            # The layers are created in this block's scope, not the sequential's, which is
            # why MXNet's names read ``linearbottleneck0_conv0_weight``.
            self.out = nn.HybridSequential()
            expanded = in_channels * t
            _add_conv(self.out, expanded, relu6=True)
            _add_conv(self.out, expanded, kernel=3, stride=stride, pad=1, num_group=expanded,
                      relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        out = self.out(x)
        return F.elemwise_add(out, x) if self.use_shortcut else out


def _scaled(multiplier: float, widths: list) -> list:
    return [int(w * multiplier) for w in widths]


class MobileNet(HybridBlock):
    """MobileNet v1: a strided 3x3 stem, 13 depthwise-separable convolutions, global average
    pooling and a ``classes``-way Dense output; every width is scaled by ``multiplier``
    (0.25 or more)."""

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1,
                          stride=2)
                dw_channels = _scaled(multiplier, [32, 64] + [128] * 2 + [256] * 2
                                      + [512] * 6 + [1024])
                channels = _scaled(multiplier, [64] + [128] * 2 + [256] * 2 + [512] * 6
                                   + [1024] * 2)
                strides = [1, 2] * 3 + [1] * 5 + [2, 1]
                for dwc, c, s in zip(dw_channels, channels, strides):
                    _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
                self.features.add(nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNetV2: a strided 3x3 stem, 17 :class:`LinearBottleneck` blocks, a 1x1
    convolution to 1280 channels (scaled only when ``multiplier`` > 1), global average
    pooling and a 1x1 convolution to ``classes`` (``output_pred_weight``), flattened."""

    def __init__(self, multiplier: float = 1.0, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="features_")
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1,
                          relu6=True)
                in_channels_group = _scaled(multiplier, [32] + [16] + [24] * 2 + [32] * 3
                                            + [64] * 4 + [96] * 3 + [160] * 3)
                channels_group = _scaled(multiplier, [16] + [24] * 2 + [32] * 3 + [64] * 4
                                         + [96] * 3 + [160] * 3 + [320])
                ts = [1] + [6] * 16
                strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
                for in_c, c, t, s in zip(in_channels_group, channels_group, ts, strides):
                    self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t,
                                                       stride=s))
                last_channels = int(1280 * multiplier) if multiplier > 1.0 else 1280
                _add_conv(self.features, last_channels, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix="output_")
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix="pred_"),
                                nn.Flatten())

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


def _version_suffix(multiplier: float) -> str:
    """The multiplier as the model store spells it: ``1.0``, ``0.75``, ``0.5``, ``0.25``."""
    suffix = f"{multiplier:.2f}"
    return suffix[:-1] if suffix in ("1.00", "0.50") else suffix


def get_mobilenet(multiplier: float, pretrained: bool = False, ctx: Any = None,
                  root: str | None = None, **kwargs: Any) -> MobileNet:
    """MobileNet v1 with width ``multiplier``; ``pretrained`` loads
    ``mobilenet<multiplier>`` parameters (``mobilenet0.75``) from ``root`` (see
    ``model_store``)."""
    net = MobileNet(multiplier, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f"mobilenet{_version_suffix(multiplier)}",
                                           root=root), ctx=ctx if ctx is not None else cpu())
    return net


def get_mobilenet_v2(multiplier: float, pretrained: bool = False, ctx: Any = None,
                     root: str | None = None, **kwargs: Any) -> MobileNetV2:
    """MobileNetV2 with width ``multiplier``; ``pretrained`` loads
    ``mobilenetv2_<multiplier>`` parameters (``mobilenetv2_0.75``) from ``root``."""
    net = MobileNetV2(multiplier, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f"mobilenetv2_{_version_suffix(multiplier)}",
                                           root=root), ctx=ctx if ctx is not None else cpu())
    return net


def _factory(version: int, multiplier: float, name: str) -> Any:
    get = get_mobilenet if version == 1 else get_mobilenet_v2

    def make(**kwargs: Any) -> HybridBlock:
        return get(multiplier, **kwargs)

    make.__name__ = name
    make.__doc__ = (f"MobileNet{' v1' if version == 1 else 'V2'} with width multiplier "
                    f"{multiplier}: ``{get.__name__}({multiplier}, **kwargs)``.")
    return make


mobilenet1_0 = _factory(1, 1.0, "mobilenet1_0")
mobilenet0_75 = _factory(1, 0.75, "mobilenet0_75")
mobilenet0_5 = _factory(1, 0.5, "mobilenet0_5")
mobilenet0_25 = _factory(1, 0.25, "mobilenet0_25")
mobilenet_v2_1_0 = _factory(2, 1.0, "mobilenet_v2_1_0")
mobilenet_v2_0_75 = _factory(2, 0.75, "mobilenet_v2_0_75")
mobilenet_v2_0_5 = _factory(2, 0.5, "mobilenet_v2_0_5")
mobilenet_v2_0_25 = _factory(2, 0.25, "mobilenet_v2_0_25")
