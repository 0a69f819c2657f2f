"""``mx.npx.random``: seeding dagnet's generators, and MXNet's samplers that NumPy lacks
(``bernoulli``, ``uniform_n``, ``normal_n``), for code written against ``mx.np``."""

from __future__ import annotations

from typing import Any

import numpy as onp

from .. import random as _random
from ..context import Context
from ..ndarray import NDArray
from ..numpy import ndarray
from ..numpy import random as np_random

__all__ = ["seed", "bernoulli", "uniform_n", "normal_n"]


def seed(seed: int, ctx: str | Context = "all") -> None:  # noqa: A002 - MXNet's name
    """Seed the random generators (every device's with ``ctx='all'``), as
    :func:`dagnet.random.seed`."""
    _random.seed(seed, ctx)


def bernoulli(prob: Any = None, logit: Any = None, size: Any = None, dtype: Any = None,
              ctx: Any = None, out: ndarray | None = None) -> ndarray:
    """Samples of 1 with probability ``prob`` (or ``sigmoid(logit)``: give one of the two),
    else 0, in ``dtype`` (float32 unless given; ``bool``, ``int32`` ... too).  The parameter
    is a number or an array broadcasting to ``size`` (default: its shape); a probability
    outside [0, 1] is a ValueError when the result is read, as in MXNet.  Gradient: zero."""
    if (prob is None) == (logit is None):
        raise ValueError(f"bernoulli: give either prob or logit, not both; got prob={prob!r}, "
                         f"logit={logit!r}")
    params = {"prob": prob} if logit is None else {"logit": logit}
    return np_random.call_sampler("bernoulli", params, size, ctx, out, dtype,
                                  is_logit=logit is not None)


def _batch_size(batch_shape: Any, *params: Any) -> tuple[int, ...]:
    if batch_shape is None:
        batch_shape = ()
    elif isinstance(batch_shape, (int, onp.integer)):
        batch_shape = (int(batch_shape),)
    shapes = [p.shape if isinstance(p, NDArray) else onp.shape(p) for p in params]
    return tuple(batch_shape) + tuple(onp.broadcast_shapes(*shapes))


def uniform_n(low: Any = 0.0, high: Any = 1.0, batch_shape: Any = None, dtype: Any = None,
              ctx: Any = None) -> ndarray:
    """Uniform samples on ``[low, high)`` of shape ``batch_shape`` followed by the
    parameters' broadcast shape."""
    return np_random.uniform(low, high, _batch_size(batch_shape, low, high), dtype, ctx)


def normal_n(loc: Any = 0.0, scale: Any = 1.0, batch_shape: Any = None, dtype: Any = None,
             ctx: Any = None) -> ndarray:
    """Normal samples of shape ``batch_shape`` followed by the parameters' broadcast shape;
    gradients as :func:`dagnet.numpy.random.normal`."""
    return np_random.normal(loc, scale, _batch_size(batch_shape, loc, scale), dtype, ctx)
