"""``mx.sym.random``: sampling nodes in a symbolic graph (MXNet's ``mx.sym.random``).

Parameters given as numbers make ``_random_<d>`` nodes (``shape`` samples); parameters
given as Symbols make ``_sample_<d>`` nodes, one distribution per element of the
parameter arrays (output shape: theirs followed by ``shape``).  Each forward pass draws
new samples from the device's random resource (seeded by ``mx.random.seed``).  Nodes are
named and written to JSON as MXNet names and writes them.
"""

from __future__ import annotations

from typing import Any

from .._errors import ParamError
from ._symbol import Symbol

__all__ = [
    "uniform", "normal", "randn", "poisson", "exponential", "gamma", "negative_binomial",
    "generalized_negative_binomial", "multinomial", "shuffle", "randint", "uniform_like",
    "normal_like", "gamma_like", "exponential_like", "poisson_like", "negative_binomial_like",
    "generalized_negative_binomial_like",
]


def _op(name: str) -> Any:
    from . import _function

    return _function(name)


def _random_helper(dist: str, params: list[Any], names: list[str], shape: Any, dtype: Any,
                   kwargs: dict[str, Any]) -> Symbol:
    is_symbol = [isinstance(p, Symbol) for p in params]
    call = dict(kwargs)
    if shape is not None:
        call["shape"] = shape
    if dtype is not None:
        call["dtype"] = dtype
    if any(is_symbol):
        if not all(is_symbol):
            raise ParamError(
                f"sym.random.{dist}: distribution parameters must all be numbers or all "
                f"Symbols, got {', '.join(type(p).__name__ for p in params)}")
        return _op(f"_sample_{dist}")(*params, **call)
    for p in params:
        if not isinstance(p, (int, float)) and not hasattr(p, "__float__"):
            raise ParamError(f"sym.random.{dist}: distribution parameters must be numbers or "
                             f"Symbols, got {type(p).__name__} {p!r:.60}")
    return _op(f"_random_{dist}")(**dict(zip(names, params)), **call)


def uniform(low: Any = 0, high: Any = 1, shape: Any = None, dtype: Any = None,
            **kwargs: Any) -> Symbol:
    """A node sampling the uniform distribution on ``[low, high)`` (``name``, ``attr``
    and ``ctx`` go in ``kwargs`` as for every operator)."""
    return _random_helper("uniform", [low, high], ["low", "high"], shape, dtype, kwargs)


def normal(loc: Any = 0, scale: Any = 1, shape: Any = None, dtype: Any = None,
           **kwargs: Any) -> Symbol:
    """A node sampling the normal distribution with mean ``loc`` and standard deviation
    ``scale``."""
    return _random_helper("normal", [loc, scale], ["loc", "scale"], shape, dtype, kwargs)


def randn(*shape: int, loc: Any = 0, scale: Any = 1, dtype: Any = None,
          **kwargs: Any) -> Symbol:
    """A normal sampling node whose shape is given positionally (``randn(2, 3)``)."""
    return normal(loc, scale, shape if shape else None, dtype, **kwargs)


def poisson(lam: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A node sampling the Poisson distribution with mean ``lam``."""
    return _random_helper("poisson", [lam], ["lam"], shape, dtype, kwargs)


def exponential(scale: Any = 1, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A node sampling the exponential distribution with mean ``scale``."""
    return _random_helper("exponential", [1.0 / scale], ["lam"], shape, dtype, kwargs)


def gamma(alpha: Any = 1, beta: Any = 1, shape: Any = None, dtype: Any = None,
          **kwargs: Any) -> Symbol:
    """A node sampling the gamma distribution with shape ``alpha`` and scale ``beta``."""
    return _random_helper("gamma", [alpha, beta], ["alpha", "beta"], shape, dtype, kwargs)


def negative_binomial(k: Any = 1, p: Any = 1, shape: Any = None, dtype: Any = None,
                      **kwargs: Any) -> Symbol:
    """A node sampling the failures before the ``k``-th success (success probability
    ``p``)."""
    return _random_helper("negative_binomial", [k, p], ["k", "p"], shape, dtype, kwargs)


def generalized_negative_binomial(mu: Any = 1, alpha: Any = 1, shape: Any = None,
                                  dtype: Any = None, **kwargs: Any) -> Symbol:
    """A node sampling the negative binomial distribution with mean ``mu`` and dispersion
    ``alpha``."""
    return _random_helper("generalized_negative_binomial", [mu, alpha], ["mu", "alpha"], shape,
                          dtype, kwargs)


def multinomial(data: Symbol, shape: Any = None, get_prob: bool = True, dtype: Any = "int32",
                **kwargs: Any) -> Symbol:
    """A node drawing category indices from the distributions in ``data``'s last axis;
    with ``get_prob`` (the default here, as in MXNet's symbol API) a second output holds
    the log-probabilities of the draws."""
    call = dict(kwargs, get_prob=get_prob, dtype=dtype)
    if shape is not None:
        call["shape"] = shape
    return _op("_sample_multinomial")(data, **call)


def shuffle(data: Symbol, **kwargs: Any) -> Symbol:
    """A node shuffling ``data`` along its first axis."""
    return _op("_shuffle")(data, **kwargs)


def randint(low: int, high: int, shape: Any = None, dtype: Any = None, **kwargs: Any) -> Symbol:
    """A node sampling integers uniformly from ``[low, high)`` (int32 unless ``dtype``)."""
    return _random_helper("randint", [low, high], ["low", "high"], shape, dtype, kwargs)


def _like(dist: str, data: Any, params: dict[str, Any], kwargs: dict[str, Any]) -> Symbol:
    return _op(f"_random_{dist}_like")(data, **params, **kwargs)


def uniform_like(data: Any = None, low: float = 0.0, high: float = 1.0,
                 **kwargs: Any) -> Symbol:
    """A node of uniform samples shaped like ``data``."""
    return _like("uniform", data, {"low": low, "high": high}, kwargs)


def normal_like(data: Any = None, loc: float = 0.0, scale: float = 1.0,
                **kwargs: Any) -> Symbol:
    """A node of normal samples shaped like ``data``."""
    return _like("normal", data, {"loc": loc, "scale": scale}, kwargs)


def gamma_like(data: Any = None, alpha: float = 1.0, beta: float = 1.0,
               **kwargs: Any) -> Symbol:
    """A node of gamma samples shaped like ``data``."""
    return _like("gamma", data, {"alpha": alpha, "beta": beta}, kwargs)


def exponential_like(data: Any = None, lam: float = 1.0, **kwargs: Any) -> Symbol:
    """A node of exponential samples (rate ``lam``) shaped like ``data``."""
    return _like("exponential", data, {"lam": lam}, kwargs)


def poisson_like(data: Any = None, lam: float = 1.0, **kwargs: Any) -> Symbol:
    """A node of Poisson samples shaped like ``data``."""
    return _like("poisson", data, {"lam": lam}, kwargs)


def negative_binomial_like(data: Any = None, k: int = 1, p: float = 1.0,
                           **kwargs: Any) -> Symbol:
    """A node of negative binomial samples shaped like ``data``."""
    return _like("negative_binomial", data, {"k": k, "p": p}, kwargs)


def generalized_negative_binomial_like(data: Any = None, mu: float = 1.0, alpha: float = 1.0,
                                       **kwargs: Any) -> Symbol:
    """A node of generalized negative binomial samples shaped like ``data``."""
    return _like("generalized_negative_binomial", data, {"mu": mu, "alpha": alpha}, kwargs)
