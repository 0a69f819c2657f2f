"""``mx.gluon.contrib``: MXNet 1.x's contributed Gluon blocks (``gluon.contrib.nn``)."""

from __future__ import annotations

from . import nn

__all__ = ["nn"]
