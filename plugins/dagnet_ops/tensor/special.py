"""Special functions, element-wise (MXNet's ``gamma``, ``gammaln``, ``erf``, ``erfinv``).

The values come from Python's ``math`` (``gamma``, ``lgamma``, ``erf``) applied on the
host, so numpy and cupy arrays give the same results without scipy; ``digamma`` (the
derivative of ``gammaln``) and ``erfinv`` are computed here: digamma by recurrence and
its asymptotic series, erfinv by Newton steps on ``erf`` from a closed-form start.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dagnet.operator import Op

from .elemwise_unary import unary


def _c_gamma(v: float) -> float:
    """Gamma as C's ``tgamma`` (and MXNet) gives it where Python's raises: +-inf at +-0,
    NaN at the negative integers and -inf, inf past float64's range."""
    try:
        return math.gamma(v)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.copysign(math.inf, v) if v == 0 else math.nan


def _c_lgamma(v: float) -> float:
    """ln|Gamma| as C's ``lgamma`` (and MXNet) gives it: inf at the poles."""
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):
        return math.inf


_gamma = np.vectorize(_c_gamma, otypes=[np.float64])
_lgamma = np.vectorize(_c_lgamma, otypes=[np.float64])
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _on_host(xp: Any, fn: Any, x: Any) -> Any:
    """``fn`` (a numpy function) of ``x`` computed in float64 on the host, returned as
    ``xp`` array in float64 (the caller's ``put`` casts to the output's dtype)."""
    host = x.get() if hasattr(x, "get") else np.asarray(x)
    return xp.asarray(fn(host.astype(np.float64)))


def digamma(x: np.ndarray) -> np.ndarray:
    """The digamma function psi(x) = d/dx ln|Gamma(x)| (float64).  At the poles (0 and the
    negative integers) it is +inf, as MXNet's kernel gives (so ``gamma``'s gradient at +-0 is
    +-inf, and ``gammaln``'s is inf at every pole)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    # reflection for x < 0.5: psi(x) = psi(1 - x) - pi / tan(pi x)
    reflect = x < 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(reflect, -np.pi / np.tan(np.pi * x), 0.0)
        z = np.where(reflect, 1.0 - x, x)
        # recurrence psi(z) = psi(z + 1) - 1/z until z >= 6, then the asymptotic series
        shift = np.zeros_like(z)
        for _ in range(6):
            small = z < 6.0
            shift = shift - np.where(small, 1.0 / z, 0.0)
            z = np.where(small, z + 1.0, z)
        inv2 = 1.0 / (z * z)
        series = (np.log(z) - 0.5 / z
                  - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
                      1 / 240 - inv2 * (1 / 132))))))
    out = out + shift + series
    return np.where((x <= 0) & (x == np.floor(x)), np.inf, out)


def erfinv(y: np.ndarray) -> np.ndarray:
    """The inverse error function on [-1, 1] (float64; +-inf at +-1, NaN outside)."""
    y = np.asarray(y, dtype=np.float64)
    inside = np.abs(y) < 1
    t = np.where(inside, y, 0.0)
    # Giles' single-precision approximation as the start, then Newton on erf
    w = -np.log((1.0 - t) * (1.0 + t))
    x = t * np.where(w < 5.0, 1.50140941 + 0.246640727 * (w - 2.5),
                     2.83297682 + 1.00167406 * (np.sqrt(w) - 3.0))
    for _ in range(40):
        step = (_erf(x) - t) / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
        x = x - step
        if np.all(np.abs(step) <= 1e-15 * np.maximum(1.0, np.abs(x))):
            break
    out = np.where(inside, x, np.nan)
    out = np.where(y == 1, np.inf, out)
    return np.where(y == -1, -np.inf, out)


_SQRT_PI = math.sqrt(math.pi)

OPS: list[Op] = [
    *unary("gamma", lambda xp, x: _on_host(xp, _gamma, x),
           d_in=lambda xp, x: _on_host(xp, lambda v: _gamma(v) * digamma(v), x),
           reference=_gamma, lo=0.2, hi=4.0, inplace=False,
           desc="The gamma function, element-wise: ``y = Gamma(x)``.  Gradient "
                "``Gamma(x) psi(x) dy`` (psi: digamma)."),
    *unary("gammaln", lambda xp, x: _on_host(xp, _lgamma, x),
           d_in=lambda xp, x: _on_host(xp, digamma, x),
           reference=_lgamma, lo=0.2, hi=4.0, inplace=False,
           desc="Log of the absolute value of the gamma function, element-wise: "
                "``y = ln|Gamma(x)|``.  Gradient ``psi(x) dy`` (digamma)."),
    *unary("erf", lambda xp, x: _on_host(xp, _erf, x),
           d_in=lambda xp, x: (2.0 / _SQRT_PI) * xp.exp(-x * x),
           d2=lambda F, x: F._mul_scalar(F.elemwise_mul(x, F.exp(F.negative(F.square(x)))),
                                         scalar=-4.0 / _SQRT_PI),
           reference=_erf, inplace=False,
           desc="The Gauss error function, element-wise: ``y = 2/sqrt(pi) int_0^x "
                "exp(-t^2) dt``.  Gradient ``2/sqrt(pi) exp(-x^2) dy``."),
    *unary("erfinv", lambda xp, x: _on_host(xp, erfinv, x),
           d_out=lambda xp, y: (_SQRT_PI / 2) * xp.exp(y * y),
           d2=lambda F, y: F._mul_scalar(F.elemwise_mul(y, F.exp(F.square(y))),
                                         scalar=_SQRT_PI),
           reference=erfinv, lo=-0.9, hi=0.9, inplace=False,
           desc="The inverse error function, element-wise, on [-1, 1] (+-inf at +-1, NaN "
                "outside).  Gradient ``sqrt(pi)/2 exp(y^2) dy``."),
]
