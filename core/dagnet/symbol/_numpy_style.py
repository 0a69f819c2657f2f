"""MXNet's ``mx.sym`` functions that take numpy-style arguments: ``split_v2`` and
``histogram`` (through ``_split_v2`` / ``_histogram``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..ndarray import split_v2_params
from ._frontend import function
from ._symbol import Symbol

__all__ = ["histogram", "split_v2"]


def split_v2(ary: Symbol, indices_or_sections: int | Sequence[int], axis: int = 0,
             squeeze_axis: bool = False, **kwargs: Any) -> Symbol:
    """Split ``ary`` along ``axis`` as numpy's ``split``: into equal parts (an int) or at
    the given indices (a tuple); one output per part."""
    return function("_split_v2")(ary, **split_v2_params(indices_or_sections, axis,
                                                        squeeze_axis), **kwargs)


def histogram(a: Symbol, bins: int | Symbol = 10, range: tuple[float, float] | None = None,  # noqa: A002
              **kwargs: Any) -> Symbol:
    """numpy's ``histogram`` of the flattened ``a``: ``bins`` equal bins over ``range``
    (required for symbols), or the edges as a Symbol.  Outputs counts and edges."""
    if isinstance(bins, Symbol):
        return function("_histogram")(a, bins, **kwargs)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if range is None:
            raise ValueError("sym.histogram: range=(low, high) is required with a bin count "
                             "(a symbol's values are unknown when the graph is built)")
        return function("_histogram")(a, bin_cnt=int(bins), range=range, **kwargs)
    raise ValueError(f"histogram: bins must be an int or a Symbol of edges, got "
                     f"{type(bins).__name__}")
