"""ONNX: export dagnet (MXNet) models to ONNX and import ONNX models (``mx.onnx``).

``export_model`` writes a symbol and its parameters (objects or the files a model
was saved in, e.g. by ``HybridBlock.export``) as an ONNX model of opset 12 or 13,
MXNet 1.9.1's ``mx.onnx.export_model``; ``import_model`` reads an ONNX model back
as a symbol with its parameters (``mx.contrib.onnx`` also builds a Gluon
``SymbolBlock``).  Each direction is a table of translation records, one per
operator and opset (:mod:`dagnet.onnx.to_onnx`, :mod:`dagnet.onnx.from_onnx`).

Needs the ``onnx`` package (and ``onnxruntime`` to run the models): ``pip install
"dagnet[onnx]"``; importing this module does not load them.
"""

from __future__ import annotations

from ._deps import require_onnx, require_onnxruntime
from ._errors import (
    OnnxDependencyError,
    OnnxError,
    OnnxExportError,
    OnnxImportError,
    OnnxModelError,
    OnnxOpsetError,
    OnnxShapeError,
    UnsupportedOperatorError,
)
from ._export import default_export_opset, export_model, export_to_proto, get_operator_support
from ._import import get_model_metadata, import_model, import_to_symbol, load_onnx_model
from ._records import Translation, TranslationTable

__all__ = [
    "default_export_opset", "export_model", "export_to_proto", "get_model_metadata",
    "get_operator_support", "import_model", "import_to_symbol", "load_onnx_model",
    "OnnxDependencyError", "OnnxError", "OnnxExportError", "OnnxImportError",
    "OnnxModelError", "OnnxOpsetError", "OnnxShapeError", "require_onnx",
    "require_onnxruntime", "Translation", "TranslationTable", "UnsupportedOperatorError",
]
