"""Export translations, MXNet operator -> ONNX: one record per operator and opset.

Each family module registers its records in :data:`EXPORTS` when imported;
``EXPORTS.lookup("Convolution", 13)`` gives the record that translates a
``Convolution`` node for opset 13.  A translation takes the node
(:class:`ExportNode`) and the graph builder (:class:`OnnxBuilder`) and writes
ONNX nodes producing the node's outputs.
"""

from __future__ import annotations

from . import (  # noqa: F401  (each module registers its records)
    creation,
    detection,
    elementwise,
    indexing,
    linalg,
    nn,
    reduce,
    sequence,
    tensor,
)
from ._context import ExportNode, OnnxBuilder
from ._table import EXPORT_OPSETS, EXPORTS

__all__ = ["EXPORTS", "EXPORT_OPSETS", "ExportNode", "OnnxBuilder"]
