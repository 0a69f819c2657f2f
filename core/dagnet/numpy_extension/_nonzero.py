"""``npx.nonzero``: the indices of the non-zero elements as rows."""

from __future__ import annotations

from typing import Any

from .. import numpy as _np

__all__ = ["nonzero"]


def nonzero(x: Any) -> Any:
    """The indices of the non-zero elements of ``x`` as rows: an int64 array of shape
    ``(count, ndim)`` (``(count, 1)`` for a 0-d array), ``np.nonzero``'s arrays side by
    side.  Computed on the host: not differentiable."""
    return _np.stack(_np.nonzero(x), axis=1)
