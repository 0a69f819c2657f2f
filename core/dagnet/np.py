"""``dagnet.np`` is MXNet's short name for :mod:`dagnet.numpy`: the same module object."""

from __future__ import annotations

import sys

from . import numpy as _numpy

sys.modules[__name__] = _numpy
