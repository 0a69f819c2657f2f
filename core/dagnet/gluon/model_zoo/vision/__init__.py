"""``mx.gluon.model_zoo.vision``: image classification models (ResNet v1/v2) by name, with
MXNet 1.x's parameter names, so parameters saved by MXNet load."""

from __future__ import annotations

from typing import Any

from ..._errors import GluonValueError
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

__all__ = ["BasicBlockV1", "BasicBlockV2", "BottleneckV1", "BottleneckV2", "ResNetV1",
           "ResNetV2", "get_model", "get_resnet", "resnet18_v1", "resnet18_v2", "resnet34_v1",
           "resnet34_v2", "resnet50_v1", "resnet50_v2", "resnet101_v1", "resnet101_v2",
           "resnet152_v1", "resnet152_v2"]

_MODELS = {f.__name__: f for f in (resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1,
                                   resnet152_v1, resnet18_v2, resnet34_v2, resnet50_v2,
                                   resnet101_v2, resnet152_v2)}


def get_model(name: str, **kwargs: Any) -> Any:
    """The model called ``name`` (``'resnet18_v1'``, ...), made with ``kwargs``
    (``classes``, ``pretrained``, ``ctx``, ``root``, ``prefix``)."""
    name = name.lower()
    if name not in _MODELS:
        raise GluonValueError(f"Model {name} is not supported. Available options are\n\t"
                              + "\n\t".join(sorted(_MODELS)))
    return _MODELS[name](**kwargs)
