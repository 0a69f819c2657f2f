"""Automatic mixed precision (``mx.contrib.amp``): see :mod:`.amp`."""

from . import amp, lists
from .amp import *  # noqa: F403 -- MXNet's mx.contrib.amp.<name> is amp.amp.<name>
from .amp import __all__ as _amp_all
from .loss_scaler import LossScaler

__all__ = [*_amp_all, "LossScaler", "amp", "lists"]
