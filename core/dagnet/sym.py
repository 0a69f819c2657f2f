"""``dagnet.sym`` is MXNet's short name for :mod:`dagnet.symbol`: the same module object."""

from __future__ import annotations

import sys

from . import symbol as _symbol

sys.modules[__name__] = _symbol
