"""DenseNet-BC (Huang et al., 2017) with MXNet 1.x's structure and parameter names
(``densenet0_stage1_conv0_weight``), for 121, 161, 169 and 201 layers (224x224 images)."""

from __future__ import annotations

from typing import Any

from ....context import cpu
from ... import nn
from ..._errors import GluonAssertionError
from ...block import HybridBlock
from ...contrib.nn import HybridConcurrent, Identity
from ..model_store import get_model_file

__all__ = ["DenseNet", "densenet_spec", "get_densenet", "densenet121", "densenet161",
           "densenet169", "densenet201"]


def _make_dense_layer(growth_rate: int, bn_size: int, dropout: float) -> HybridConcurrent:
    """BN, ReLU, 1x1 conv to ``bn_size * growth_rate``, BN, ReLU, 3x3 conv to
    ``growth_rate`` (then dropout), concatenated after the layer's input."""
    new_features = nn.HybridSequential(prefix="")
    new_features.add(nn.BatchNorm(), nn.Activation("relu"),
                     nn.Conv2D(bn_size * growth_rate, kernel_size=1, use_bias=False),
                     nn.BatchNorm(), nn.Activation("relu"),
                     nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False))
    if dropout:
        new_features.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix="")
    out.add(Identity(), new_features)
    return out


def _make_dense_block(num_layers: int, bn_size: int, growth_rate: int, dropout: float,
                      stage_index: int) -> nn.HybridSequential:
    out = nn.HybridSequential(prefix=f"stage{stage_index}_")
    with out.name_scope():
        for _ in range(num_layers):
            out.add(_make_dense_layer(growth_rate, bn_size, dropout))
    return out


def _make_transition(num_output_features: int) -> nn.HybridSequential:
    """BN, ReLU, 1x1 conv to ``num_output_features`` and 2x2 average pooling."""
    out = nn.HybridSequential(prefix="")
    out.add(nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(num_output_features, kernel_size=1, use_bias=False),
            nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """DenseNet-BC: a 7x7 stem with ``num_init_features`` channels and max pooling, dense
    blocks of ``block_config[i]`` layers each adding ``growth_rate`` channels (bottleneck
    ``bn_size * growth_rate``, ``dropout`` after each layer), transitions halving channels
    and resolution, BN + ReLU, 7x7 average pooling and a ``classes``-way Dense output."""

    def __init__(self, num_init_features: int, growth_rate: int, block_config: list,
                 bn_size: int = 4, dropout: float = 0, classes: int = 1000, **kwargs: Any):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2,
                                        padding=3, use_bias=False),
                              nn.BatchNorm(), nn.Activation("relu"),
                              nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(_make_dense_block(num_layers, bn_size, growth_rate, dropout,
                                                    i + 1))
                num_features += num_layers * growth_rate
                if i != len(block_config) - 1:
                    num_features //= 2
                    self.features.add(_make_transition(num_features))
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.AvgPool2D(pool_size=7),
                              nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F: Any, x: Any) -> Any:
        return self.output(self.features(x))


densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers: int, pretrained: bool = False, ctx: Any = None,
                 root: str | None = None, **kwargs: Any) -> DenseNet:
    """DenseNet-BC of ``num_layers`` (121, 161, 169, 201); ``pretrained`` loads
    ``densenet<n>`` parameters from ``root`` (see ``model_store``)."""
    if num_layers not in densenet_spec:
        raise GluonAssertionError(f"Invalid number of layers: {num_layers}. Options are "
                                  f"{list(densenet_spec)}")
    num_init_features, growth_rate, block_config = densenet_spec[num_layers]
    net = DenseNet(num_init_features, growth_rate, block_config, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f"densenet{num_layers}", root=root),
                            ctx=ctx if ctx is not None else cpu())
    return net


def _factory(num_layers: int) -> Any:
    def make(**kwargs: Any) -> DenseNet:
        return get_densenet(num_layers, **kwargs)

    make.__name__ = f"densenet{num_layers}"
    make.__doc__ = f"DenseNet-BC-{num_layers}: ``get_densenet({num_layers}, **kwargs)``."
    return make


densenet121 = _factory(121)
densenet161 = _factory(161)
densenet169 = _factory(169)
densenet201 = _factory(201)
