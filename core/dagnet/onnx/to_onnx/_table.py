"""The registry of export translations (MXNet operator -> ONNX), opsets 12 and 13."""

from __future__ import annotations

from .._records import TranslationTable

__all__ = ["EXPORTS", "EXPORT_OPSETS"]

EXPORT_OPSETS = range(12, 14)
EXPORTS = TranslationTable("export", EXPORT_OPSETS)
