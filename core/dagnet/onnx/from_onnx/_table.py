"""The registry of import translations (ONNX operator -> dagnet symbol)."""

from __future__ import annotations

from .._records import TranslationTable

__all__ = ["IMPORTS", "IMPORT_OPSETS"]

# Models of opsets 7 to 21 read: a record holds from the opset it names on (Softmax's
# per-axis semantics from 13, say); operators whose axes moved from an attribute to an
# input read either form.
IMPORT_OPSETS = range(7, 22)
IMPORTS = TranslationTable("import", IMPORT_OPSETS)
