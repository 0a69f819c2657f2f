"""``mx.gluon.contrib.nn``: ``Concurrent``/``HybridConcurrent`` (children on one input,
outputs concatenated), ``Identity``, the ``PixelShuffle`` layers, ``SparseEmbedding`` and
``SyncBatchNorm``."""

from __future__ import annotations

from .basic_layers import (
    Concurrent,
    HybridConcurrent,
    Identity,
    PixelShuffle1D,
    PixelShuffle2D,
    PixelShuffle3D,
    SparseEmbedding,
    SyncBatchNorm,
)

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "PixelShuffle1D", "PixelShuffle2D",
           "PixelShuffle3D", "SparseEmbedding", "SyncBatchNorm"]
