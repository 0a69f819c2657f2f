"""Creating arrays: ``array``, ``empty``, ``zeros``, ``ones``, ``full``, ``arange``.

As in MXNet 1.x the default dtype is float32 -- also for ``array`` of a
numpy array or a list of integers (only an NDArray source keeps its dtype).
The values are written by a function pushed to the engine, so creation is
ordered like every other write; the source is copied at the call, so
changing it afterwards does not change the array.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import ContextError, ShapeError
from ..context import Context, current_context
from ..runtime import adopt_host_buffer, device_of
from ..util import is_np_shape
from ._invoke import assign, push_copy
from ._ndarray import NDArray, new_array, wrap_chunk
from ._storage import check_stype

__all__ = ["array", "empty", "zeros", "ones", "full", "arange", "linspace", "eye", "from_numpy",
           "parse_context", "DEFAULT_DTYPE"]

DEFAULT_DTYPE = np.dtype(np.float32)  # MXNet's mx_real_t

_CONTEXT_TEXT = re.compile(r"^\s*([A-Za-z_][\w]*)\s*\(\s*(\d+)\s*\)\s*$")


def parse_context(value: Any) -> Context:
    """A Context from a Context or its text (``'cpu(0)'``, ``'gpu(1)'``, ``'cpu'``)."""
    if isinstance(value, Context):
        return value
    if isinstance(value, str):
        match = _CONTEXT_TEXT.match(value)
        if match:
            return Context(match.group(1), int(match.group(2)))
        if value.strip().isidentifier():
            return Context(value.strip(), 0)
    raise ContextError(f"expected a device context such as dagnet.cpu() or 'gpu(0)', got "
                       f"{type(value).__name__} {value!r}")


def _ctx(ctx: Any) -> Context:
    return current_context() if ctx is None else parse_context(ctx)


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        dims = tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"a shape must be an int or a sequence of ints, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"negative dimensions are not allowed: {dims}")
    return dims


def _check_legacy_shape(shape: tuple[int, ...], what: str) -> None:
    """Without NumPy shape semantics MXNet reads ``()`` and 0 dimensions as "unknown", so
    it refuses to create such arrays."""
    if not is_np_shape() and (not shape or 0 in shape):
        raise ShapeError(f"{what}: shape {shape} has {'no dimensions' if not shape else 'a 0'}"
                         f", which MXNet 1.x reads as unknown; scalar and zero-size arrays "
                         f"need NumPy shape semantics (with mx.np_shape(): ..., or "
                         f"@mx.use_np_shape)")


def _dtype(dtype: Any) -> np.dtype:
    return DEFAULT_DTYPE if dtype is None else np.dtype(dtype)


def _is_sparse_stype(stype: Any) -> bool:
    """Whether ``stype`` asks for sparse storage (None and 'default' are dense; anything
    else must be 'row_sparse' or 'csr')."""
    if stype is None or stype == "default":
        return False
    check_stype(stype, "storage type")
    return True


def empty(shape: int | Sequence[int], ctx: Context | str | None = None, dtype: Any = None,
          stype: str | None = None) -> NDArray:
    """A new array whose values are not initialised (float32 unless ``dtype``); a sparse
    ``stype`` ('row_sparse', 'csr') gives a sparse array with no stored values."""
    if _is_sparse_stype(stype):
        from ._sparse_creation import zeros as sparse_zeros

        return sparse_zeros(stype, shape, ctx, dtype)
    return new_array(_shape(shape), _dtype(dtype), device_of(_ctx(ctx)))


def full(shape: int | Sequence[int], val: Any, ctx: Context | str | None = None,
         dtype: Any = None, out: NDArray | None = None) -> NDArray:
    """A new array (or ``out``) filled with ``val``.  Scalar (``()``) and zero-size shapes
    need NumPy shape semantics (``mx.np_shape()``), as in MXNet 1.x."""
    if out is None:
        _check_legacy_shape(_shape(shape), "full/zeros/ones")
        out = empty(shape, ctx, dtype)
    # named as MXNet's fill operators, which is what a profile shows
    scalar = isinstance(val, (int, float, np.number)) and not isinstance(val, bool)
    assign(out, val, name="_zeros" if scalar and val == 0 else
           "_ones" if scalar and val == 1 else "_full")
    return out


def _only_out(name: str, kwargs: dict[str, Any]) -> NDArray | None:
    out = kwargs.pop("out", None)
    if kwargs:
        raise TypeError(f"{name}() got unexpected keyword argument(s) {', '.join(kwargs)}; "
                        f"it takes shape, ctx, dtype, stype and out")
    return out


def zeros(shape: int | Sequence[int], ctx: Context | str | None = None, dtype: Any = None,
          stype: str | None = None, **kwargs: Any) -> NDArray:
    """A new array (or ``out=``) of zeros (float32 unless ``dtype``); a sparse ``stype``
    ('row_sparse', 'csr') gives a sparse array with no stored values."""
    if _is_sparse_stype(stype):
        from ._sparse_creation import zeros as sparse_zeros

        return sparse_zeros(stype, shape, ctx, dtype, **kwargs)
    return full(shape, 0, ctx, dtype, _only_out("zeros", kwargs))


def ones(shape: int | Sequence[int], ctx: Context | str | None = None, dtype: Any = None,
         stype: str | None = None, **kwargs: Any) -> NDArray:
    """A new array (or ``out=``) of ones (float32 unless ``dtype``; a sparse ``stype``
    stores every element)."""
    if _is_sparse_stype(stype):
        from ._sparse import cast_storage

        return cast_storage(full(shape, 1, ctx, dtype), stype)
    return full(shape, 1, ctx, dtype, _only_out("ones", kwargs))


def array(source_array: Any, ctx: Context | str | None = None, dtype: Any = None) -> NDArray:
    """A new array holding the values of ``source_array`` (an NDArray, a numpy array, a
    nested list or a scalar).

    The dtype is ``dtype`` if given, else the source's for an NDArray, else
    float32 -- MXNet 1.x converts numpy integer and float64 sources to float32.
    A sparse NDArray or a scipy sparse matrix gives a sparse array (as
    ``dagnet.nd.sparse.array``).
    """
    if isinstance(source_array, NDArray) and source_array.stype != "default" or \
            _is_scipy_sparse(source_array):
        from ._sparse_creation import array as sparse_array

        return sparse_array(source_array, ctx, dtype)
    if isinstance(source_array, NDArray):
        dest = empty(source_array.shape, ctx if ctx is not None else source_array.context,
                     dtype if dtype is not None else source_array._dtype)
        push_copy(source_array, dest)
        return dest
    host = np.array(source_array, dtype=_dtype(dtype))  # a copy, taken now
    if host.dtype == object:
        raise TypeError(f"cannot make an NDArray from {type(source_array).__name__} "
                        f"{source_array!r:.80}")
    dest = new_array(host.shape, host.dtype, device_of(_ctx(ctx)))
    if host.size:
        if dest._chunk.dev.numpy:
            # a new array: no operation can be pending on its memory, so the copy runs
            # now, in this thread (MXNet's _sync_copyfrom), without an engine round trip
            dest._xp()[...] = host
        else:
            assign(dest, host, owned=True)
    return dest


def _is_scipy_sparse(value: Any) -> bool:
    module = type(value).__module__
    if not module.startswith("scipy.sparse"):
        return False
    import scipy.sparse as spsp

    return bool(spsp.issparse(value))


def arange(start: float, stop: float | None = None, step: float = 1.0, repeat: int = 1,
           infer_range: bool | None = None, ctx: Context | str | None = None,
           dtype: Any = None) -> NDArray:
    """Evenly spaced values in ``[start, stop)`` by ``step``, each repeated ``repeat``
    times (float32 unless ``dtype``); ``arange(n)`` counts from 0."""
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be 0")
    if repeat < 1:
        raise ValueError(f"arange: repeat must be at least 1, got {repeat}")
    count = max(0, math.ceil((stop - start) / step))
    kind = _dtype(dtype)
    if kind.kind in "iu":
        # numpy's and MXNet's integer arange: the first two values in the dtype set the step
        first = int(np.array(start).astype(kind))
        delta = int(np.array(start + step).astype(kind)) - first
        values = (first + delta * np.arange(count, dtype=np.int64)).astype(kind)
    else:
        values = start + step * np.arange(count, dtype=np.float64)
    if repeat > 1:
        values = np.repeat(values, repeat)
    return array(values, ctx=ctx, dtype=_dtype(dtype))


def linspace(start: float, stop: float, num: int, endpoint: bool = True,
             ctx: Context | str | None = None, dtype: Any = None) -> NDArray:
    """``num`` evenly spaced values from ``start`` to ``stop`` (included unless
    ``endpoint=False``), float32 unless ``dtype``."""
    values = np.linspace(start, stop, int(num), endpoint=endpoint, dtype=np.float64)
    return array(values, ctx=ctx, dtype=_dtype(dtype))


def eye(N: int, M: int = 0, k: int = 0, ctx: Context | str | None = None,
        dtype: Any = None) -> NDArray:
    """An ``N x M`` matrix (``M=0``: square) with ones on diagonal ``k``."""
    return array(np.eye(int(N), int(M) or None, int(k)), ctx=ctx, dtype=_dtype(dtype))


def from_numpy(ndarray: np.ndarray, zero_copy: bool = True) -> NDArray:
    """An NDArray on the CPU with the values and dtype of a numpy array.

    With ``zero_copy`` (the default, as in MXNet) the NDArray uses the numpy array's
    own memory, which must be C-contiguous; the numpy array becomes read-only, since
    writes must go through dagnet's engine to be ordered with the operators that read
    them.  Without it the values are copied.
    """
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}")
    if not zero_copy:
        return array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise ValueError("from_numpy: zero_copy needs a C-contiguous array; pass "
                         "np.ascontiguousarray(x), or zero_copy=False to copy")
    dev = device_of(current_context() if current_context().device_type == "cpu"
                    else Context("cpu", 0))
    chunk = adopt_host_buffer(ndarray, dev)
    data = np.ndarray(ndarray.shape, ndarray.dtype, chunk.handle.data)
    ndarray.flags["WRITEABLE"] = False
    return wrap_chunk(chunk, 0, tuple(ndarray.shape), ndarray.dtype, None, data)
