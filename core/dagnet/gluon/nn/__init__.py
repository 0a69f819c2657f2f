"""``mx.gluon.nn``: neural-network layers as blocks."""

from __future__ import annotations

from ..block import Block, HybridBlock, SymbolBlock
from .activations import ELU, GELU, SELU, Activation, LeakyReLU, PReLU, Swish
from .basic_layers import (
    BatchNorm,
    Concatenate,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    GroupNorm,
    HybridConcatenate,
    HybridLambda,
    HybridSequential,
    InstanceNorm,
    Lambda,
    LayerNorm,
    Sequential,
)
from .conv_layers import (
    AvgPool1D,
    AvgPool2D,
    AvgPool3D,
    Conv1D,
    Conv1DTranspose,
    Conv2D,
    Conv2DTranspose,
    Conv3D,
    Conv3DTranspose,
    GlobalAvgPool1D,
    GlobalAvgPool2D,
    GlobalAvgPool3D,
    GlobalMaxPool1D,
    GlobalMaxPool2D,
    GlobalMaxPool3D,
    MaxPool1D,
    MaxPool2D,
    MaxPool3D,
    ReflectionPad2D,
)

__all__ = [
    "Activation", "AvgPool1D", "AvgPool2D", "AvgPool3D", "BatchNorm", "Block", "Concatenate",
    "Conv1D", "Conv1DTranspose", "Conv2D", "Conv2DTranspose", "Conv3D", "Conv3DTranspose",
    "Dense", "Dropout", "ELU", "Embedding", "Flatten", "GELU", "GlobalAvgPool1D",
    "GlobalAvgPool2D", "GlobalAvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D",
    "GlobalMaxPool3D", "GroupNorm", "HybridBlock", "HybridConcatenate", "HybridLambda",
    "HybridSequential", "InstanceNorm", "Lambda", "LayerNorm", "LeakyReLU", "MaxPool1D",
    "MaxPool2D", "MaxPool3D", "PReLU", "ReflectionPad2D", "SELU", "Sequential", "Swish",
    "SymbolBlock",
]
