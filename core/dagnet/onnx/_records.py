"""Translation records: one per operator and opset, kept in a small registry.

A record is the ONNX counterpart of an operator record: the name it translates,
the opset from which it holds, and the function that does it.  Export records
are keyed by MXNet operator name (``Convolution``), import records by ONNX
operator type (``Conv``).  A lookup for opset *n* takes the record with the
highest opset that is not above *n*, so a translation written for opset 12 also
serves 13 unless a record for 13 replaces it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ._errors import OnnxOpsetError

__all__ = ["Translation", "TranslationTable"]


@dataclass(frozen=True)
class Translation:
    """How one operator is translated from ``opset`` on."""

    name: str
    opset: int
    convert: Callable[..., Any]
    provider: str

    @property
    def summary(self) -> str:
        """The first line of the translation's docstring."""
        doc = (self.convert.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""


class TranslationTable:
    """The records of one direction (``export`` or ``import``) over a range of opsets."""

    def __init__(self, direction: str, opsets: range) -> None:
        self.direction = direction
        self.opsets = opsets
        self._records: dict[str, dict[int, Translation]] = {}

    def register(self, *names: str, opset: int | None = None
                 ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator: the function translates each of ``names`` from ``opset`` on
        (default: the lowest opset of the table)."""

        def decorate(convert: Callable[..., Any]) -> Callable[..., Any]:
            for name in names:
                self.add(name, convert, opset=opset)
            return convert

        return decorate

    def add(self, name: str, convert: Callable[..., Any], *, opset: int | None = None) -> None:
        """Add the record ``(name, opset)``; a second record for the same pair is an error."""
        version = self.opsets.start if opset is None else opset
        by_opset = self._records.setdefault(name, {})
        if version in by_opset:
            raise ValueError(f"{self.direction} translation of {name!r} for opset {version} is "
                             f"registered twice ({by_opset[version].provider} and "
                             f"{convert.__module__})")
        by_opset[version] = Translation(name, version, convert, convert.__module__)

    def check_opset(self, opset: int) -> None:
        """Raise :class:`OnnxOpsetError` when ``opset`` is outside the table's range."""
        if not isinstance(opset, int) or opset not in self.opsets:
            raise OnnxOpsetError(
                f"ONNX opset {opset!r} is out of range for {self.direction}: dagnet "
                f"translates opsets {self.opsets.start} to {self.opsets.stop - 1}; pick one "
                f"of them")

    def lookup(self, name: str, opset: int) -> Translation | None:
        """The record translating ``name`` at ``opset``, or None."""
        by_opset = self._records.get(name, {})
        usable = [version for version in by_opset if version <= opset]
        return by_opset[max(usable)] if usable else None

    def names(self, opset: int | None = None) -> list[str]:
        """Every name with a translation at ``opset`` (default: the highest), sorted."""
        opset = self.opsets.stop - 1 if opset is None else opset
        return sorted(name for name in self._records if self.lookup(name, opset) is not None)

    def records(self) -> Iterator[Translation]:
        """Every record, by name then opset."""
        for name in sorted(self._records):
            for version in sorted(self._records[name]):
                yield self._records[name][version]

    def __contains__(self, name: object) -> bool:
        return name in self._records

    def __len__(self) -> int:
        return len(self._records)
