"""``dagnet.numpy.ndarray``: an NDArray with NumPy's semantics.

It is :class:`dagnet.ndarray.NDArray` with the same memory layout, so every
operator, the engine and autograd treat it as they treat an NDArray; what
changes is how Python sees it:

- shapes follow NumPy: ``()`` is a scalar's shape and ``0`` a zero-size
  dimension; ``x[1, 2]`` and full reductions give 0-d arrays;
- ``dtype`` is a ``numpy.dtype`` object (``dtype('float32')``), as MXNet's
  ``mx.np`` returns it; comparisons give ``bool`` arrays;
- mixed dtypes promote as in MXNet (an integer and a float array give the
  float's type; a Python float with an integer array keeps the integer type);
- the results of every operation are ``dagnet.numpy.ndarray`` again.

Results of the operators are made NumPy arrays by changing their class in
place (they are new objects nobody else holds); an existing NDArray is
viewed as one by :func:`as_np_ndarray`, which shares its memory and its
autograd state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as onp

from .. import ndarray as nd
from .._errors import DagnetError, ShapeError
from ..autograd import is_recording
from ..ndarray import NDArray
from ..util import np_shape

__all__ = ["ndarray", "as_np_ndarray", "wrap", "NumpyError", "NumpyTypeError",
           "NotProvidedError", "OrderNotSupportedError", "OptionNotSupportedError"]

DEFAULT_DTYPE = onp.dtype(onp.float32)
_SCALARS = (int, float, bool, onp.number, onp.bool_)


class NumpyError(DagnetError, ValueError):
    """A ``dagnet.numpy`` call with an argument NumPy semantics do not allow."""


class OrderNotSupportedError(DagnetError, NotImplementedError):
    """A memory order other than C's (``order='F'``): dagnet arrays are C-ordered."""


class NumpyTypeError(DagnetError, TypeError):
    """A ``dagnet.numpy`` call with an argument of a type or value NumPy does not know
    (``dtype="abc"``, ``casting="mxnet"``, an unknown keyword)."""


class OptionNotSupportedError(DagnetError, NotImplementedError):
    """A NumPy option that is legal but that MXNet's ``mx.np`` (and so dagnet) does not
    implement (``where=False``, ``casting="safe"``, ``dtype=`` on a ufunc)."""


class NotProvidedError(DagnetError, AttributeError):
    """A NumPy name that ``dagnet.numpy`` does not provide (yet)."""


def wrap(result: Any) -> Any:
    """The result of an operator as ``dagnet.numpy.ndarray`` (lists and tuples element by
    element); the arrays must be new ones, since their class is changed in place."""
    if isinstance(result, NDArray):
        if result.__class__ is not ndarray:
            result.__class__ = ndarray
        return result
    if isinstance(result, (list, tuple)):
        return type(result)(wrap(r) for r in result)
    return result


def as_np_ndarray(array: NDArray) -> ndarray:
    """``array`` seen as a ``dagnet.numpy.ndarray``: the same memory and the same autograd
    state (MXNet's ``NDArray.as_np_ndarray``); an np array is returned as it is."""
    if isinstance(array, ndarray):
        return array
    if not isinstance(array, NDArray):
        raise TypeError(f"as_np_ndarray: expected an NDArray, got {type(array).__name__}")
    view = wrap(array.detach())
    view.__dict__ = array.__dict__  # one autograd entry for both names of the array
    return view


def _index_shape(shape: tuple[int, ...], key: Any) -> tuple[int, ...]:
    """The shape NumPy gives ``x[key]`` for an array of ``shape``."""
    probe = onp.broadcast_to(onp.zeros((), onp.int8), shape)
    return probe[key].shape


def _host_key(key: Any) -> Any:
    """``key`` with boolean masks and arrays as numpy arrays (the values are needed now)."""
    if isinstance(key, tuple):
        return tuple(_host_key(k) for k in key)
    if isinstance(key, NDArray):
        return key.asnumpy()
    if isinstance(key, list):
        return onp.asarray(key)
    return key


def _has_bool(key: Any) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, (bool, onp.bool_)) or (isinstance(k, onp.ndarray)
                                                      and k.dtype == onp.bool_) for k in items)


def _is_basic(key: Any) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or (isinstance(k, (slice, int, onp.integer))
                                              and not isinstance(k, bool)) for k in items)


def _reshaped(array: NDArray, shape: tuple[int, ...]) -> ndarray:
    """``array`` (a new array) with NumPy's ``shape`` of the same size."""
    if array.shape == shape:
        return wrap(array)
    if 0 in shape:  # nothing to keep: a new empty array of the shape
        return zeros_from(shape, array.dtype, array.context, array)
    return wrap(reshape_view(array, shape))


def zeros_from(shape: tuple[int, ...], dtype: Any, ctx: Any, *sources: NDArray) -> ndarray:
    """A result of zeros (often zero-size: an operation with nothing to compute) that
    ``sources`` determine: see :func:`connect`."""
    from ._creation import zeros

    return connect(zeros(shape, dtype, ctx=ctx), *sources)


def connect(result: ndarray, *sources: NDArray) -> ndarray:
    """``result``, which ``sources`` determine without an operator having read them (they
    are zero-size, or only their shapes mattered): while autograd records (or a graph is
    traced) it is passed through operators that read them, so the recorded graph reaches
    them and ``backward`` gives them zero gradients, as MXNet does."""
    if not is_recording() or not sources:
        return result
    shape, dtype = result.shape, result.dtype
    for source in sources:
        if source.dtype != dtype:
            source = source.astype(dtype)
        result = nd.broadcast_add(result, nd.sum(source) * 0)
    if result.shape != shape:  # () and zero-size shapes: broadcast_add gave (1,)
        result = nd.reshape_like(result, _template(shape, result.context, dtype))
    return wrap(result)


def _template(shape: tuple[int, ...], ctx: Any, dtype: Any) -> NDArray:
    """Zeros of ``shape`` (NumPy's: 0-d and zero-size allowed) for ``reshape_like``."""
    with np_shape(True):
        return nd.zeros(shape, ctx=ctx, dtype=dtype)


def reshape_view(array: NDArray, shape: tuple[int, ...]) -> NDArray:
    """``array`` viewed with ``shape`` (same size, no ``0``); while autograd records, a 0-d
    target goes through ``reshape_like``, which the recorder can differentiate."""
    if not shape and is_recording():
        return nd.reshape_like(array, _template((), array.context, array.dtype))
    return NDArray.reshape(array, shape)


class ndarray(NDArray):  # noqa: N801 - NumPy's name
    """An array with NumPy's semantics on a dagnet device (``mx.np.ndarray``).

    Create one with :func:`dagnet.numpy.array`, :func:`~dagnet.numpy.zeros` and
    the other creation functions, or as the result of an operation on np arrays.
    """

    __slots__ = ()

    # -- NumPy's dispatch protocols: numpy.f(x) runs mx.np.f(x) ----------------------
    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from .dispatch import array_function

        return array_function(func, types, args, kwargs)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from .dispatch import array_ufunc

        return array_ufunc(ufunc, method, inputs, kwargs)

    # -- layout ----------------------------------------------------------------------
    @property
    def dtype(self) -> onp.dtype:  # type: ignore[override]
        """The element type as a ``numpy.dtype`` (``dtype('float32')``)."""
        return self._dtype

    @property
    def T(self) -> ndarray:  # noqa: N802 - NumPy's name
        """The transpose (axes reversed); a 0-d or 1-d array is copied as it is."""
        return self.transpose()

    # -- host access -------------------------------------------------------------------
    def item(self, *args: Any) -> Any:
        """The element (of a one-element array, or at ``args``) as a Python scalar."""
        return self.asnumpy().item(*args)

    def asscalar(self) -> Any:
        """The single value of a one-element array, as a numpy scalar."""
        if self.size != 1:
            raise NumpyError(f"asscalar: the array is not a scalar: its shape is {self.shape}")
        return self.asnumpy().reshape(-1)[0]

    def as_nd_ndarray(self) -> NDArray:
        """This array as a legacy ``NDArray`` sharing its memory (MXNet's
        ``as_nd_ndarray``)."""
        view = self.detach()
        view.__class__ = NDArray
        view.__dict__ = self.__dict__
        return view

    def as_np_ndarray(self) -> ndarray:
        """This array (it is an np array already)."""
        return self

    def __repr__(self) -> str:
        """NumPy's repr, the dtype shown unless it is float32 or bool (as MXNet shows it)."""
        values = self.asnumpy()
        text = onp.array2string(values, separator=", ", prefix="array(")
        extra = f", shape={values.shape}" if values.size == 0 and values.ndim > 1 else ""
        if values.dtype not in (DEFAULT_DTYPE, onp.dtype(onp.bool_)):
            extra += f", dtype={values.dtype}"
        return f"array({text}{extra})"

    def __str__(self) -> str:
        return str(self.asnumpy())

    def __format__(self, spec: str) -> str:
        """A 0-d array formats as its value; others only without a spec (as NumPy)."""
        if self.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} for a {self.ndim}-d "
                            f"dagnet.numpy.ndarray; only 0-d arrays take a format spec")
        return str(self)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._dtype.kind not in "iub" or self.size != 1:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # -- indexing ------------------------------------------------------------------------
    def __getitem__(self, key: Any) -> ndarray:
        """NumPy's indexing: basic keys (ints, slices, None, ...) and integer or boolean
        arrays; an int per axis gives a 0-d array."""
        if isinstance(key, NDArray) and key._dtype.kind != "b" and key.ndim == 1 \
                and self.ndim >= 1:
            return wrap(NDArray.__getitem__(self, key))
        if isinstance(key, (bool, onp.bool_)) or (
                isinstance(key, (NDArray, onp.ndarray)) and key.ndim == 0
                and key.dtype == onp.bool_):
            # a scalar mask: a new leading axis of length 1 (True) or 0 (False)
            if bool(key.item() if hasattr(key, "item") else key):
                return self[None]
            from ._creation import empty

            return empty((0,) + self.shape, self.dtype, ctx=self.context)
        key = _plain_ints(key)
        if not _is_basic(key):
            key = _host_key(key)
            if _has_bool(key):
                key = _bool_to_int(key, self.shape)
            return _reshaped(NDArray.__getitem__(self, key), _index_shape(self.shape, key))
        expected = _index_shape(self.shape, key)
        if self.ndim == 0:
            return _reshaped(self.copy(), expected)
        legacy = key if not _has_new_axis(key) else _drop_new_axes(key)
        if legacy is Ellipsis or (isinstance(legacy, tuple) and not legacy):
            return _reshaped(NDArray.reshape(self, self.shape), expected)
        return _reshaped(NDArray.__getitem__(self, legacy), expected)

    def __setitem__(self, key: Any, value: Any) -> None:
        """Write ``value`` (broadcast) into the part ``key`` selects, NumPy's indexing."""
        if self.ndim == 0:
            if isinstance(key, (NDArray, onp.ndarray)) and key.dtype == onp.bool_ \
                    and key.ndim == 0:  # a 0-d mask: the one value, or nothing
                if not bool(key.item() if hasattr(key, "item") else key):
                    return
                key = ()
            whole = key is Ellipsis or (isinstance(key, tuple) and not key) or (
                isinstance(key, slice) and key == slice(None))
            if not whole:
                raise IndexError(f"too many indices for a 0-d array: {key!r}")
            if isinstance(value, NDArray) and value.ndim == 0:
                # the array itself, not a view of it: a trace keeps value as its new value
                NDArray.__setitem__(self, Ellipsis, value)
                return
            NDArray.__setitem__(NDArray.reshape(self, (1,)), slice(None), value)
            return
        if isinstance(value, NDArray) and value.ndim == 0:
            value = NDArray.reshape(value, (1,))
        key = _plain_ints(key)
        if not _is_basic(key):
            key = _host_key(key)
            if _has_bool(key):
                key = _bool_to_int(key, self.shape)
        elif isinstance(key, tuple) and not key:
            key = slice(None)
        elif _has_new_axis(key):
            key = _drop_new_axes(key)
        NDArray.__setitem__(self, key, value)

    # -- shape -----------------------------------------------------------------------------
    def reshape(self, *shape: Any, order: str = "C") -> ndarray:  # type: ignore[override]
        """This array with shape ``shape`` (NumPy's rules: one ``-1`` is inferred)."""
        from ._manipulation import reshape

        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return reshape(self, shape, order)

    def transpose(self, *axes: Any) -> ndarray:  # type: ignore[override]
        """The array with its axes permuted (reversed when none are given)."""
        from ._manipulation import transpose

        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return transpose(self, axes or None)

    def flatten(self, order: str = "C") -> ndarray:  # type: ignore[override]
        """A 1-d copy of the array."""
        return self.reshape(-1, order=order).copy()

    def ravel(self, order: str = "C") -> ndarray:
        """The array as 1-d."""
        return self.reshape(-1, order=order)

    def squeeze(self, axis: Any = None) -> ndarray:  # type: ignore[override]
        """The array without axes of length 1 (all of them, or ``axis``)."""
        from ._manipulation import squeeze

        return squeeze(self, axis)

    def expand_dims(self, axis: int) -> ndarray:  # type: ignore[override]
        """A new axis of length 1 at ``axis``."""
        from ._manipulation import expand_dims

        return expand_dims(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> ndarray:  # type: ignore[override]
        """The array with two axes exchanged."""
        from ._manipulation import swapaxes

        return swapaxes(self, axis1, axis2)

    def broadcast_to(self, shape: Sequence[int]) -> ndarray:
        """The array broadcast to ``shape``."""
        from ._manipulation import broadcast_to

        return broadcast_to(self, shape)

    def clip(self, min: Any = None, max: Any = None,  # noqa: A002 - NumPy's names
             out: Any = None) -> ndarray:  # type: ignore[override]
        """The values limited to ``[min, max]`` (one of them may be None)."""
        from ._manipulation import clip

        return clip(self, min, max, out=out)

    def sort(self, axis: int | None = -1, kind: str | None = None,  # type: ignore[override]
             order: Any = None) -> ndarray:
        """A sorted copy along ``axis`` (MXNet's fluent ``sort``; NumPy sorts in place)."""
        from ._sorting import sort

        return sort(self, axis, kind, order)

    def argsort(self, axis: int | None = -1, kind: str | None = None,  # type: ignore[override]
                order: Any = None) -> ndarray:
        """The int64 indices that sort the array along ``axis``."""
        from ._sorting import argsort

        return argsort(self, axis, kind, order)

    def round(self, decimals: int = 0, out: Any = None,  # type: ignore[override]
              **kwargs: Any) -> ndarray:
        """The values rounded to ``decimals`` places, halves to even (NumPy's ``round``)."""
        from ._math import around

        return around(self, decimals, out, **kwargs)

    def nonzero(self) -> tuple[ndarray, ...]:
        """The indices of the non-zero elements, one int64 array per dimension."""
        from ._sorting import nonzero

        return nonzero(self)

    def repeat(self, repeats: int, axis: int | None = None) -> ndarray:  # type: ignore[override]
        """Each element repeated ``repeats`` times (along ``axis``, or flattened)."""
        from ._manipulation import repeat

        return repeat(self, repeats, axis)

    def take(self, indices: Any, axis: int | None = None) -> ndarray:  # type: ignore[override]
        """Elements at ``indices`` along ``axis`` (of the flattened array when None)."""
        from ._manipulation import take

        return take(self, indices, axis)

    # -- reductions ------------------------------------------------------------------------
    def sum(self, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False) -> ndarray:
        """The sum over ``axis`` (all axes when None)."""
        from ._reductions import sum as _sum

        return _sum(self, axis, dtype, out, keepdims)

    def prod(self, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False) -> ndarray:
        """The product over ``axis`` (all axes when None)."""
        from ._reductions import prod

        return prod(self, axis, dtype, out, keepdims)

    def mean(self, axis: Any = None, dtype: Any = None, out: Any = None,
             keepdims: bool = False) -> ndarray:
        """The mean over ``axis`` (all axes when None)."""
        from ._reductions import mean

        return mean(self, axis, dtype, out, keepdims)

    def max(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> ndarray:
        """The largest value over ``axis`` (all axes when None)."""
        from ._reductions import max as _max

        return _max(self, axis, out, keepdims)

    def min(self, axis: Any = None, out: Any = None, keepdims: bool = False) -> ndarray:
        """The smallest value over ``axis`` (all axes when None)."""
        from ._reductions import min as _min

        return _min(self, axis, out, keepdims)

    def argmax(self, axis: int | None = None, out: Any = None) -> ndarray:
        """The index (int64) of the largest value along ``axis`` (of the flattened array
        when None)."""
        from ._reductions import argmax

        return argmax(self, axis, out)

    def argmin(self, axis: int | None = None, out: Any = None) -> ndarray:
        """The index (int64) of the smallest value along ``axis``."""
        from ._reductions import argmin

        return argmin(self, axis, out)

    def std(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
            keepdims: bool = False) -> ndarray:
        """The standard deviation over ``axis``."""
        from ._reductions import std

        return std(self, axis, dtype, out, ddof, keepdims)

    def var(self, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
            keepdims: bool = False) -> ndarray:
        """The variance over ``axis``."""
        from ._reductions import var

        return var(self, axis, dtype, out, ddof, keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> ndarray:
        """Whether every element (over ``axis``) is true."""
        from ._reductions import all as _all

        return _all(self, axis, keepdims=keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> ndarray:
        """Whether some element (over ``axis``) is true."""
        from ._reductions import any as _any

        return _any(self, axis, keepdims=keepdims)

    def cumsum(self, axis: int | None = None, dtype: Any = None, out: Any = None) -> ndarray:
        """The running sum along ``axis`` (of the flattened array when None)."""
        from ._differences import cumsum

        return cumsum(self, axis, dtype, out)

    def dot(self, b: Any) -> ndarray:
        """NumPy's ``dot(self, b)``."""
        from ._linalg import dot

        return dot(self, b)

    # -- copies and types --------------------------------------------------------------------
    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe",  # type: ignore[override]
               subok: bool = True, copy: bool = True) -> ndarray:
        """A copy converted to ``dtype`` (this array when ``copy=False`` and it has it)."""
        dtype = onp.dtype(dtype)
        if not copy and dtype == self._dtype:
            return self
        return wrap(NDArray.astype(self, dtype))

    def copy(self, order: str = "C") -> ndarray:  # type: ignore[override]
        """A new array with the same values, on the same device (C order only)."""
        if order != "C":
            raise OrderNotSupportedError(f"copy(order={order!r}): dagnet.numpy arrays are "
                                         f"C-ordered only; use order='C'")
        return wrap(NDArray.copyto(self, self.context))

    def copyto(self, other: Any) -> Any:
        """Copy into ``other`` (an array of the same shape) or a new array on the device
        ``other``; returns the destination."""
        result = NDArray.copyto(self, other)
        return result if isinstance(other, NDArray) else wrap(result)

    def as_in_context(self, context: Any) -> ndarray:
        """This array if it is on ``context``, else a copy there."""
        return self if self.context == context else self.copyto(context)

    as_in_ctx = as_in_context

    def detach(self) -> ndarray:
        """The same memory as an array outside any graph."""
        return wrap(NDArray.detach(self))

    # -- autograd ---------------------------------------------------------------------------
    @property
    def grad(self) -> ndarray | None:  # type: ignore[override]
        """The gradient buffer of an array that called ``attach_grad`` (else None)."""
        grad = NDArray.grad.fget(self)
        return None if grad is None else wrap(grad)

    # -- arithmetic --------------------------------------------------------------------------
    def __add__(self, other: Any) -> Any:
        return _binary("add", self, other)

    def __radd__(self, other: Any) -> Any:
        return _binary("add", other, self)

    def __sub__(self, other: Any) -> Any:
        return _binary("subtract", self, other)

    def __rsub__(self, other: Any) -> Any:
        return _binary("subtract", other, self)

    def __mul__(self, other: Any) -> Any:
        return _binary("multiply", self, other)

    def __rmul__(self, other: Any) -> Any:
        return _binary("multiply", other, self)

    def __truediv__(self, other: Any) -> Any:
        return _binary("true_divide", self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return _binary("true_divide", other, self)

    def __floordiv__(self, other: Any) -> Any:
        return _binary("floor_divide", self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return _binary("floor_divide", other, self)

    def __mod__(self, other: Any) -> Any:
        return _binary("mod", self, other)

    def __rmod__(self, other: Any) -> Any:
        return _binary("mod", other, self)

    def __pow__(self, other: Any) -> Any:
        return _binary("power", self, other)

    def __rpow__(self, other: Any) -> Any:
        return _binary("power", other, self)

    def __matmul__(self, other: Any) -> Any:
        from ._linalg import matmul

        return matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        from ._linalg import matmul

        return matmul(other, self)

    def __iadd__(self, other: Any) -> Any:
        return _inplace(self, _binary("add", self, other))

    def __isub__(self, other: Any) -> Any:
        return _inplace(self, _binary("subtract", self, other))

    def __imul__(self, other: Any) -> Any:
        return _inplace(self, _binary("multiply", self, other))

    def __itruediv__(self, other: Any) -> Any:
        return _inplace(self, _binary("true_divide", self, other))

    def __imod__(self, other: Any) -> Any:
        return _inplace(self, _binary("mod", self, other))

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        if other is None:
            return False
        return _binary("equal", self, other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        if other is None:
            return True
        return _binary("not_equal", self, other)

    def __gt__(self, other: Any) -> Any:
        return _binary("greater", self, other)

    def __ge__(self, other: Any) -> Any:
        return _binary("greater_equal", self, other)

    def __lt__(self, other: Any) -> Any:
        return _binary("less", self, other)

    def __le__(self, other: Any) -> Any:
        return _binary("less_equal", self, other)

    def __neg__(self) -> ndarray:
        return wrap(nd.negative(self))

    def __pos__(self) -> ndarray:
        return self.copy()

    def __abs__(self) -> ndarray:
        return wrap(nd.abs(self))

    __hash__ = NDArray.__hash__


def _binary(name: str, lhs: Any, rhs: Any) -> Any:
    from . import _elementwise

    return getattr(_elementwise, name)(lhs, rhs)


def _inplace(target: ndarray, value: ndarray) -> ndarray:
    """``target`` with ``value`` (of its shape) written into it: ``x += y`` and the like."""
    if value.shape != target.shape:
        raise ShapeError(f"in-place operation: the result has shape {value.shape} but the array "
                         f"has shape {target.shape}")
    dest = target if target.ndim else NDArray.reshape(target, (1,))
    source = value if value.ndim else NDArray.reshape(value, (1,))
    NDArray.__setitem__(dest, slice(None), source)
    return target


def _plain_ints(key: Any) -> Any:
    """``key`` with numpy integer scalars as Python ints (what basic indexing reads)."""
    if isinstance(key, tuple):
        return tuple(int(k) if isinstance(k, onp.integer) else k for k in key)
    return int(key) if isinstance(key, onp.integer) else key


def _has_new_axis(key: Any) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return any(k is None for k in items)


def _drop_new_axes(key: Any) -> Any:
    items = key if isinstance(key, tuple) else (key,)
    return tuple(k for k in items if k is not None)


def _bool_to_int(key: Any, shape: tuple[int, ...]) -> Any:
    """A key with its boolean masks replaced by the integer indices they select."""
    items = key if isinstance(key, tuple) else (key,)
    out: list[Any] = []
    axis = 0  # the array axis the next item indexes (unknown after an Ellipsis)
    for item in items:
        if isinstance(item, (bool, onp.bool_)) or (isinstance(item, onp.ndarray)
                                                   and item.dtype == onp.bool_ and not item.ndim):
            raise IndexError("a scalar boolean inside an index tuple is not supported by "
                             "dagnet.numpy; index with x[None] (True) or drop the selection")
        if isinstance(item, onp.ndarray) and item.dtype == onp.bool_:
            covered = shape[axis:axis + item.ndim] if axis is not None else item.shape
            if covered != item.shape:
                raise IndexError(f"boolean index of shape {item.shape} does not match the "
                                 f"indexed dimensions {covered} of an array of shape {shape}")
            out.extend(onp.nonzero(item))
        else:
            out.append(item)
        if item is Ellipsis:
            axis = None
        elif axis is not None and item is not None:
            axis += item.ndim if isinstance(item, onp.ndarray) and item.dtype == onp.bool_ \
                else 1
    return tuple(out) if len(out) > 1 or isinstance(key, tuple) else out[0]


# The legacy NDArray's fluent methods NumPy's ndarray does not define (``x.exp()``,
# ``x.softmax()`` ...): still there, as dagnet code written for NDArray calls them, with
# their results as np arrays.
class _FluentResultAsNumpy:
    """A legacy fluent method whose result is made a ``dagnet.numpy.ndarray``."""

    def __init__(self, name: str):
        self.name = name
        self.__doc__ = f"``x.{name}(...)``: the legacy operator, its result an np array."

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        method = getattr(NDArray, self.name).__get__(obj, objtype)

        def call(*args: Any, **kwargs: Any) -> Any:
            return wrap(method(*args, **kwargs))

        return call


for _name in [n for n in dir(NDArray) if not n.startswith("_") and n not in vars(ndarray)
              and type(vars(NDArray).get(n)).__name__ == "_Fluent"]:
    setattr(ndarray, _name, _FluentResultAsNumpy(_name))
del _name


def is_scalar(value: Any) -> bool:
    """Whether ``value`` is a Python or numpy scalar (not an array)."""
    return isinstance(value, _SCALARS)
