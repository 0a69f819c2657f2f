"""The errors of ONNX export and import: each a :class:`dagnet.DagnetError` and the
builtin that fits, saying what was wrong and how to fix it."""

from __future__ import annotations

from .._errors import DagnetError, ShapeError

__all__ = [
    "OnnxDependencyError",
    "OnnxError",
    "OnnxExportError",
    "OnnxImportError",
    "OnnxModelError",
    "OnnxOpsetError",
    "OnnxShapeError",
    "UnsupportedOperatorError",
]


class OnnxError(DagnetError, ValueError):
    """Root of the ONNX errors: the model or the arguments cannot be translated."""


class OnnxDependencyError(DagnetError, ImportError):
    """``onnx`` or ``onnxruntime`` is not installed; the message names the extra that
    installs them (``pip install "dagnet[onnx]"``)."""


class OnnxExportError(OnnxError):
    """A symbol (or its parameters) cannot be written as ONNX."""


class OnnxImportError(OnnxError):
    """An ONNX graph cannot be built as a dagnet symbol."""


class UnsupportedOperatorError(OnnxError, NotImplementedError):
    """An operator without a translation: the message names the operator, the node and
    the opset, and lists what is supported."""

    def __init__(self, message: str, *, operator: str, node: str, opset: int) -> None:
        super().__init__(message)
        self.operator = operator
        self.node = node
        self.opset = opset


class OnnxOpsetError(OnnxError):
    """An opset outside the range a translation table covers."""


class OnnxModelError(OnnxError):
    """A file that is not a readable ONNX model (corrupt, truncated, or not ONNX at all),
    or one ONNX's checker rejects."""


class OnnxShapeError(OnnxError, ShapeError):
    """Input shapes or types that do not fit the symbol being exported."""
