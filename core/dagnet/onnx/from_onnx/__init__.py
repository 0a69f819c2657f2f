"""Import translations, ONNX operator -> dagnet symbol: one record per operator and
opset.

Each family module registers its records in :data:`IMPORTS` when imported; a
translation takes the node (:class:`ImportNode`) and returns its outputs as
symbols, or as numpy arrays when they are known while importing (shape arithmetic).
"""

from __future__ import annotations

from . import (  # noqa: F401  (each module registers its records)
    elementwise,
    nn,
    reduce,
    special,
    tensor,
)
from ._context import ImportNode, SymbolGraph, Value
from ._table import IMPORT_OPSETS, IMPORTS

__all__ = ["IMPORTS", "IMPORT_OPSETS", "ImportNode", "SymbolGraph", "Value"]
