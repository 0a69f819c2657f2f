"""Evenly spaced sequences and windows of ``dagnet.numpy`` that depend on no array:
``logspace`` and the tapering windows ``hanning``, ``hamming``, ``blackman``.

They are computed on the host in float64 and made arrays of ``dtype`` (float32 unless
given, as in MXNet); inside a hybridized block they are constants of the graph.
"""

from __future__ import annotations

from typing import Any

import numpy as onp

from ._array import DEFAULT_DTYPE, NumpyError, OptionNotSupportedError, ndarray

__all__ = ["logspace", "hanning", "hamming", "blackman"]


def _made(values: onp.ndarray, dtype: Any, ctx: Any) -> ndarray:
    from ._creation import array

    return array(values.astype(DEFAULT_DTYPE if dtype is None else onp.dtype(dtype)), ctx=ctx)


def logspace(start: float, stop: float, num: int = 50, endpoint: bool = True,
             base: float = 10.0, dtype: Any = None, axis: int = 0,
             ctx: Any = None) -> ndarray:
    """``base ** linspace(start, stop, num, endpoint)``: ``num`` values spaced evenly on a
    log scale (float32 unless ``dtype``).  Only ``axis=0``, as in MXNet."""
    if axis != 0:
        raise OptionNotSupportedError(f"logspace: axis={axis} is not supported; only axis=0")
    if int(num) < 0:
        raise NumpyError(f"logspace: num must be non-negative, got {num}")
    with onp.errstate(divide="ignore", over="ignore", invalid="ignore"):
        values = onp.logspace(start, stop, int(num), endpoint=endpoint, base=base)
        return _made(values, dtype, ctx)


def _window(name: str, M: int, dtype: Any, ctx: Any) -> ndarray:  # noqa: N803
    if isinstance(M, float) and not M.is_integer():
        raise NumpyError(f"{name}: M must be an integer, got {M}")
    return _made(getattr(onp, name)(int(M)), dtype, ctx)


def hanning(M: int, dtype: Any = onp.float32, ctx: Any = None) -> ndarray:  # noqa: N803
    """The Hann window of ``M`` points, ``0.5 - 0.5 cos(2 pi n / (M - 1))`` (empty for
    ``M <= 0``, ``[1]`` for ``M = 1``)."""
    return _window("hanning", M, dtype, ctx)


def hamming(M: int, dtype: Any = onp.float32, ctx: Any = None) -> ndarray:  # noqa: N803
    """The Hamming window of ``M`` points, ``0.54 - 0.46 cos(2 pi n / (M - 1))``."""
    return _window("hamming", M, dtype, ctx)


def blackman(M: int, dtype: Any = onp.float32, ctx: Any = None) -> ndarray:  # noqa: N803
    """The Blackman window of ``M`` points, ``0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08
    cos(4 pi n / (M - 1))``."""
    return _window("blackman", M, dtype, ctx)
