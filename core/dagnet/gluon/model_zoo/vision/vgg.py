"""VGG (Simonyan & Zisserman, 2014), 11 to 19 layers, with or without batch norm, in MXNet
1.x's Gluon form and initializers."""

from __future__ import annotations

from typing import Any

from ....context import cpu
from ....initializer import Xavier
from ... import nn
from ..._errors import GluonAssertionError
from ...block import HybridBlock
from ..model_store import get_model_file

__all__ = ["VGG", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn",
           "vgg19_bn", "get_vgg"]


class VGG(HybridBlock):
    """VGG: stages of ``layers[i]`` 3x3 convolutions of ``filters[i]`` channels (each
    with batch norm when ``batch_norm``), max pooling after each stage, two 4096-unit
    Dense layers with dropout and the output layer."""

    def __init__(self, layers: list, filters: list, classes: int = 1000,
                 batch_norm: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise GluonAssertionError(f"VGG: layers and filters must have one length, got "
                                      f"{len(layers)} and {len(filters)}")
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                           bias_initializer="zeros"),
                                  nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer="normal",
                                   bias_initializer="zeros")

    def _make_features(self, layers: list, filters: list,
                       batch_norm: bool) -> nn.HybridSequential:
        featurizer = nn.HybridSequential(prefix="")
        for i, num in enumerate(layers):
            for _ in range(num):
                featurizer.add(nn.Conv2D(filters[i], kernel_size=3, padding=1,
                                         weight_initializer=Xavier(rnd_type="gaussian",
                                                                   factor_type="out",
                                                                   magnitude=2),
                                         bias_initializer="zeros"))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation("relu"))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers: int, pretrained: bool = False, ctx: Any = None,
            root: str | None = None, **kwargs: Any) -> VGG:
    """VGG of ``num_layers`` (11, 13, 16, 19); ``batch_norm=True`` for the ``_bn`` kind."""
    if num_layers not in vgg_spec:
        raise GluonAssertionError(f"Invalid number of layers: {num_layers}. Options are "
                                  f"{list(vgg_spec)}")
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        suffix = "_bn" if kwargs.get("batch_norm") else ""
        net.load_parameters(get_model_file(f"vgg{num_layers}{suffix}", root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net


def _factory(num_layers: int, batch_norm: bool) -> Any:
    def make(**kwargs: Any) -> VGG:
        if batch_norm:
            kwargs["batch_norm"] = True
        return get_vgg(num_layers, **kwargs)

    make.__name__ = f"vgg{num_layers}{'_bn' if batch_norm else ''}"
    make.__doc__ = f"VGG-{num_layers}{' with batch norm' if batch_norm else ''}."
    return make


vgg11, vgg13, vgg16, vgg19 = (_factory(n, False) for n in (11, 13, 16, 19))
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_factory(n, True) for n in (11, 13, 16, 19))
