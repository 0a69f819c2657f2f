"""MXNet's NDArray functions that take numpy-style arguments and translate them into
one operator's parameters: ``split_v2`` (``_split_v2``) and ``histogram``
(``_histogram``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import DagnetError
from ._frontend import function
from ._ndarray import NDArray

__all__ = ["histogram", "split_v2", "split_v2_params"]


class NumpyStyleArgumentError(DagnetError, ValueError):
    """A numpy-style argument that has no operator counterpart."""


def split_v2_params(indices_or_sections: int | Sequence[int], axis: int,
                    squeeze_axis: bool) -> dict[str, Any]:
    """``_split_v2``'s parameters for numpy's ``indices_or_sections``: a count of equal
    sections, or the split points (each part then starts at 0 or at a point)."""
    if isinstance(indices_or_sections, (int, np.integer)):
        return {"indices": (), "sections": int(indices_or_sections), "axis": axis,
                "squeeze_axis": squeeze_axis}
    if isinstance(indices_or_sections, (tuple, list)):
        return {"indices": (0, *(int(i) for i in indices_or_sections)), "axis": axis,
                "squeeze_axis": squeeze_axis}
    raise NumpyStyleArgumentError(
        f"split_v2: indices_or_sections must be an int or a tuple of ints, got "
        f"{type(indices_or_sections).__name__}")


def split_v2(ary: NDArray, indices_or_sections: int | Sequence[int], axis: int = 0,
             squeeze_axis: bool = False) -> Any:
    """Split ``ary`` along ``axis`` as numpy's ``split``: into ``indices_or_sections``
    equal parts (an int) or at the given indices (a tuple); ``squeeze_axis`` drops the
    axis from parts of size 1.  Returns a list of NDArrays (one array when one part)."""
    return function("_split_v2")(ary, **split_v2_params(indices_or_sections, axis,
                                                        squeeze_axis))


def histogram(a: NDArray, bins: int | NDArray = 10,
              range: tuple[float, float] | None = None) -> Any:  # noqa: A002 - numpy's name
    """numpy's ``histogram`` of the flattened ``a``: ``bins`` equal bins over ``range``
    (numpy's range (a.min(), a.max()) when None), or the bin edges as an NDArray.
    Returns ``(counts, edges)``."""
    if isinstance(bins, NDArray):
        return function("_histogram")(a, bins)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if range is None:
            values = a.asnumpy()
            range = (float(values.min()), float(values.max())) if values.size else (0.0, 1.0)
            if range[0] == range[1]:
                range = (range[0] - 0.5, range[1] + 0.5)
        return function("_histogram")(a, bin_cnt=int(bins), range=range)
    raise NumpyStyleArgumentError(
        f"histogram: bins must be an int or an NDArray of edges, got {type(bins).__name__}")
