"""``mx.sym.random``: sampling nodes in a symbolic graph (MXNet's ``mx.sym.random``).

``uniform``, ``normal`` and ``randn`` make ``_random_uniform`` /
``_random_normal`` nodes with scalar parameters, named and written to JSON as
MXNet names and writes them; each forward pass draws new samples from the
device's random resource (seeded by ``mx.random.seed``).
"""

from __future__ import annotations

from typing import Any

from ..random import check_scalar_params
from ._symbol import Symbol

__all__ = ["uniform", "normal", "randn"]


def _node(op_name: str, params: dict[str, Any], shape: Any, dtype: Any,
          kwargs: dict[str, Any]) -> Symbol:
    from . import _function

    check_scalar_params(f"sym.random.{op_name.rsplit('_', 1)[-1]}", params, Symbol)
    call = dict(params, **kwargs)
    if shape is not None:
        call["shape"] = shape
    if dtype is not None:
        call["dtype"] = dtype
    return _function(op_name)(**call)


def uniform(low: float = 0, high: float = 1, shape: Any = None, dtype: Any = None,
            **kwargs: Any) -> Symbol:
    """A node sampling the uniform distribution on ``[low, high)`` (``name``, ``attr``
    and ``ctx`` go in ``kwargs`` as for every operator)."""
    return _node("_random_uniform", {"low": low, "high": high}, shape, dtype, kwargs)


def normal(loc: float = 0, scale: float = 1, shape: Any = None, dtype: Any = None,
           **kwargs: Any) -> Symbol:
    """A node sampling the normal distribution with mean ``loc`` and standard deviation
    ``scale``."""
    return _node("_random_normal", {"loc": loc, "scale": scale}, shape, dtype, kwargs)


def randn(*shape: int, loc: float = 0, scale: float = 1, dtype: Any = None,
          **kwargs: Any) -> Symbol:
    """A normal sampling node whose shape is given positionally (``randn(2, 3)``)."""
    return normal(loc, scale, shape if shape else None, dtype, **kwargs)
