"""``mx.gluon.contrib.nn``: ``Concurrent``/``HybridConcurrent`` (children on one input,
outputs concatenated), ``Identity`` and the ``PixelShuffle`` layers."""

from __future__ import annotations

from .basic_layers import (
    Concurrent,
    HybridConcurrent,
    Identity,
    PixelShuffle1D,
    PixelShuffle2D,
    PixelShuffle3D,
)

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "PixelShuffle1D", "PixelShuffle2D",
           "PixelShuffle3D"]
