"""``mx.gluon.model_zoo``: model definitions with MXNet 1.x's block structure and parameter
names (``gluon.model_zoo.vision``)."""

from __future__ import annotations

from . import vision

__all__ = ["vision"]
