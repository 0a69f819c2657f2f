"""The distributions MXNet samples from, shared by the three sampler families:
``_random_<d>`` (scalar parameters), ``_random_<d>_like`` (the shape of an array) and
``_sample_<d>`` (one distribution per element of parameter arrays).

Each :class:`Distribution` names its scalar parameters as MXNet's ``_random_<d>`` does
(``loc``/``scale`` for the normal) and its array inputs as ``_sample_<d>`` does
(``mu``/``sigma``), checks parameter values, and draws float64 samples from a device
generator (numpy's or cupy's ``Generator``) with parameters broadcast against the
sample shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Distribution", "DISTRIBUTIONS", "check_values"]


@dataclass(frozen=True)
class Scalar:
    """One scalar parameter of ``_random_<d>``: name, type, default, description and the
    smallest value allowed (``low``; ``open_low``: the bound itself is excluded)."""

    name: str
    type: type
    default: float
    desc: str
    low: float | None = None
    open_low: bool = False
    high: float | None = None


@dataclass(frozen=True)
class Distribution:
    """A distribution: its scalar parameters, the input names of ``_sample_<d>``, a
    description, and ``draw(generator, xp, params, size)`` returning float64 samples of
    shape ``size`` (``params`` are floats or arrays broadcasting to ``size``)."""

    name: str
    scalars: tuple[Scalar, ...]
    inputs: tuple[str, ...]
    doc: str
    draw: Callable[[Any, Any, Sequence[Any], tuple], Any]
    ordered: bool = False  # the first parameter must not exceed the second (uniform)


def check_values(op_name: str, dist: Distribution, names: Sequence[str],
                 values: Sequence[Any], xp: Any) -> None:
    """Raise a ParamError when a parameter (a float or an array, named ``names`` in the
    operator) leaves its range."""
    from dagnet import ParamError

    if dist.ordered and bool((xp.asarray(values[1]) < xp.asarray(values[0])).any()):
        raise ParamError(f"operator {op_name!r}: {names[0]} must not exceed {names[1]}; got "
                         f"{names[0]}={_show(xp.asarray(values[0]))}, "
                         f"{names[1]}={_show(xp.asarray(values[1]))}")
    for scalar, name, value in zip(dist.scalars, names, values):
        arr = xp.asarray(value)
        problems = []
        if scalar.low is not None:
            bad = arr <= scalar.low if scalar.open_low else arr < scalar.low
            if bool(bad.any()):
                problems.append(f"{'>' if scalar.open_low else '>='} {scalar.low}")
        if scalar.high is not None and bool((arr > scalar.high).any()):
            problems.append(f"<= {scalar.high}")
        if bool(xp.isnan(arr).any()):
            problems.append("a number (not NaN)")
        if problems:
            raise ParamError(
                f"operator {op_name!r}: {name} ({scalar.desc}) must be {' and '.join(problems)}; "
                f"got {_show(arr)}")


def _show(arr: Any) -> str:
    if arr.ndim == 0:
        return repr(float(arr))
    return f"an array with values in [{float(arr.min())}, {float(arr.max())}]"


_POISSON_LIMIT = 1e-12  # dispersion below which the Poisson limit is drawn


def _uniform(g, xp, params, size):
    low, high = params
    return low + (high - low) * g.random(size)


def _normal(g, xp, params, size):
    loc, scale = params
    return loc + scale * g.standard_normal(size)


def _gamma(g, xp, params, size):
    alpha, beta = params  # beta is the scale: the mean is alpha * beta
    return g.standard_gamma(xp.broadcast_to(xp.asarray(alpha, dtype=xp.float64), size)) * beta


def _exponential(g, xp, params, size):
    (lam,) = params  # the rate: the mean is 1 / lam
    return g.standard_exponential(size) / lam


def _poisson(g, xp, params, size):
    (lam,) = params
    rate = xp.broadcast_to(xp.asarray(lam, dtype=xp.float64), size)
    return g.poisson(rate).astype(xp.float64)


def _negative_binomial(g, xp, params, size):
    # failures before the k-th success, each trial succeeding with probability p:
    # a Poisson draw whose rate is Gamma(k, (1 - p) / p)
    k, p = params
    shape = xp.broadcast_to(xp.asarray(k, dtype=xp.float64), size)
    rate = g.standard_gamma(shape) * ((1.0 - p) / p)
    return g.poisson(rate).astype(xp.float64)


def _generalized_negative_binomial(g, xp, params, size):
    # mean mu, variance mu + alpha * mu^2: Poisson with rate Gamma(1 / alpha, alpha * mu);
    # alpha = 0 is the Poisson distribution itself, and so is, to far below sampling noise,
    # an alpha so small that 1 / alpha overflows the gamma sampler
    mu, alpha = params
    mu = xp.broadcast_to(xp.asarray(mu, dtype=xp.float64), size)
    alpha = xp.broadcast_to(xp.asarray(alpha, dtype=xp.float64), size)
    dispersed = alpha > _POISSON_LIMIT
    safe = xp.where(dispersed, alpha, 1.0)
    rate = xp.where(dispersed, g.standard_gamma(1.0 / safe) * safe * mu, mu)
    return g.poisson(rate).astype(xp.float64)


DISTRIBUTIONS = {d.name: d for d in (
    Distribution(
        "uniform",
        (Scalar("low", float, 0.0, "lower bound (inclusive)"),
         Scalar("high", float, 1.0, "upper bound (exclusive)")),
        ("low", "high"),
        "the uniform distribution on ``[low, high)``",
        _uniform, ordered=True),
    Distribution(
        "normal",
        (Scalar("loc", float, 0.0, "mean"),
         Scalar("scale", float, 1.0, "standard deviation", low=0.0)),
        ("mu", "sigma"),
        "the normal distribution with mean ``loc`` and standard deviation ``scale``",
        _normal),
    Distribution(
        "gamma",
        (Scalar("alpha", float, 1.0, "shape", low=0.0, open_low=True),
         Scalar("beta", float, 1.0, "scale", low=0.0, open_low=True)),
        ("alpha", "beta"),
        "the gamma distribution with shape ``alpha`` and scale ``beta`` (mean "
        "``alpha * beta``)",
        _gamma),
    Distribution(
        "exponential",
        (Scalar("lam", float, 1.0, "rate", low=0.0, open_low=True),),
        ("lam",),
        "the exponential distribution with rate ``lam`` (mean ``1 / lam``)",
        _exponential),
    Distribution(
        "poisson",
        (Scalar("lam", float, 1.0, "rate (the mean)", low=0.0),),
        ("lam",),
        "the Poisson distribution with mean ``lam``; samples are whole numbers stored in a "
        "floating dtype",
        _poisson),
    Distribution(
        "negative_binomial",
        (Scalar("k", int, 1, "number of successes to wait for", low=0.0, open_low=True),
         Scalar("p", float, 1.0, "success probability of each trial", low=0.0,
                open_low=True, high=1.0)),
        ("k", "p"),
        "the negative binomial distribution: failures before the ``k``-th success when "
        "each trial succeeds with probability ``p`` (mean ``k * (1 - p) / p``)",
        _negative_binomial),
    Distribution(
        "generalized_negative_binomial",
        (Scalar("mu", float, 1.0, "mean", low=0.0),
         Scalar("alpha", float, 1.0, "dispersion", low=0.0)),
        ("mu", "alpha"),
        "the generalized negative binomial distribution with mean ``mu`` and variance "
        "``mu + alpha * mu^2`` (``alpha = 0``: Poisson)",
        _generalized_negative_binomial),
)}
