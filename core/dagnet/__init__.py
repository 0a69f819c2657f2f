"""dagnet: the MXNet 1.x architecture in Python, extended by pluggy plugins.

``import dagnet as mx`` is cheap: it imports no plugin and no array library
beyond what a name you touch needs.  Subsystems load on first attribute
access (``dagnet.engine``, ``dagnet.storage``, ...).
"""

from __future__ import annotations

import importlib
from typing import Any

from . import config
from ._errors import (
    BackendUnavailableError,
    ConfigError,
    ContextError,
    DagnetError,
    DeletedVariableError,
    DTypeError,
    DuplicateRegistrationError,
    EngineDeadlockError,
    EngineError,
    EngineForkError,
    EngineTimeoutError,
    EngineTypeError,
    NotImplementedForSymbol,
    OperatorError,
    OperatorFailedAttributeError,
    OperatorFailedError,
    OperatorFailedIndexError,
    OperatorFailedNotImplementedError,
    OperatorFailedTypeError,
    OperatorFailedValueError,
    ParamError,
    PluginError,
    ResourceError,
    ShapeError,
    StorageError,
    UnknownNameError,
)
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .plugins import hookimpl, hookspec

MXNetError = DagnetError  # MXNet 1.x's name for the base of every error (mx.MXNetError)

__version__ = "0.1.0"

_LAZY_SUBMODULES = {
    "attribute",
    "autograd",
    "backend",
    "base",
    "callback",
    "contrib",
    "engine",
    "executor",
    "gluon",
    "image",
    "init",
    "initializer",
    "io",
    "kv",
    "kvstore",
    "lr_scheduler",
    "metric",
    "mod",
    "model",
    "module",
    "mon",
    "monitor",
    "name",
    "nd",
    "ndarray",
    "np", "npx", "numpy", "numpy_extension",  # mx.np and mx.npx: MXNet's NumPy interface
    "onnx",
    "operator",
    "optimizer",
    "profiler",
    "random",
    "recordio",
    "registry",
    "resource",
    "rnn",
    "runtime",
    "storage",
    "sym",
    "symbol",
    "test_utils",
    "testing",
    "util",
    "visualization",
    "viz",
}

# Classes MXNet exposes at the top level, from the submodule that defines them.
_LAZY_ATTRIBUTES = {
    "AttrScope": "attribute",
    **dict.fromkeys(["is_np_shape", "set_np_shape", "np_shape", "use_np_shape", "is_np_array",
                     "np_array", "use_np_array", "use_np"], "util"),
}
_LAZY_ATTRIBUTES["img"] = "image"  # mx.img: MXNet's second name for mx.image

# What ``from dagnet import *`` gives: the names above and the lazy ones, except the
# testing helpers (they import pytest and hypothesis).
__all__ = [
    "BackendUnavailableError",
    "config",
    "ConfigError",
    "Context",
    "context",
    "ContextError",
    "cpu",
    "cpu_pinned",
    "current_context",
    "DagnetError",
    "DeletedVariableError",
    "DTypeError",
    "DuplicateRegistrationError",
    "EngineDeadlockError",
    "EngineError",
    "EngineForkError",
    "EngineTimeoutError",
    "EngineTypeError",
    "gpu",
    "hookimpl",
    "hookspec",
    "MXNetError",
    "NotImplementedForSymbol",
    "num_gpus",
    "OperatorError",
    "OperatorFailedAttributeError",
    "OperatorFailedError",
    "OperatorFailedIndexError",
    "OperatorFailedNotImplementedError",
    "OperatorFailedTypeError",
    "OperatorFailedValueError",
    "ParamError",
    "PluginError",
    "plugins",
    "ResourceError",
    "ShapeError",
    "StorageError",
    "UnknownNameError",
    "__version__",
    *sorted(_LAZY_SUBMODULES - {"testing"}),
    *_LAZY_ATTRIBUTES,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY_ATTRIBUTES:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY_ATTRIBUTES[name]}"), name)
        globals()[name] = value
        return value
    if name in _LAZY_SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'dagnet' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_SUBMODULES | set(_LAZY_ATTRIBUTES))
