"""Drawing conformance-suite cases (see :class:`dagnet.operator.Domain`).

Hypothesis is imported only when a case is drawn, so the operator library
does not depend on it at run time.  Values come from a numpy generator
seeded by hypothesis: well-spread values that keep clear of the kinks
(ReLU at 0, max-pooling ties) where central differences are meaningless.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["Draw"]


class Draw:
    """A hypothesis ``draw`` with the few strategies the nn, random and optimizer domains
    use."""

    def __init__(self, draw: Callable[[Any], Any]):
        from hypothesis import strategies as st

        self._draw = draw
        self._st = st
        self.rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1), label="values seed"))

    def int(self, low: int, high: int, label: str | None = None) -> int:
        return self._draw(self._st.integers(low, high), label=label)

    def bool(self, label: str | None = None) -> bool:
        return self._draw(self._st.booleans(), label=label)

    def choice(self, options: Sequence[Any], label: str | None = None) -> Any:
        return self._draw(self._st.sampled_from(list(options)), label=label)

    def float(self, low: float, high: float, label: str | None = None) -> float:
        return self._draw(self._st.floats(low, high, allow_nan=False, allow_infinity=False),
                          label=label)

    def shape(self, ndim: int, low: int = 1, high: int = 3) -> tuple[int, ...]:
        return tuple(self.int(low, high) for _ in range(ndim))

    def uniform(self, shape: Sequence[int], low: float = -1.0, high: float = 1.0) -> np.ndarray:
        return self.rng.uniform(low, high, size=tuple(shape))

    def away_from_zero(self, shape: Sequence[int], low: float = 0.1,
                       high: float = 2.0) -> np.ndarray:
        """Values with ``low <= |x| <= high`` and random signs."""
        magnitude = self.rng.uniform(low, high, size=tuple(shape))
        return np.where(self.rng.random(size=tuple(shape)) < 0.5, -magnitude, magnitude)

    def distinct(self, shape: Sequence[int], spacing: float = 0.1) -> np.ndarray:
        """Values at least ``spacing`` apart (no ties for max pooling)."""
        size = int(np.prod(shape, dtype=np.int64))
        grid = (self.rng.permutation(size) - size / 2) * spacing
        return (grid + self.rng.uniform(0, spacing / 4, size=size)).reshape(tuple(shape))
