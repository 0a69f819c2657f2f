"""``dagnet.numpy.random`` (``mx.np.random``): NumPy-style samplers drawing from
dagnet's generators (seeded by ``mx.random.seed`` / ``mx.npx.random.seed``).

The arguments are NumPy's (``size``, not MXNet's legacy ``shape``): an
unknown keyword such as ``shape=`` is a ``TypeError``, as in MXNet.  ``size=None``
draws one value as a 0-d array.  Distribution parameters may be arrays; they
are broadcast against each other and ``size``.
"""

from __future__ import annotations

from typing import Any

import numpy as onp

from .. import ndarray as nd
from .. import random as _random
from ..ndarray import NDArray
from ._array import DEFAULT_DTYPE, NumpyError, _reshaped, ndarray, wrap
from ._elementwise import add, as_operand, multiply, subtract

__all__ = ["uniform", "normal", "randint", "choice", "multinomial", "rand", "randn", "shuffle"]


def _size(size: Any) -> tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, (int, onp.integer)):
        return (int(size),)
    return tuple(int(d) for d in size)


def _draw(sampler: Any, shape: tuple[int, ...], dtype: Any, ctx: Any, **params: Any) -> ndarray:
    """``sampler`` (a legacy one) for ``shape``, which may be ``()`` or zero-size."""
    if 0 in shape:
        from ._creation import empty

        return empty(shape, dtype, ctx=ctx)
    result = sampler(shape=shape or (1,), dtype=dtype, ctx=ctx, **params)
    return _reshaped(result, shape)


def _finish(result: ndarray, out: ndarray | None) -> ndarray:
    if out is None:
        return result
    out[...] = result
    return out


def _shape_with(size: Any, *params: Any) -> tuple[int, ...]:
    shape = _size(size)
    if size is None:
        shapes = [p.shape for p in params if isinstance(p, NDArray)]
        shape = tuple(onp.broadcast_shapes(*shapes)) if shapes else ()
    return shape


def uniform(low: Any = 0.0, high: Any = 1.0, size: Any = None, dtype: Any = None,
            ctx: Any = None, out: ndarray | None = None) -> ndarray:
    """Samples from the uniform distribution on ``[low, high)`` (float32 unless
    ``dtype``)."""
    low, high = as_operand(low), as_operand(high)
    dtype = DEFAULT_DTYPE if dtype is None else onp.dtype(dtype)
    shape = _shape_with(size, low, high)
    if isinstance(low, NDArray) or isinstance(high, NDArray):
        unit = _draw(_random.uniform, shape, dtype, ctx, low=0.0, high=1.0)
        result = add(low, multiply(subtract(high, low), unit))
        return _finish(result.astype(dtype, copy=False), out)
    return _finish(_draw(_random.uniform, shape, dtype, ctx, low=float(low), high=float(high)),
                   out)


def normal(loc: Any = 0.0, scale: Any = 1.0, size: Any = None, dtype: Any = None,
           ctx: Any = None, out: ndarray | None = None) -> ndarray:
    """Samples from the normal distribution with mean ``loc`` and standard deviation
    ``scale`` (float32 unless ``dtype``)."""
    loc, scale = as_operand(loc), as_operand(scale)
    dtype = DEFAULT_DTYPE if dtype is None else onp.dtype(dtype)
    shape = _shape_with(size, loc, scale)
    if isinstance(loc, NDArray) or isinstance(scale, NDArray):
        unit = _draw(_random.normal, shape, dtype, ctx, loc=0.0, scale=1.0)
        result = add(loc, multiply(scale, unit))
        return _finish(result.astype(dtype, copy=False), out)
    return _finish(_draw(_random.normal, shape, dtype, ctx, loc=float(loc), scale=float(scale)),
                   out)


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
            from ._creation import array

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
        from ._creation import arange

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
    from ._creation import array, zeros

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


def rand(*size: int) -> ndarray:
    """Uniform samples on ``[0, 1)`` of shape ``size``."""
    return uniform(size=size)


def randn(*size: int) -> ndarray:
    """Standard normal samples of shape ``size``."""
    return normal(size=size)


def shuffle(x: ndarray) -> None:
    """Shuffle ``x`` in place along its first axis."""
    if not isinstance(x, NDArray):
        raise NumpyError("shuffle: x must be a dagnet.numpy.ndarray")
    x[...] = _random.shuffle(x)



def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(f"module 'dagnet.numpy.random' has no attribute {name!r}")
    from ._array import NotProvidedError

    hint = " (seed with mx.npx.random.seed or mx.random.seed, as in MXNet)" \
        if name == "seed" else ""
    raise NotProvidedError(f"dagnet.numpy.random does not provide {name!r} yet{hint}")
