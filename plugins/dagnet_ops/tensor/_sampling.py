"""Hypothesis draws for the operators' conformance domains.

Each function takes the suite's ``draw``; hypothesis is imported inside, so the
operator library itself does not depend on it.  Values stay where central
differences work: away from kinks (``away``) and, where order matters (max,
sort, maximum), on a grid so no two values are closer than its step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

Draw = Callable[[Any], Any]


def _st() -> Any:
    from hypothesis import strategies as st

    return st


def shape(draw: Draw, min_dims: int = 1, max_dims: int = 3, min_side: int = 1,
          max_side: int = 4) -> tuple[int, ...]:
    st = _st()
    return tuple(draw(st.lists(st.integers(min_side, max_side), min_size=min_dims,
                               max_size=max_dims), label="shape"))


def floats(draw: Draw, shape: Sequence[int], lo: float = -2.0, hi: float = 2.0, *,
           away: Sequence[float] = (), margin: float = 0.05) -> np.ndarray:
    """float64 values in ``[lo, hi]`` at least ``margin`` from every point in ``away``."""
    from hypothesis.extra.numpy import arrays

    st = _st()
    elements = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    if away:
        elements = elements.filter(lambda v: all(abs(v - p) > margin for p in away))
    return draw(arrays(np.float64, tuple(shape), elements=elements), label="array")


def grid(draw: Draw, shape: Sequence[int], lo: float = -2.0, hi: float = 2.0, *,
         step: float = 0.01, offset: float = 0.0, unique: bool = True) -> np.ndarray:
    """float64 values ``k * step + offset`` in ``[lo, hi]``; distinct when ``unique``."""
    from hypothesis.extra.numpy import arrays

    st = _st()
    ints = draw(arrays(np.int64, tuple(shape), elements=st.integers(int(lo / step), int(hi / step)),
                       unique=unique), label="grid")
    return ints.astype(np.float64) * step + offset


def integers(draw: Draw, shape: Sequence[int], lo: int, hi: int) -> np.ndarray:
    """Integer values in ``[lo, hi]`` stored as float64 (MXNet's indices are float arrays)."""
    from hypothesis.extra.numpy import arrays

    st = _st()
    return draw(arrays(np.int64, tuple(shape), elements=st.integers(lo, hi)),
                label="indices").astype(np.float64)


def broadcastable(draw: Draw, out: Sequence[int]) -> tuple[int, ...]:
    """A shape that broadcasts to ``out``: some dims set to 1, maybe leading dims dropped."""
    st = _st()
    drop = draw(st.integers(0, len(out) - 1), label="dropped leading dims")
    return tuple(1 if draw(st.booleans(), label="broadcast dim") else d for d in out[drop:])


def axes(draw: Draw, ndim: int, *, allow_none: bool = True, negative: bool = True) -> Any:
    """None or a sorted tuple of distinct axes (possibly written negative)."""
    st = _st()
    if allow_none and draw(st.booleans(), label="axis is None"):
        return None
    chosen = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True),
                  label="axes")
    if negative:
        chosen = [a - ndim if draw(st.booleans(), label="negative") else a for a in chosen]
    return tuple(chosen)


def axis(draw: Draw, ndim: int, *, extra: int = 0) -> int:
    """One axis in ``[-ndim-extra, ndim+extra)``."""
    st = _st()
    return draw(st.integers(-ndim - extra, ndim + extra - 1), label="axis")


def boolean(draw: Draw, label: str = "flag") -> bool:
    return draw(_st().booleans(), label=label)


def choice(draw: Draw, options: Sequence[Any], label: str = "choice") -> Any:
    return draw(_st().sampled_from(list(options)), label=label)


def number(draw: Draw, lo: float, hi: float, *, away: Sequence[float] = (),
           margin: float = 0.05, label: str = "scalar") -> float:
    st = _st()
    elements = st.floats(lo, hi, allow_nan=False, allow_infinity=False)
    if away:
        elements = elements.filter(lambda v: all(abs(v - p) > margin for p in away))
    return draw(elements, label=label)


def integer(draw: Draw, lo: int, hi: int, label: str = "int") -> int:
    return draw(_st().integers(lo, hi), label=label)


def subset(draw: Draw, items: Sequence[Any], label: str = "subset") -> list:
    """A non-empty subset of ``items``, in drawn order."""
    st = _st()
    return draw(st.lists(st.sampled_from(list(items)), min_size=1, max_size=len(items),
                         unique=True), label=label)
