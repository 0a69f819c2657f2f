"""``dagnet.mod`` is MXNet's short name for :mod:`dagnet.module`: the same module object."""

from __future__ import annotations

import sys

from . import module as _module

sys.modules[__name__] = _module
