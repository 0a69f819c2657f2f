"""``dagnet.npx`` is MXNet's short name for :mod:`dagnet.numpy_extension`: the same module
object."""

from __future__ import annotations

import sys

from . import numpy_extension as _numpy_extension

sys.modules[__name__] = _numpy_extension
