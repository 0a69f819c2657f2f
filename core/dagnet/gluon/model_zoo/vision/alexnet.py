"""AlexNet (Krizhevsky et al., 2012) in MXNet 1.x's Gluon form: five convolutions, three
max poolings, two 4096-unit Dense layers with dropout, and the output layer."""

from __future__ import annotations

from typing import Any

from ....context import cpu
from ... import nn
from ...block import HybridBlock
from ..model_store import get_model_file

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    """AlexNet with ``classes`` outputs (for 224x224 images)."""

    def __init__(self, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                self.features.add(
                    nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"),
                    nn.MaxPool2D(pool_size=3, strides=2),
                    nn.Conv2D(192, kernel_size=5, padding=2, activation="relu"),
                    nn.MaxPool2D(pool_size=3, strides=2),
                    nn.Conv2D(384, kernel_size=3, padding=1, activation="relu"),
                    nn.Conv2D(256, kernel_size=3, padding=1, activation="relu"),
                    nn.Conv2D(256, kernel_size=3, padding=1, activation="relu"),
                    nn.MaxPool2D(pool_size=3, strides=2),
                    nn.Flatten(),
                    nn.Dense(4096, activation="relu"), nn.Dropout(0.5),
                    nn.Dense(4096, activation="relu"), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


def alexnet(pretrained: bool = False, ctx: Any = None, root: str | None = None,
            **kwargs: Any) -> AlexNet:
    """AlexNet; ``pretrained`` loads ``alexnet`` parameters from ``root``."""
    net = AlexNet(**kwargs)
    if pretrained:
        net.load_parameters(get_model_file("alexnet", root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net
