"""``mx.contrib.svrg_optimization``: :class:`SVRGModule`, a Module trained with
stochastic variance reduced gradients, and the optimizer wrapper it uses."""

from __future__ import annotations

from . import svrg_module, svrg_optimizer
from .svrg_module import SVRGModule

__all__ = ["SVRGModule", "svrg_module", "svrg_optimizer"]
