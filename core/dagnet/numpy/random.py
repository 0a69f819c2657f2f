"""``dagnet.numpy.random`` (``mx.np.random``): NumPy-style samplers drawing from
dagnet's generators (seeded by ``mx.random.seed`` / ``mx.npx.random.seed``), as MXNet
1.9.1 has them.

The arguments are NumPy's (``size``, not MXNet's legacy ``shape``): an unknown keyword such
as ``shape=`` is a ``TypeError``, as in MXNet.  ``size=None`` (or ``()``) draws one value
as a 0-d array, or one per element of the parameters.  Distribution parameters may be
arrays: they broadcast against each other and ``size``, and are inputs of the sampling
operators (``_npi_<d>``), so a hybridized block traces them and gradients reach them: the
reparameterized ones (``normal``'s ``d sample / d loc = 1``, ``d sample / d scale = eps``)
for normal, logistic, gumbel, lognormal, exponential, rayleigh, weibull and pareto; zero
for uniform, gamma and power, as in MXNet.  A parameter out of its range (``scale < 0``)
is a ValueError where the result is read.
"""

from __future__ import annotations

from typing import Any

import numpy as onp

from .. import ndarray as nd
from .. import random as _random
from ..ndarray import NDArray
from ._array import DEFAULT_DTYPE, NotProvidedError, NumpyError, _reshaped, ndarray, wrap
from ._creation import arange, array, empty, zeros
from ._elementwise import add, as_operand, exp, multiply, true_divide

__all__ = [
    "randint", "uniform", "normal", "choice", "rand", "multinomial", "multivariate_normal",
    "logistic", "gumbel", "shuffle", "randn", "gamma", "beta", "chisquare", "exponential",
    "lognormal", "weibull", "pareto", "power", "rayleigh",
]


def _size(size: Any) -> tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, (int, onp.integer)):
        return (int(size),)
    return tuple(int(d) for d in size)


def _draw(sampler: Any, shape: tuple[int, ...], dtype: Any, ctx: Any, **params: Any) -> ndarray:
    """``sampler`` (a legacy one) for ``shape``, which may be ``()`` or zero-size."""
    if 0 in shape:
        return empty(shape, dtype, ctx=ctx)
    result = sampler(shape=shape or (1,), dtype=dtype, ctx=ctx, **params)
    return _reshaped(result, shape)


def _finish(result: ndarray, out: ndarray | None) -> ndarray:
    if out is None:
        return result
    out[...] = result
    return out


def call_sampler(name: str, params: dict[str, Any], size: Any = None, ctx: Any = None,
                 out: ndarray | None = None, dtype: Any = None, **attrs: Any) -> ndarray:
    """Run the sampler operator ``_npi_<name>`` (the route of ``mx.np.random`` and
    ``mx.npx.random``): each of ``params`` a number (an operator parameter) or an array (an
    input, broadcast NumPy's way); ``size`` as MXNet reads it (``()`` is None: the
    parameters' broadcast shape, or ``out``'s); ``attrs``: other operator parameters."""
    arrays = []
    for key, value in params.items():
        value = as_operand(value)
        if isinstance(value, NDArray):
            arrays.append(value)
            attrs[key] = None
        else:
            attrs[key] = float(value)
    shape = _size(size) or None
    shape = attrs["size"] = tuple(out.shape) if shape is None and out is not None else shape
    if dtype is not None:
        attrs["dtype"] = onp.dtype(dtype).name
    if shape and 0 in shape and not arrays:
        # nothing to draw (and an operator call without inputs reads a 0 as unknown)
        return _finish(empty(shape, dtype, ctx=ctx), out)
    return wrap(nd.invoke(f"_npi_{name}", arrays, attrs, out=out, ctx=ctx))


def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None, dtype: Any = None,
            ctx: Any = None, out: ndarray | None = None) -> ndarray:
    """Samples from the uniform distribution on ``[low, high)`` (float32 unless
    ``dtype``).  Gradient: zero, as in MXNet."""
    return call_sampler("uniform", {"low": low, "high": high}, size, ctx, out, dtype)


def normal(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = None,
           ctx: Any = None, out: ndarray | None = None) -> ndarray:
    """Samples ``loc + scale * eps`` (``eps`` standard normal; float32 unless ``dtype``).
    Gradient: ``1`` for ``loc``, ``eps`` for ``scale``; ``scale < 0`` is a ValueError."""
    return call_sampler("normal", {"loc": loc, "scale": scale}, size, ctx, out, dtype)


def lognormal(mean: Any = 0.0, sigma: Any = 1.0, size: Any = None, dtype: Any = None,
              ctx: Any = None, out: ndarray | None = None) -> ndarray:
    """``exp`` of :func:`normal` samples with mean ``mean`` and standard deviation
    ``sigma``; the gradients flow through both."""
    if size is None and out is not None:
        size = out.shape
    return _finish(exp(normal(mean, sigma, size, dtype, ctx)), out)


def logistic(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, ctx: Any = None,
             out: ndarray | None = None) -> ndarray:
    """Samples ``loc + scale * log(u / (1 - u))`` (``u`` uniform; float32).  Gradient:
    ``1`` for ``loc``, the noise for ``scale``."""
    return call_sampler("logistic", {"loc": loc, "scale": scale}, size, ctx, out)


def gumbel(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, ctx: Any = None,
           out: ndarray | None = None) -> ndarray:
    """Samples ``loc - scale * log(e)`` (``e`` standard exponential; float32).  Gradient:
    ``1`` for ``loc``, the noise for ``scale``."""
    return call_sampler("gumbel", {"loc": loc, "scale": scale}, size, ctx, out)


def exponential(scale: Any = 1.0, size: Any = None, ctx: Any = None,
                out: ndarray | None = None) -> ndarray:
    """Samples of the exponential distribution with mean ``scale`` (float32).  Gradient:
    ``sample / scale``; ``scale < 0`` is a ValueError."""
    return call_sampler("exponential", {"scale": scale}, size, ctx, out)


def rayleigh(scale: Any = 1.0, size: Any = None, ctx: Any = None,
             out: ndarray | None = None) -> ndarray:
    """Samples of the Rayleigh distribution with mode ``scale`` (float32).  Gradient:
    ``sample / scale``; ``scale < 0`` is a ValueError."""
    return call_sampler("rayleigh", {"scale": scale}, size, ctx, out)


def weibull(a: Any, size: Any = None, ctx: Any = None, out: ndarray | None = None) -> ndarray:
    """Samples ``e ** (1 / a)`` (``e`` standard exponential; float32).  Gradient:
    ``-sample * log(e) / a**2``; ``a <= 0`` is a ValueError."""
    return call_sampler("weibull", {"a": a}, size, ctx, out)


def pareto(a: Any, size: Any = None, ctx: Any = None, out: ndarray | None = None) -> ndarray:
    """Samples of NumPy's Pareto II (Lomax) distribution, ``exp(e / a) - 1`` (``e``
    standard exponential; float32).  Gradient: ``-(sample + 1) * e / a**2``; ``a <= 0`` is a
    ValueError."""
    return call_sampler("pareto", {"a": a}, size, ctx, out)


def power(a: Any, size: Any = None) -> ndarray:
    """Samples ``u ** (1 / a)`` on ``[0, 1]`` (``u`` uniform; float32).  Gradient: zero, as
    in MXNet; ``a <= 0`` is a ValueError."""
    return call_sampler("powerd", {"a": a}, size, None, None)


def gamma(shape: Any, scale: Any = 1.0, size: Any = None, dtype: Any = None, ctx: Any = None,
          out: ndarray | None = None) -> ndarray:
    """Samples of the gamma distribution with shape ``shape`` and scale ``scale`` (mean
    ``shape * scale``; float32 unless ``dtype``).  Gradient: zero, as in MXNet; a
    parameter ``<= 0`` is a ValueError."""
    return call_sampler("gamma", {"shape": shape, "scale": scale}, size, ctx, out, dtype)


def beta(a: Any, b: Any, size: Any = None, dtype: Any = None, ctx: Any = None) -> ndarray:
    """Samples of the beta distribution, ``x / (x + y)`` for gamma samples ``x`` (shape
    ``a``) and ``y`` (shape ``b``) drawn in float64 (float32 unless ``dtype``)."""
    x = gamma(a, 1.0, size, onp.float64, ctx)
    y = gamma(b, 1.0, size, onp.float64, ctx)
    return true_divide(x, add(x, y)).astype(DEFAULT_DTYPE if dtype is None else dtype)


def chisquare(df: Any, size: Any = None, dtype: Any = None, ctx: Any = None) -> ndarray:
    """Samples of the chi-square distribution with ``df`` degrees of freedom: gamma samples
    with shape ``df / 2`` and scale 2 (float32 unless ``dtype``).  (MXNet 1.9.1 draws with
    scale 1/2, a quarter of the right values.)"""
    return gamma(multiply(as_operand(df), 0.5), 2.0, size, dtype, ctx)


def multivariate_normal(mean: Any, cov: Any, size: Any = None, check_valid: Any = None,
                        tol: Any = None) -> ndarray:
    """Samples of multivariate normal distributions: ``mean`` of shape ``(..., k)``, ``cov``
    (positive semi-definite) of shape ``(..., k, k)``, batch shapes broadcast; the result
    has shape ``size + batch + (k,)`` and ``mean``'s dtype.  No gradient, as in MXNet."""
    if check_valid is not None:
        raise NotImplementedError("multivariate_normal: check_valid is not supported (as in "
                                  "MXNet)")
    if tol is not None:
        raise NotImplementedError("multivariate_normal: tol is not supported (as in MXNet)")
    arrays = [value if isinstance(value, NDArray) else array(value)
              for value in (as_operand(mean), as_operand(cov))]
    return wrap(nd.invoke("_npi_mvn_fallback", arrays, {"size": _size(size) or None}))


def randint(low: int, high: int | None = None, size: Any = None, dtype: Any = None,
            ctx: Any = None, out: ndarray | None = None) -> ndarray:
    """Random integers in ``[low, high)`` (``[0, low)`` when ``high`` is None), int64
    unless ``dtype``."""
    if high is None:
        low, high = 0, low
    if int(high) <= int(low):
        raise NumpyError(f"randint: low >= high ({low} >= {high})")
    dtype = onp.dtype(onp.int64) if dtype is None else onp.dtype(dtype)
    return _finish(_draw(_random.randint, _size(size), dtype, ctx, low=int(low),
                         high=int(high)), out)


def choice(a: Any, size: Any = None, replace: bool = True, p: Any = None, ctx: Any = None,
           out: ndarray | None = None) -> ndarray:
    """Random samples from ``a`` (a 1-d array, or ``arange(a)`` for an int): with
    probabilities ``p`` (uniform when None), with or without replacement."""
    shape = _size(size)
    count = int(onp.prod(shape)) if shape else 1
    population = None
    if isinstance(a, (int, onp.integer)):
        n = int(a)
    else:
        population = as_operand(a)
        if not isinstance(population, NDArray) or population.ndim != 1:
            raise NumpyError("choice: a must be a positive int or a 1-d array")
        n = population.shape[0]
    if n <= 0:
        raise NumpyError("choice: a must be greater than 0 unless no samples are taken")
    if p is not None:
        weights = as_operand(p)
        if not isinstance(weights, NDArray):
            weights = array(weights)
        weights = weights.astype(DEFAULT_DTYPE, copy=False)
        if replace:
            picks = wrap(_random.multinomial(weights, shape=(count,), dtype="int32"))
            picks = picks.astype(onp.int64)
        else:
            picks = _weighted_without_replacement(weights, count, n, ctx)
    elif replace:
        picks = _draw(_random.randint, (count,), onp.dtype(onp.int64), ctx, low=0, high=n)
    else:
        if count > n:
            raise NumpyError("choice: cannot take a larger sample than the population when "
                             "replace=False")
        order = wrap(_random.shuffle(arange(n, dtype=onp.int64, ctx=ctx)))
        picks = order[:count]
    if population is not None:
        picks = wrap(nd.take(population, picks, axis=0))
    return _finish(_reshaped(picks, shape), out)


def _weighted_without_replacement(weights: ndarray, count: int, n: int, ctx: Any) -> ndarray:
    """``count`` distinct indices of ``weights`` drawn with probabilities proportional to
    them, one after another (Efraimidis and Spirakis: the ``count`` largest keys
    ``log(u) / w`` of uniform ``u``), with operators only."""
    from ._elementwise import log, maximum, true_divide

    if count > n:
        raise NumpyError("choice: cannot take a larger sample than the population when "
                         "replace=False")
    if count == 0:
        from ._creation import empty

        return empty((0,), onp.int64, ctx=ctx)
    # a zero weight gets a key far below the others' (no division by zero)
    keys = true_divide(log(_draw(_random.uniform, (n,), DEFAULT_DTYPE, ctx, low=0.0,
                                 high=1.0)), maximum(weights, 1e-30))
    return wrap(nd.invoke("topk", [keys], {"axis": 0, "k": count, "ret_typ": "indices",
                                           "dtype": "int64"}))


def multinomial(n: int, pvals: Any, size: Any = None) -> ndarray:
    """Counts (int64) of each of ``len(pvals)`` outcomes in ``n`` draws with
    probabilities ``pvals``; ``size`` experiments give shape ``size + (len(pvals),)``."""
    weights = as_operand(pvals)
    if not isinstance(weights, NDArray):
        weights = array(weights)
    if weights.ndim != 1:
        raise NumpyError(f"multinomial: pvals must be 1-d, got shape {weights.shape}")
    outcomes = weights.shape[0]
    shape = _size(size) + (outcomes,)
    experiments = int(onp.prod(shape[:-1])) if shape[:-1] else 1
    if int(n) < 0:
        raise NumpyError(f"multinomial: n must be >= 0, got {n}")
    if 0 in shape or int(n) == 0:
        return zeros(shape, onp.int64)
    draws = _random.multinomial(weights.astype(DEFAULT_DTYPE, copy=False),
                                shape=(experiments, int(n)), dtype="int32")
    counts = nd.one_hot(draws, outcomes).sum(axis=1)
    return _reshaped(counts.astype(onp.int64), shape)


def rand(*size: int, **kwargs: Any) -> ndarray:
    """Uniform samples on ``[0, 1)`` of shape ``size``; keywords as :func:`uniform`'s
    (``dtype``, ``ctx``, ``out``)."""
    return uniform(0.0, 1.0, size=size, **kwargs)


def randn(*size: int, **kwargs: Any) -> ndarray:
    """Standard normal samples of shape ``size``; keywords as :func:`normal`'s (``dtype``,
    ``ctx``, ``out``)."""
    return normal(0.0, 1.0, size=size, **kwargs)


def shuffle(x: ndarray) -> None:
    """Shuffle ``x`` in place along its first axis."""
    if not isinstance(x, NDArray):
        raise NumpyError("shuffle: x must be a dagnet.numpy.ndarray")
    x[...] = _random.shuffle(x)



def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(f"module 'dagnet.numpy.random' has no attribute {name!r}")
    hint = " (seed with mx.npx.random.seed or mx.random.seed, as in MXNet)" \
        if name == "seed" else ""
    raise NotProvidedError(f"dagnet.numpy.random does not provide {name!r} yet{hint}")
