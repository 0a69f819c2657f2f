"""``dagnet.viz`` is MXNet's short name for :mod:`dagnet.visualization`: the same module
object."""

from __future__ import annotations

import sys

from . import visualization as _visualization

sys.modules[__name__] = _visualization
