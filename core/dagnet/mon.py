"""``dagnet.mon`` is MXNet's short name for :mod:`dagnet.monitor`: the same module object."""

from __future__ import annotations

import sys

from . import monitor as _monitor

sys.modules[__name__] = _monitor
