"""``mx.gluon.model_zoo.vision``: image classification models (ResNet v1/v2, VGG, AlexNet,
DenseNet, SqueezeNet, Inception v3, MobileNet v1/v2) by name, with MXNet 1.x's parameter
names, so parameters saved by MXNet load."""

from __future__ import annotations

from typing import Any

from ..._errors import GluonValueError
from .alexnet import AlexNet, alexnet
from .densenet import DenseNet, densenet121, densenet161, densenet169, densenet201, get_densenet
from .inception import Inception3, inception_v3
from .mobilenet import (
    MobileNet,
    MobileNetV2,
    get_mobilenet,
    get_mobilenet_v2,
    mobilenet0_5,
    mobilenet0_25,
    mobilenet0_75,
    mobilenet1_0,
    mobilenet_v2_0_5,
    mobilenet_v2_0_25,
    mobilenet_v2_0_75,
    mobilenet_v2_1_0,
)
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
from .squeezenet import SqueezeNet, get_squeezenet, squeezenet1_0, squeezenet1_1
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

__all__ = ["AlexNet", "BasicBlockV1", "BasicBlockV2", "BottleneckV1", "BottleneckV2", "DenseNet",
           "Inception3", "MobileNet", "MobileNetV2", "ResNetV1", "ResNetV2", "SqueezeNet", "VGG",
           "alexnet", "densenet121", "densenet161", "densenet169", "densenet201", "get_densenet",
           "get_mobilenet", "get_mobilenet_v2", "get_model", "get_resnet", "get_squeezenet",
           "get_vgg", "inception_v3", "mobilenet0_25", "mobilenet0_5", "mobilenet0_75",
           "mobilenet1_0", "mobilenet_v2_0_25", "mobilenet_v2_0_5", "mobilenet_v2_0_75",
           "mobilenet_v2_1_0", "resnet101_v1", "resnet101_v2", "resnet152_v1", "resnet152_v2",
           "resnet18_v1", "resnet18_v2", "resnet34_v1", "resnet34_v2", "resnet50_v1",
           "resnet50_v2", "squeezenet1_0", "squeezenet1_1", "vgg11", "vgg11_bn", "vgg13",
           "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn"]

# The names MXNet's get_model accepts: the function names, except the families MXNet
# spells with a dot (``squeezenet1.0``, ``mobilenetv2_0.75``, ``inceptionv3``).
_MODELS = {
    **{f.__name__: f for f in (resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1,
                               resnet152_v1, resnet18_v2, resnet34_v2, resnet50_v2,
                               resnet101_v2, resnet152_v2, alexnet, vgg11, vgg13, vgg16, vgg19,
                               vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn, densenet121,
                               densenet161, densenet169, densenet201)},
    "squeezenet1.0": squeezenet1_0, "squeezenet1.1": squeezenet1_1,
    "inceptionv3": inception_v3,
    "mobilenet1.0": mobilenet1_0, "mobilenet0.75": mobilenet0_75,
    "mobilenet0.5": mobilenet0_5, "mobilenet0.25": mobilenet0_25,
    "mobilenetv2_1.0": mobilenet_v2_1_0, "mobilenetv2_0.75": mobilenet_v2_0_75,
    "mobilenetv2_0.5": mobilenet_v2_0_5, "mobilenetv2_0.25": mobilenet_v2_0_25,
}


def get_model(name: str, **kwargs: Any) -> Any:
    """The model called ``name`` (``'resnet18_v1'``, ``'vgg16_bn'``, ``'squeezenet1.1'``,
    ``'mobilenetv2_0.5'``, ``'inceptionv3'``, ...; case-insensitive),
    made with ``kwargs`` (``classes``, ``pretrained``, ``ctx``, ``root``, ``prefix``)."""
    name = name.lower()
    if name not in _MODELS:
        raise GluonValueError(f"Model {name} is not supported. Available options are\n\t"
                              + "\n\t".join(sorted(_MODELS)))
    return _MODELS[name](**kwargs)
