"""SqueezeNet 1.0 (Iandola et al., 2016) and 1.1 (the SqueezeNet repository's cheaper
variant) with MXNet 1.x's structure and parameter names (``squeezenet0_conv0_weight``), for
224x224 images."""

from __future__ import annotations

from typing import Any

from ....context import cpu
from ... import nn
from ..._errors import GluonAssertionError
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent
from ..model_store import get_model_file

__all__ = ["SqueezeNet", "get_squeezenet", "squeezenet1_0", "squeezenet1_1"]


def _make_fire_conv(channels: int, kernel_size: int, padding: int = 0) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation("relu"))
    return out


def _make_fire(squeeze_channels: int, expand1x1_channels: int,
               expand3x3_channels: int) -> nn.HybridSequential:
    """A fire module: a 1x1 squeeze, then 1x1 and 3x3 expansions concatenated on channels."""
    out = nn.HybridSequential(prefix="")
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = HybridConcurrent(axis=1, prefix="")
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


def _pool() -> nn.MaxPool2D:
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(HybridBlock):
    """SqueezeNet ``version`` ``'1.0'`` or ``'1.1'``: a strided stem, fire modules between
    max poolings, dropout, then a 1x1 convolution to ``classes`` with ReLU, 13x13 average
    pooling and flatten (so the input must be 224x224 or a size that gives 13x13
    features)."""

    def __init__(self, version: str, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        if version not in ("1.0", "1.1"):
            raise GluonAssertionError(f"Unsupported SqueezeNet version {version}: 1.0 or 1.1 "
                                      f"expected")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            if version == "1.0":
                self.features.add(nn.Conv2D(96, kernel_size=7, strides=2),
                                  nn.Activation("relu"), _pool(),
                                  _make_fire(16, 64, 64), _make_fire(16, 64, 64),
                                  _make_fire(32, 128, 128), _pool(),
                                  _make_fire(32, 128, 128), _make_fire(48, 192, 192),
                                  _make_fire(48, 192, 192), _make_fire(64, 256, 256), _pool(),
                                  _make_fire(64, 256, 256))
            else:
                self.features.add(nn.Conv2D(64, kernel_size=3, strides=2),
                                  nn.Activation("relu"), _pool(),
                                  _make_fire(16, 64, 64), _make_fire(16, 64, 64), _pool(),
                                  _make_fire(32, 128, 128), _make_fire(32, 128, 128), _pool(),
                                  _make_fire(48, 192, 192), _make_fire(48, 192, 192),
                                  _make_fire(64, 256, 256), _make_fire(64, 256, 256))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"),
                            nn.AvgPool2D(13), nn.Flatten())

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


def get_squeezenet(version: str, pretrained: bool = False, ctx: Any = None,
                   root: str | None = None, **kwargs: Any) -> SqueezeNet:
    """SqueezeNet ``version`` (``'1.0'`` or ``'1.1'``); ``pretrained`` loads
    ``squeezenet<version>`` parameters from ``root`` (see ``model_store``)."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f"squeezenet{version}", root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net


def squeezenet1_0(**kwargs: Any) -> SqueezeNet:
    """SqueezeNet 1.0: ``get_squeezenet('1.0', **kwargs)``."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs: Any) -> SqueezeNet:
    """SqueezeNet 1.1 (about 2.4x less computation than 1.0, similar accuracy):
    ``get_squeezenet('1.1', **kwargs)``."""
    return get_squeezenet("1.1", **kwargs)
