"""ResNet v1 (He et al., 2015) and v2 (He et al., 2016) with MXNet 1.x's structure and
parameter names (``resnetv10_stage1_conv0_weight``), for 18, 34, 50, 101 and 152 layers."""

from __future__ import annotations

from typing import Any

from ....context import cpu
from ... import nn
from ..._errors import GluonAssertionError
from ...block import HybridBlock
from ..model_store import get_model_file

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1",
           "BottleneckV2", "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1",
           "resnet152_v1", "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2",
           "resnet152_v2", "get_resnet"]


def _conv3x3(channels: int, stride: int, in_channels: int) -> nn.Conv2D:
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _shortcut_v1(channels: int, stride: int, in_channels: int) -> nn.HybridSequential:
    shortcut = nn.HybridSequential(prefix="")
    shortcut.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                           in_channels=in_channels))
    shortcut.add(nn.BatchNorm())
    return shortcut


class BasicBlockV1(HybridBlock):
    """Two 3x3 convolutions with batch norm, added to the (projected) input, then ReLU."""

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(_conv3x3(channels, stride, in_channels), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(channels, 1, channels), nn.BatchNorm())
        self.downsample = _shortcut_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(residual + self.body(x), act_type="relu")


class BottleneckV1(HybridBlock):
    """1x1, 3x3 and 1x1 convolutions (a quarter of ``channels`` inside), added to the
    (projected) input, then ReLU."""

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(nn.Conv2D(channels // 4, kernel_size=1, strides=stride), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(channels // 4, 1, channels // 4),
                      nn.BatchNorm(), nn.Activation("relu"),
                      nn.Conv2D(channels, kernel_size=1, strides=1), nn.BatchNorm())
        self.downsample = _shortcut_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(self.body(x) + residual, act_type="relu")


class BasicBlockV2(HybridBlock):
    """Pre-activation basic block: BN, ReLU, 3x3 conv, BN, ReLU, 3x3 conv, plus input."""

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False,
                                     in_channels=in_channels) if downsample else None)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = F.Activation(self.bn2(x), act_type="relu")
        return self.conv2(x) + residual


class BottleneckV2(HybridBlock):
    """Pre-activation bottleneck block."""

    def __init__(self, channels: int, stride: int, downsample: bool = False,
                 in_channels: int = 0, **kwargs: Any):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False,
                                     in_channels=in_channels) if downsample else None)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = self.conv2(F.Activation(self.bn2(x), act_type="relu"))
        x = self.conv3(F.Activation(self.bn3(x), act_type="relu"))
        return x + residual


class _ResNet(HybridBlock):
    """What both versions share: ``features`` then the ``output`` Dense layer."""

    def _make_layer(self, block: type, layers: int, channels: int, stride: int,
                    stage_index: int, in_channels: int = 0) -> nn.HybridSequential:
        layer = nn.HybridSequential(prefix=f"stage{stage_index}_")
        with layer.name_scope():
            layer.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                            prefix=""))
            for _ in range(layers - 1):
                layer.add(block(channels, 1, False, in_channels=channels, prefix=""))
        return layer

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


def _check_layers(layers: list, channels: list) -> None:
    if len(layers) != len(channels) - 1:
        raise GluonAssertionError(f"ResNet: give one more channel count than stages, got "
                                  f"{len(layers)} stages and {len(channels)} channel counts")


class ResNetV1(_ResNet):
    """ResNet v1: a 7x7 stem (3x3 with ``thumbnail``), stages of ``block``s, global average
    pooling and a ``classes``-way Dense output."""

    def __init__(self, block: type, layers: list, channels: list, classes: int = 1000,
                 thumbnail: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        _check_layers(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            if thumbnail:
                self.features.add(_conv3x3(channels[0], 1, 0))
            else:
                self.features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False),
                                  nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))
            for i, num_layer in enumerate(layers):
                self.features.add(self._make_layer(block, num_layer, channels[i + 1],
                                                   1 if i == 0 else 2, i + 1,
                                                   in_channels=channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])


class ResNetV2(_ResNet):
    """ResNet v2 (pre-activation): input batch norm, stem, stages, BN + ReLU, global
    average pooling, flatten and the Dense output."""

    def __init__(self, block: type, layers: list, channels: list, classes: int = 1000,
                 thumbnail: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        _check_layers(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.BatchNorm(scale=False, center=False))
            if thumbnail:
                self.features.add(_conv3x3(channels[0], 1, 0))
            else:
                self.features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False),
                                  nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))
            in_channels = channels[0]
            for i, num_layer in enumerate(layers):
                self.features.add(self._make_layer(block, num_layer, channels[i + 1],
                                                   1 if i == 0 else 2, i + 1,
                                                   in_channels=in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.GlobalAvgPool2D(),
                              nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)


resnet_spec = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
                         {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}]


def get_resnet(version: int, num_layers: int, pretrained: bool = False, ctx: Any = None,
               root: str | None = None, **kwargs: Any) -> _ResNet:
    """ResNet ``version`` (1 or 2) of ``num_layers`` (18, 34, 50, 101, 152); ``pretrained``
    loads ``resnet<n>_v<version>`` parameters from ``root`` (see ``model_store``)."""
    if num_layers not in resnet_spec:
        raise GluonAssertionError(f"Invalid number of layers: {num_layers}. Options are "
                                  f"{list(resnet_spec)}")
    if version not in (1, 2):
        raise GluonAssertionError(f"Invalid resnet version: {version}. Options are 1 and 2.")
    block_type, layers, channels = resnet_spec[num_layers]
    net = resnet_net_versions[version - 1](resnet_block_versions[version - 1][block_type],
                                           layers, channels, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f"resnet{num_layers}_v{version}", root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net


def _factory(version: int, num_layers: int) -> Any:
    def make(**kwargs: Any) -> _ResNet:
        return get_resnet(version, num_layers, **kwargs)

    make.__name__ = f"resnet{num_layers}_v{version}"
    make.__doc__ = (f"ResNet-{num_layers} v{version}: ``get_resnet({version}, {num_layers}, "
                    f"**kwargs)``.")
    return make


resnet18_v1 = _factory(1, 18)
resnet34_v1 = _factory(1, 34)
resnet50_v1 = _factory(1, 50)
resnet101_v1 = _factory(1, 101)
resnet152_v1 = _factory(1, 152)
resnet18_v2 = _factory(2, 18)
resnet34_v2 = _factory(2, 34)
resnet50_v2 = _factory(2, 50)
resnet101_v2 = _factory(2, 101)
resnet152_v2 = _factory(2, 152)
