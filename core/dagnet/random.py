"""Random numbers (MXNet's ``mx.random``, which is also ``mx.nd.random``).

``seed`` restarts the devices' generators.  The samplers take their distribution's
parameters either as numbers (one distribution: the ``_random_<d>`` operators, with
``shape`` samples on ``ctx``) or all as NDArrays of one shape ``P`` (one distribution
per element: the ``_sample_<d>`` operators, output shape ``P + shape``)::

    mx.random.normal(0, 1, shape=(2, 3))                      # 2x3 samples
    mx.random.normal(mx.nd.array([0, 10]), mx.nd.array([1, 2]), shape=4)   # 2x4

``uniform_like`` and the other ``<d>_like`` functions sample with an array's shape and
dtype (the ``_random_<d>_like`` operators); ``multinomial``, ``shuffle`` and ``randint``
complete MXNet's set.
"""

from __future__ import annotations

import numbers
import re
from typing import Any

from . import resource
from ._errors import ParamError, ResourceError
from .context import Context

__all__ = [
    "seed", "uniform", "normal", "randn", "poisson", "exponential", "gamma",
    "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle", "randint",
    "uniform_like", "normal_like", "gamma_like", "exponential_like", "poisson_like",
    "negative_binomial_like", "generalized_negative_binomial_like",
]

_DEVICE_TEXT = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\(\s*(\d+)\s*\))?\s*$")  # cpu, gpu(1)
_SEED_SPACE = 2 ** 32  # MXNet keeps a seed as a C int: seeds equal modulo 2**32 agree


class _NullType:
    """MXNet's ``_Null``: the argument was not given."""

    def __repr__(self) -> str:
        return "_Null"


_Null: Any = _NullType()


def seed(seed_state: int, ctx: str | Context = "all") -> None:
    """Seed the random generators, as ``mx.random.seed(seed_state, ctx='all')``.

    ``seed_state`` is any integer (negative and large ones too; as in MXNet, seeds
    equal modulo 2**32 give the same streams).  With ``ctx='all'`` every device's
    generator, including devices first used later, restarts from a stream derived from
    the seed and the device alone, so results do not depend on the order devices are
    used in; ``ctx`` as a Context (or a device string such as ``'cpu(0)'``) seeds that
    device's generator only.
    """
    if not isinstance(seed_state, numbers.Integral):
        raise ResourceError(
            f"random.seed: seed_state must be an int, got {type(seed_state).__name__} "
            f"{seed_state!r}")
    state = int(seed_state) % _SEED_SPACE
    if isinstance(ctx, str) and ctx == "all":
        resource.manager().seed(state)
        return
    if isinstance(ctx, str):
        match = _DEVICE_TEXT.match(ctx)
        if match:
            ctx = Context(match.group(1), int(match.group(2) or 0))
    if not isinstance(ctx, Context):
        raise ResourceError(
            f"random.seed: ctx must be 'all' or a dagnet Context such as dagnet.cpu(1) (or "
            f"its name, 'cpu(1)'), got {ctx!r}")
    resource.manager().seed(state, ctx)


def _nd() -> Any:
    from . import ndarray

    return ndarray


def _random_helper(dist: str, params: list[Any], shape: Any, dtype: Any, ctx: Any, out: Any,
                   kwargs: dict[str, Any], names: list[str] | None = None) -> Any:
    """Call ``_random_<dist>`` (number parameters) or ``_sample_<dist>`` (NDArrays)."""
    nd = _nd()
    is_array = [isinstance(p, nd.NDArray) for p in params]
    where = f"random.{dist}"
    if any(is_array):
        if not all(is_array):
            raise ParamError(
                f"{where}: distribution parameters must all be numbers or all NDArrays, got "
                f"{', '.join(type(p).__name__ for p in params)}")
        call = dict(kwargs)
        if shape is not _Null:
            call["shape"] = shape
        if dtype is not _Null and dtype is not None:
            call["dtype"] = dtype
        if ctx is not None:
            call["ctx"] = ctx
        return getattr(nd._internal, f"_sample_{dist}")(*params, out=out, **call)
    for p in params:
        if not isinstance(p, (int, float)) and not hasattr(p, "__float__"):
            raise ParamError(f"{where}: distribution parameters must be numbers or NDArrays, "
                             f"got {type(p).__name__} {p!r:.60}")
    call = dict(zip(names, params), **kwargs) if names else dict(kwargs)
    if shape is not _Null:
        call["shape"] = shape
    else:  # as MXNet: out's shape, else one sample
        call["shape"] = tuple(out.shape) if out is not None else (1,)
    if dtype is not _Null and dtype is not None:
        call["dtype"] = dtype
    elif out is not None:
        call["dtype"] = out.dtype
    if ctx is not None:
        call["ctx"] = ctx
    return getattr(nd._internal, f"_random_{dist}")(out=out, **call)


def uniform(low: Any = 0, high: Any = 1, shape: Any = _Null, dtype: Any = _Null,
            ctx: Context | None = None, out: Any = None, **kwargs: Any) -> Any:
    """Samples from the uniform distribution on ``[low, high)``.

    ``low``/``high``: numbers, or NDArrays of one shape (one distribution per element);
    ``shape``: samples per distribution (default: one, or ``out``'s shape); ``dtype``
    (default float32); ``ctx`` (default: the current device); ``out`` receives them.
    """
    return _random_helper("uniform", [low, high], shape, dtype, ctx, out, kwargs,
                          ["low", "high"])


def normal(loc: Any = 0, scale: Any = 1, shape: Any = _Null, dtype: Any = _Null,
           ctx: Context | None = None, out: Any = None, **kwargs: Any) -> Any:
    """Samples from the normal distribution with mean ``loc`` and standard deviation
    ``scale``; arguments as :func:`uniform`."""
    return _random_helper("normal", [loc, scale], shape, dtype, ctx, out, kwargs,
                          ["loc", "scale"])


def randn(*shape: int, **kwargs: Any) -> Any:
    """Normal samples of shape ``shape`` given positionally (``mx.random.randn(2, 3)``);
    keywords ``loc``, ``scale``, ``dtype``, ``ctx``, ``out`` as :func:`normal`."""
    loc = kwargs.pop("loc", 0)
    scale = kwargs.pop("scale", 1)
    dtype = kwargs.pop("dtype", _Null)
    ctx = kwargs.pop("ctx", None)
    out = kwargs.pop("out", None)
    return normal(loc, scale, shape if shape else _Null, dtype, ctx, out, **kwargs)


def poisson(lam: Any = 1, shape: Any = _Null, dtype: Any = _Null, ctx: Context | None = None,
            out: Any = None, **kwargs: Any) -> Any:
    """Samples from the Poisson distribution with mean ``lam`` (whole numbers in a floating
    dtype); arguments as :func:`uniform`."""
    return _random_helper("poisson", [lam], shape, dtype, ctx, out, kwargs, ["lam"])


def exponential(scale: Any = 1, shape: Any = _Null, dtype: Any = _Null,
                ctx: Context | None = None, out: Any = None, **kwargs: Any) -> Any:
    """Samples from the exponential distribution with mean ``scale`` (rate ``1 / scale``);
    arguments as :func:`uniform`."""
    return _random_helper("exponential", [1.0 / scale], shape, dtype, ctx, out, kwargs,
                          ["lam"])


def gamma(alpha: Any = 1, beta: Any = 1, shape: Any = _Null, dtype: Any = _Null,
          ctx: Context | None = None, out: Any = None, **kwargs: Any) -> Any:
    """Samples from the gamma distribution with shape ``alpha`` and scale ``beta`` (mean
    ``alpha * beta``); arguments as :func:`uniform`."""
    return _random_helper("gamma", [alpha, beta], shape, dtype, ctx, out, kwargs,
                          ["alpha", "beta"])


def negative_binomial(k: Any = 1, p: Any = 1, shape: Any = _Null, dtype: Any = _Null,
                      ctx: Context | None = None, out: Any = None, **kwargs: Any) -> Any:
    """Samples of the number of failures before the ``k``-th success, each trial succeeding
    with probability ``p``; arguments as :func:`uniform`."""
    return _random_helper("negative_binomial", [k, p], shape, dtype, ctx, out, kwargs,
                          ["k", "p"])


def generalized_negative_binomial(mu: Any = 1, alpha: Any = 1, shape: Any = _Null,
                                  dtype: Any = _Null, ctx: Context | None = None,
                                  out: Any = None, **kwargs: Any) -> Any:
    """Samples from the negative binomial distribution with mean ``mu`` and dispersion
    ``alpha`` (variance ``mu + alpha * mu^2``); arguments as :func:`uniform`."""
    return _random_helper("generalized_negative_binomial", [mu, alpha], shape, dtype, ctx, out,
                          kwargs, ["mu", "alpha"])


def multinomial(data: Any, shape: Any = _Null, get_prob: bool = False, out: Any = None,
                dtype: Any = "int32", **kwargs: Any) -> Any:
    """Category indices drawn from the distributions in ``data``'s last axis (``k``
    probabilities each); ``shape`` samples per distribution (default one).

    Output shape ``data.shape[:-1] + shape``, dtype ``dtype`` (int32 by default).  With
    ``get_prob=True`` a list ``[samples, log_probabilities]`` is returned; differentiating
    the log-probabilities gives REINFORCE's gradient with respect to ``data``.
    """
    call = dict(kwargs, get_prob=get_prob, dtype=dtype)
    if shape is not _Null:
        call["shape"] = shape
    return _nd()._internal._sample_multinomial(data, out=out, **call)


def shuffle(data: Any, **kwargs: Any) -> Any:
    """A copy of ``data`` with its first axis in random order (rows keep their contents)."""
    return _nd()._internal._shuffle(data, **kwargs)


def randint(low: int, high: int, shape: Any = _Null, dtype: Any = _Null,
            ctx: Context | None = None, out: Any = None, **kwargs: Any) -> Any:
    """Integers drawn uniformly from ``[low, high)``; ``dtype`` int32 (default) or int64;
    other arguments as :func:`uniform`."""
    return _random_helper("randint", [low, high], shape, dtype, ctx, out, kwargs,
                          ["low", "high"])


def _like(dist: str, data: Any, params: dict[str, Any], kwargs: dict[str, Any]) -> Any:
    return getattr(_nd()._internal, f"_random_{dist}_like")(data, **params, **kwargs)


def uniform_like(data: Any = None, low: float = 0.0, high: float = 1.0, **kwargs: Any) -> Any:
    """Uniform samples on ``[low, high)`` with ``data``'s shape and dtype."""
    return _like("uniform", data, {"low": low, "high": high}, kwargs)


def normal_like(data: Any = None, loc: float = 0.0, scale: float = 1.0, **kwargs: Any) -> Any:
    """Normal samples (mean ``loc``, standard deviation ``scale``) shaped like ``data``."""
    return _like("normal", data, {"loc": loc, "scale": scale}, kwargs)


def gamma_like(data: Any = None, alpha: float = 1.0, beta: float = 1.0, **kwargs: Any) -> Any:
    """Gamma samples (shape ``alpha``, scale ``beta``) shaped like ``data``."""
    return _like("gamma", data, {"alpha": alpha, "beta": beta}, kwargs)


def exponential_like(data: Any = None, lam: float = 1.0, **kwargs: Any) -> Any:
    """Exponential samples with rate ``lam`` shaped like ``data``."""
    return _like("exponential", data, {"lam": lam}, kwargs)


def poisson_like(data: Any = None, lam: float = 1.0, **kwargs: Any) -> Any:
    """Poisson samples with mean ``lam`` shaped like ``data``."""
    return _like("poisson", data, {"lam": lam}, kwargs)


def negative_binomial_like(data: Any = None, k: int = 1, p: float = 1.0, **kwargs: Any) -> Any:
    """Negative binomial samples (``k`` successes, success probability ``p``) shaped like
    ``data``."""
    return _like("negative_binomial", data, {"k": k, "p": p}, kwargs)


def generalized_negative_binomial_like(data: Any = None, mu: float = 1.0, alpha: float = 1.0,
                                       **kwargs: Any) -> Any:
    """Generalized negative binomial samples (mean ``mu``, dispersion ``alpha``) shaped like
    ``data``."""
    return _like("generalized_negative_binomial", data, {"mu": mu, "alpha": alpha}, kwargs)
