"""The optional packages ONNX support runs on, imported only when used.

``import dagnet.onnx`` costs nothing; the first export or import loads ``onnx``
(and a check against ONNX Runtime loads ``onnxruntime``). Both come with the
``onnx`` extra: ``pip install "dagnet[onnx]"``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ._errors import OnnxDependencyError

__all__ = ["require_onnx", "require_onnxruntime"]

_EXTRA_HINT = 'install them with the extra: pip install "dagnet[onnx]"'


def _require(name: str, what: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as error:
        raise OnnxDependencyError(
            f"{what} needs the {name!r} package, which is not installed ({error}); "
            f"dagnet's ONNX support uses onnx and onnxruntime: {_EXTRA_HINT}"
        ) from error


def require_onnx(what: str = "ONNX export and import") -> ModuleType:
    """The ``onnx`` module, or an :class:`OnnxDependencyError` naming the extra."""
    return _require("onnx", what)


def require_onnxruntime(what: str = "running an ONNX model") -> ModuleType:
    """The ``onnxruntime`` module, or an :class:`OnnxDependencyError` naming the extra."""
    return _require("onnxruntime", what)
