"""``dagnet.nd`` is MXNet's short name for :mod:`dagnet.ndarray`: the same module object."""

from __future__ import annotations

import sys

from . import ndarray as _ndarray

sys.modules[__name__] = _ndarray
