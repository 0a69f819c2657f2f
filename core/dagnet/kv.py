"""``dagnet.kv`` is MXNet's short name for :mod:`dagnet.kvstore`: the same module object."""

from __future__ import annotations

import sys

from . import kvstore as _kvstore

sys.modules[__name__] = _kvstore
