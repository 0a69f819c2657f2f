"""Kernels compiled with numba for the layers numpy walks through memory too often
(BatchNorm's passes).

Used when numba is installed (a dependency of dagnet where numba ships wheels) and
``config cpu_jit`` is on (``DAGNET_CPU_JIT=0`` turns it off); otherwise
:func:`kernels` is None and layers run their numpy kernels.  numba is imported on first
use, not with dagnet.  Each kernel compiles once per dtype, and numba caches the machine
code beside this package (or in its user cache when that is not writable), so later
processes load it.  Why the kernels did not load is logged at debug level (logger
``dagnet_ops.nn.jit``) and kept by :func:`unavailable_reason`.
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType

from dagnet import config

from ..._load_once import LoadOnce

__all__ = ["kernels", "unavailable_reason"]

log = logging.getLogger("dagnet_ops.nn.jit")

# numba absent, or too old or new for this numpy: any error of the import
_loaded = LoadOnce(lambda: importlib.import_module(f"{__name__}._batch_norm"), (Exception,),
                   "numba kernels", log)


def kernels() -> ModuleType | None:
    """The compiled kernels' module (:mod:`._batch_norm`) if layers should use it now,
    else None."""
    if not config.get("cpu_jit"):
        return None
    return _loaded.get()


def unavailable_reason() -> str | None:
    """Why :func:`kernels` is None (switched off, or the import error), or None if it is
    not."""
    if not config.get("cpu_jit"):
        return "switched off (config cpu_jit / DAGNET_CPU_JIT)"
    _loaded.get()
    return _loaded.failure
