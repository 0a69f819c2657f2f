"""``mx.gluon.contrib.cnn``: deformable convolution layers (v1 and the modulated v2)."""

from __future__ import annotations

from .conv_layers import DeformableConvolution, ModulatedDeformableConvolution

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]
