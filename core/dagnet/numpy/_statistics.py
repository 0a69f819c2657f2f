"""Statistics of ``dagnet.numpy``: ``average``, ``percentile``, ``quantile``,
``histogram`` and ``bincount``.

``average`` composes multiplications, sums and a division, so it is differentiable in
the data and the weights and traces into a hybridized block; ``percentile`` and
``quantile`` are the ``_npi_percentile`` operator (zero gradient, as in MXNet);
``histogram`` the ``_histogram`` operator.  ``bincount``'s output length depends on the
values: it counts on the host.  Dtypes are MXNet's ``mx.np``: ``average`` keeps the
data's dtype (integers truncate), percentiles are float64 for float64 data and float32
otherwise, ``bincount`` counts in the input's integer dtype (or the weights').
"""

from __future__ import annotations

from typing import Any

import numpy as onp

from .. import ndarray as nd
from ..ndarray import NDArray
from ._array import NumpyError, NumpyTypeError, OptionNotSupportedError, ndarray, wrap
from ._elementwise import _cast, _with_out, as_operand, multiply, promote, true_divide
from ._elementwise import require_array as _array
from ._manipulation import normalize_axis, reshape
from ._reductions import mean
from ._reductions import sum as _sum

__all__ = ["average", "percentile", "quantile", "histogram", "bincount"]


def _axis_tuple(axis: Any, ndim: int) -> tuple[int, ...] | None:
    if axis is None:
        return None
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(normalize_axis(x, ndim) for x in items)


def _full(value: Any, dtype: Any, like: ndarray) -> ndarray:
    from ._creation import full

    return full((), value, dtype=dtype, ctx=like.context)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            out: ndarray | None = None) -> Any:
    """The weighted mean of ``a`` over ``axis`` (every axis when None): ``sum(a * w) /
    sum(w)``, or the mean without ``weights``.  ``weights`` has ``a``'s shape, or is 1-d
    along one ``axis``.  With ``returned`` also the sum of the weights (for 1-d weights
    and no weights a 0-d array, as MXNet gives).  Differentiable in ``a`` and
    ``weights``; a zero weight sum gives inf or NaN, not an error.  Integer data keeps
    its dtype (the result truncates)."""
    a = _array(a, "average")
    axes = _axis_tuple(axis, a.ndim)
    if weights is None:
        result = mean(a, axis=axes)
        if result.dtype != a.dtype:
            result = result.astype(a.dtype)
        count = a.size // max(result.size, 1)
        total = _full(count, a.dtype, a)
        return _finish(result, total, returned, out)
    w = _array(weights, "average", "weights")
    dtype = promote(a.dtype, w.dtype)
    a, w = _cast(a, dtype), _cast(w, dtype)
    if a.shape != w.shape:
        if axes is None:
            raise NumpyError(f"average: axis must be given when the shapes of a {a.shape} and "
                             f"weights {w.shape} differ")
        if len(axes) != 1:
            raise NumpyError(f"average: axis must be an int when the shapes of a {a.shape} "
                             f"and weights {w.shape} differ, got {axis}")
        if w.ndim != 1:
            raise NumpyError(f"average: weights of shape {w.shape} differ from a's {a.shape} "
                             f"and are not 1-d")
        if w.shape[0] != a.shape[axes[0]]:
            raise NumpyError(f"average: the length of weights ({w.shape[0]}) differs from "
                             f"a's axis {axes[0]} ({a.shape[axes[0]]})")
        total = _sum(w)
        w = reshape(w, tuple(n if i == axes[0] else 1 for i, n in enumerate(a.shape)))
    else:
        total = _sum(w, axis=axes)
    result = true_divide(_sum(multiply(a, w), axis=axes), total)
    if result.dtype != dtype:  # integers: the quotient truncated, as MXNet's
        result = result.astype(dtype)
    return _finish(result, total, returned, out)


def _finish(result: ndarray, total: ndarray, returned: bool, out: ndarray | None) -> Any:
    result = _with_out(result, out)
    return (result, total) if returned else result


def percentile(a: Any, q: Any, axis: Any = None, out: ndarray | None = None,
               overwrite_input: Any = None, interpolation: str = "linear",
               keepdims: bool = False) -> ndarray:
    """The ``q``-th percentiles (``q`` in [0, 100], a number or an array of at most one
    dimension) of ``a`` over ``axis``, as NumPy computes them with ``interpolation``
    (linear, lower, higher, midpoint, nearest).  Shape ``q.shape`` + the reduced shape;
    float64 for float64 ``a``, float32 otherwise.  The ``_npi_percentile`` operator: an
    error for ``q`` outside the range, zero gradient."""
    return _percentile("percentile", a, q, 1.0, axis, out, overwrite_input, interpolation,
                       keepdims)


def quantile(a: Any, q: Any, axis: Any = None, out: ndarray | None = None,
             overwrite_input: Any = None, interpolation: str = "linear",
             keepdims: bool = False) -> ndarray:
    """The ``q``-th quantiles (``q`` in [0, 1]) of ``a`` over ``axis``: :func:`percentile`
    of ``100 q``."""
    return _percentile("quantile", a, q, 100.0, axis, out, overwrite_input, interpolation,
                       keepdims)


def _percentile(name: str, a: Any, q: Any, scale: float, axis: Any, out: ndarray | None,
                overwrite_input: Any, interpolation: str, keepdims: bool) -> ndarray:
    if overwrite_input is not None:
        raise OptionNotSupportedError(f"{name}: overwrite_input is not supported; leave it "
                                      f"None")
    a = _array(a, name)
    axes = _axis_tuple(axis, a.ndim)
    params: dict[str, Any] = {"axis": axes, "interpolation": interpolation,
                              "keepdims": bool(keepdims)}
    q = as_operand(q)
    if isinstance(q, NDArray):
        inputs = [a, q if scale == 1.0 else multiply(q, scale)]
    else:
        params["q_scalar"] = float(q) * scale
        inputs = [a]
    return _with_out(wrap(nd.invoke("_npi_percentile", inputs, params)), out)


def histogram(a: Any, bins: Any = 10, range: tuple[float, float] | None = None,  # noqa: A002
              normed: Any = None, weights: Any = None, density: Any = None) -> tuple:
    """(counts, edges) of the flattened ``a``: ``bins`` equal bins over ``range`` (which
    must be given), or the bin edges as an array.  Counts are int64, edges have ``a``'s
    dtype; the last bin includes its right edge.  The ``_histogram`` operator."""
    for option, value in (("normed", normed), ("weights", weights), ("density", density)):
        if value is not None:
            raise OptionNotSupportedError(f"histogram: {option} is not supported; leave it "
                                          f"None")
    a = _array(a, "histogram")
    edges = as_operand(bins)
    if isinstance(edges, NDArray):
        return tuple(wrap(nd.invoke("_histogram", [a, edges], {})))
    if range is None:
        raise OptionNotSupportedError("histogram: bins as a number needs range=(low, high); "
                                      "an automatic range is not supported")
    if not isinstance(edges, (int, onp.integer)) or isinstance(edges, bool):
        raise NumpyTypeError(f"histogram: bins must be an int or an array of edges, got "
                             f"{type(bins).__name__}")
    params = {"bin_cnt": int(edges), "range": tuple(float(v) for v in range)}
    return tuple(wrap(nd.invoke("_histogram", [a], params)))


def bincount(x: Any, weights: Any = None, minlength: int = 0) -> ndarray:
    """How often each value ``0, 1, ..., max(x)`` occurs in the non-negative integers ``x``
    (1-d), at least ``minlength`` of them; with ``weights`` their sums instead.  The counts
    have ``x``'s dtype (the weights' with weights), as MXNet's.  Computed on the host: not
    differentiable."""
    from ._creation import array

    if minlength < 0:
        raise NumpyError(f"bincount: minlength must be non-negative, got {minlength}")
    x = _array(x, "bincount", "x")
    if x.dtype.kind not in "iu":
        raise NumpyTypeError(f"bincount: x must be an integer array, got {x.dtype}")
    if x.ndim > 1:
        raise NumpyError(f"bincount: x must be 1-d, got shape {x.shape}")
    values = x.asnumpy().reshape(-1)
    if values.size and values.min() < 0:
        raise NumpyError("bincount: x must be non-negative")
    dtype = x.dtype
    host_weights = None
    if weights is not None:
        w = _array(weights, "bincount", "weights")
        if w.shape != x.shape:
            raise NumpyError(f"bincount: weights of shape {w.shape} differ from x's {x.shape}")
        host_weights, dtype = w.asnumpy().reshape(-1).astype(onp.float64), w.dtype
    counts = onp.bincount(values.astype(onp.int64), host_weights, int(minlength))
    return array(counts.astype(dtype), ctx=x.context)
