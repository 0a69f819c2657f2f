"""``mx.gluon.model_zoo.vision``: image classification models (ResNet v1/v2, VGG, AlexNet)
by name, with
MXNet 1.x's parameter names, so parameters saved by MXNet load."""

from __future__ import annotations

from typing import Any

from ..._errors import GluonValueError
from .alexnet import AlexNet, alexnet
from .resnet import (
    BasicBlockV1,
    BasicBlockV2,
    BottleneckV1,
    BottleneckV2,
    ResNetV1,
    ResNetV2,
    get_resnet,
    resnet18_v1,
    resnet18_v2,
    resnet34_v1,
    resnet34_v2,
    resnet50_v1,
    resnet50_v2,
    resnet101_v1,
    resnet101_v2,
    resnet152_v1,
    resnet152_v2,
)
from .vgg import (
    VGG,
    get_vgg,
    vgg11,
    vgg11_bn,
    vgg13,
    vgg13_bn,
    vgg16,
    vgg16_bn,
    vgg19,
    vgg19_bn,
)

__all__ = ["AlexNet", "BasicBlockV1", "BasicBlockV2", "BottleneckV1", "BottleneckV2", "ResNetV1",
           "ResNetV2", "VGG", "alexnet", "get_model", "get_resnet", "get_vgg", "resnet101_v1",
           "resnet101_v2", "resnet152_v1", "resnet152_v2", "resnet18_v1", "resnet18_v2",
           "resnet34_v1", "resnet34_v2", "resnet50_v1", "resnet50_v2", "vgg11", "vgg11_bn",
           "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]

_MODELS = {f.__name__: f for f in (resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1,
                                   resnet152_v1, resnet18_v2, resnet34_v2, resnet50_v2,
                                   resnet101_v2, resnet152_v2, alexnet, vgg11, vgg13,
                                   vgg16, vgg19, vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn)}


def get_model(name: str, **kwargs: Any) -> Any:
    """The model called ``name`` (``'resnet18_v1'``, ``'vgg16_bn'``, ``'alexnet'``, ...),
    made with ``kwargs`` (``classes``, ``pretrained``, ``ctx``, ``root``, ``prefix``)."""
    name = name.lower()
    if name not in _MODELS:
        raise GluonValueError(f"Model {name} is not supported. Available options are\n\t"
                              + "\n\t".join(sorted(_MODELS)))
    return _MODELS[name](**kwargs)
