"""``gammaln`` and ``digamma`` elementwise for the array module ``xp`` (numpy has neither;
cupy's live in ``cupyx.scipy.special``).  float64 in, float64 out."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["gammaln", "digamma"]

_LGAMMA = np.frompyfunc(math.lgamma, 1, 1)


def gammaln(xp: Any, x: Any) -> Any:
    """``log|Gamma(x)|``; ``inf`` at the poles (0, -1, ...)."""
    if xp is np:
        x = np.asarray(x, dtype=np.float64)
        poles = (x <= 0) & (x == np.floor(x))
        safe = np.where(poles, 1.0, x)
        return np.where(poles, np.inf, np.asarray(_LGAMMA(safe), dtype=np.float64))
    from cupyx.scipy import special

    return special.gammaln(x)


def digamma(xp: Any, x: Any) -> Any:
    """The digamma function ``d/dx log Gamma(x)`` for ``x > 0`` (NaN elsewhere), to about
    1e-13: the recurrence ``psi(x) = psi(x + 1) - 1/x`` up to ``x >= 8``, then the
    asymptotic series."""
    if xp is not np:
        from cupyx.scipy import special

        return special.digamma(x)
    x = np.array(x, dtype=np.float64)
    bad = ~(x > 0)
    x = np.where(bad, 1.0, x)
    shift = np.zeros_like(x)
    small = x < 8
    while small.any():
        shift -= np.where(small, 1.0 / x, 0.0)
        x = np.where(small, x + 1.0, x)
        small = x < 8
    inv2 = 1.0 / (x * x)
    series = inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    return np.where(bad, np.nan, shift + np.log(x) - 0.5 / x - series)
