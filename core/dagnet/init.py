"""``dagnet.init`` is MXNet's short name for :mod:`dagnet.initializer`: the same module object."""

from __future__ import annotations

import sys

from . import initializer as _initializer

sys.modules[__name__] = _initializer
