"""Kernels compiled with numba where numpy's kernels walk memory too often or hold the
interpreter lock too often: BatchNorm's passes (family ``"batch_norm"``), the SGD and
Adam updates (``"updates"``) and box_nms's greedy suppression (``"nms"``).

Used when numba is installed (a dependency of dagnet where numba ships wheels) and
``config cpu_jit`` is on (``DAGNET_CPU_JIT=0`` turns it off); otherwise
:func:`kernels` is None and operators run their numpy kernels.  numba is imported on first
use, not with dagnet.  Each kernel compiles once per signature, and numba caches the
machine code beside this package (or in its user cache when that is not writable), so
later processes load it.  Why a family did not load is logged at debug level (logger
``dagnet_ops.jit``) and kept by :func:`unavailable_reason`.
"""

from __future__ import annotations

import functools
import importlib
import logging
from types import ModuleType

from dagnet import config

from .._load_once import LoadOnce

__all__ = ["FAMILIES", "kernels", "unavailable_reason"]

log = logging.getLogger("dagnet_ops.jit")

#: family -> the module of this package holding its kernels
FAMILIES = {"batch_norm": "_batch_norm", "updates": "_updates", "nms": "_nms"}

# numba absent, or too old or new for this numpy: any error of the import
_loaded = {family: LoadOnce(functools.partial(importlib.import_module, f"{__name__}.{module}"),
                            (Exception,), f"numba kernels ({family})", log)
           for family, module in FAMILIES.items()}


def kernels(family: str) -> ModuleType | None:
    """The compiled kernels' module of ``family`` (a key of :data:`FAMILIES`) if operators
    should use it now, else None."""
    if not config.get("cpu_jit"):
        return None
    return _loaded[family].get()


def unavailable_reason(family: str) -> str | None:
    """Why :func:`kernels` is None for ``family`` (switched off, or the import error), or
    None if it is not."""
    if not config.get("cpu_jit"):
        return "switched off (config cpu_jit / DAGNET_CPU_JIT)"
    _loaded[family].get()
    return _loaded[family].failure
