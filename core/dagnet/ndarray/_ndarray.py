"""The asynchronous n-dimensional array (MXNet's ``NDArray``).

An NDArray is a view -- byte offset, shape, strides, dtype -- of a
:class:`~dagnet.runtime.Chunk`: a storage block with the engine
variable that orders every function reading or writing it.  Operators and
assignments are pushed to the engine and return at once; reading values
(``asnumpy``, ``asscalar``, ``repr``) waits for the functions that write
them.  Views made by indexing share their parent's chunk, so a write
through a view is ordered with everything else that touches the parent.
"""

from __future__ import annotations

import ctypes
import functools
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import ShapeError
from .._handles import handle_of, resolve
from ..context import Context
from ..runtime import (
    GRAD_REQS,
    Chunk,
    Device,
    Variable,
    current_engine,
    device_of,
    hooks,
    in_graph,
    mark_variable,
    mode,
    new_chunk,
)
from ._indexing import basic_view, c_strides, is_basic_key, is_contiguous
from ._reshape import infer_reshape

__all__ = ["NDArray", "new_array", "wrap_chunk"]

_NUMBER = (int, float, np.integer, np.floating, np.bool_)


class NDArray:
    """An array on a device whose operations run asynchronously through the engine.

    Create one with :func:`dagnet.nd.array`, :func:`~dagnet.nd.zeros` and the
    other creation functions, or as the result of an operator.  Arithmetic
    (``+ - * / % **``, comparisons, unary ``-`` and ``abs``) dispatches to the
    registered operators by MXNet's names (``broadcast_add``, ``_plus_scalar``,
    ...); in-place forms (``+=`` ...) write into this array through the engine.

    Basic indexing with integers and slices returns a view sharing this
    array's memory when the selected part is contiguous, and a copy
    otherwise -- as MXNet 1.x does.  Assignment (``x[key] = value``) always
    writes into this array.
    """

    # ``__dict__`` lets front ends attach state (autograd) without changing the layout.
    __slots__ = ("_chunk", "_offset", "_shape", "_dtype", "_strides", "_data",
                 "__weakref__", "__dict__")
    __array_priority__ = 1000.0  # numpy defers ``ndarray + NDArray`` to us

    def __new__(cls, handle: Any = None, writable: bool = True) -> NDArray:
        if handle is None:  # unpickling; a call is refused by __init__
            return super().__new__(cls)
        # MXNet's NDArray(handle): the array an emulated C entry point handed out
        return resolve(handle, cls, "NDArray(handle)")

    def __init__(self, handle: Any = None, writable: bool = True):
        if handle is None:
            raise TypeError("create NDArrays with dagnet.nd.array, zeros, ones, full, arange "
                            "or empty, or as the result of an operator")

    @property
    def handle(self) -> ctypes.c_void_p:
        """A handle standing for this array (MXNet's ``NDArrayHandle``), for code that passes
        it to ``mxnet.base._LIB``'s emulated entry points; ``NDArray(handle=h)`` takes it
        back."""
        return ctypes.c_void_p(handle_of(self))

    # -- layout ----------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The dimensions, a tuple of ints."""
        return self._shape

    @property
    def dtype(self) -> type:
        """The element type as numpy's scalar type (``numpy.float32``), as MXNet returns it."""
        return self._dtype.type

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self._shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._shape)

    @property
    def context(self) -> Context:
        """The device the array lives on."""
        return self._chunk.dev.ctx

    ctx = context

    @property
    def stype(self) -> str:
        """The storage type: ``'default'`` (dense); sparse arrays
        (:mod:`dagnet.ndarray.sparse`) say ``'row_sparse'`` or ``'csr'``."""
        return "default"

    def _xp(self) -> Any:
        """This view as an array of the device's array module (built once)."""
        data = self._data
        if data is None:
            data = self._data = _build_view(self._chunk, self._offset, self._shape, self._dtype,
                                            self._strides)
        return data

    @property
    def _var(self) -> Any:
        """The engine variable guarding this array's memory (shared with its views)."""
        return self._chunk.var

    # -- synchronization and host access -----------------------------------------
    def wait_to_read(self) -> None:
        """Block until every pending write to this array has finished (raising its failure)."""
        current_engine().wait_for_var(self._chunk.var)

    def as_np_ndarray(self) -> Any:
        """This array as an ``mx.np.ndarray``: the same memory and autograd state, with
        NumPy's semantics (MXNet's ``NDArray.as_np_ndarray``)."""
        from ..numpy import as_np_ndarray

        return as_np_ndarray(self)

    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the values, after pending writes finish."""
        if mode.recording:
            hooks.host_read(self)
        current_engine().wait_for_var(self._chunk.var)
        dev = self._chunk.dev
        if dev.numpy:
            return np.array(self._xp(), copy=True)
        return dev.backend.to_host(self._xp())

    def asscalar(self) -> Any:
        """The single value of a one-element array, as a numpy scalar."""
        if self.size != 1:
            raise ValueError(f"The current array is not a scalar: its shape is {self._shape}")
        return self.asnumpy().reshape(-1)[0]

    def tolist(self) -> list:
        """The values as nested Python lists."""
        return self.asnumpy().tolist()

    def __repr__(self) -> str:
        shape = "x".join(str(d) for d in self._shape)
        return f"\n{self.asnumpy()}\n<{type(self).__name__} {shape} @{self.context}>"

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of unsized object")
        return self._shape[0]

    def __iter__(self):
        for index in range(len(self)):
            yield self[index]

    def __bool__(self) -> bool:
        size = self.size
        if size == 1:
            return bool(self.asnumpy().reshape(-1)[0])
        if size == 0:  # MXNet 1.x: False, with a warning that this will become an error
            warnings.warn("the truth value of an empty NDArray is ambiguous; it is False now, "
                          "as in MXNet 1.x, but test x.size instead", DeprecationWarning,
                          stacklevel=2)
            return False
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    __hash__ = object.__hash__

    def __reduce__(self) -> tuple:
        return (_unpickle, (self.asnumpy(), str(self.context)))

    def __getstate__(self) -> dict[str, bytearray]:
        """MXNet's pickled state: ``{'handle': the raw bytes of the array}``."""
        from ._io import dumps_raw

        return {"handle": bytearray(dumps_raw(self))}

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Become the array of a state :meth:`__getstate__` (or MXNet) produced, on the
        CPU (the device a state names may not be here)."""
        from ._creation import array
        from ._io import loads_raw

        host = loads_raw(bytes(state["handle"]))
        fresh = array(host, dtype=host.dtype)
        for name in ("_chunk", "_offset", "_shape", "_dtype", "_strides", "_data"):
            setattr(self, name, getattr(fresh, name))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """numpy's view of the values (``np.asarray(x)``): a host copy, as ``asnumpy``."""
        host = self.asnumpy()
        return host if dtype is None else host.astype(dtype, copy=False)

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc: Sequence[Any], shape: Sequence[int]) -> bool:
        """Whether basic index ``slc`` (slices and ints) of an array of ``shape`` selects
        memory numpy would call C-contiguous."""
        dims = []  # (length, stride in elements) of the view's dimensions
        stride = 1
        strides = []
        for n in reversed(shape):
            strides.append(stride)
            stride *= n
        strides.reverse()
        key = list(slc) + [slice(None)] * (len(shape) - len(slc))
        for item, n, base in zip(key, shape, strides):
            if isinstance(item, slice):
                start, stop, step = item.indices(n)
                dims.append((len(range(start, stop, step)), base * step))
        if any(length == 0 for length, _ in dims):
            return True
        expected = 1
        for length, step in reversed(dims):
            if length != 1:
                if step != expected:
                    return False
                expected *= length
        return True

    # -- indexing ----------------------------------------------------------------
    def _strides_or_c(self) -> tuple[int, ...]:
        strides = self._strides
        return strides if strides is not None else c_strides(self._shape, self._dtype.itemsize)

    def _view(self, key: Any) -> NDArray:
        """The basic-indexing view ``key`` selects; it may be strided (internal use)."""
        if not isinstance(key, tuple) and key.__class__ is int and self._strides is None \
                and self._shape and -self._shape[0] <= key < self._shape[0]:
            # x[i]: the common case, without the general arithmetic
            inner = self._shape[1:] or (1,)
            step = math.prod(self._shape[1:]) * self._dtype.itemsize
            return wrap_chunk(self._chunk, self._offset + (key % self._shape[0]) * step, inner,
                              self._dtype)
        offset, shape, strides = basic_view(self._shape, self._strides_or_c(), key)
        if not shape and self._shape:
            shape, strides = (1,), (self._dtype.itemsize,)  # MXNet: x[i, j] has shape (1,)
        itemsize = self._dtype.itemsize
        layout = None if is_contiguous(shape, strides, itemsize) else strides
        return wrap_chunk(self._chunk, self._offset + offset, shape, self._dtype, layout)

    def __getitem__(self, key: Any) -> NDArray:
        """Basic indexing gives a view when the part is contiguous, else a copy (as MXNet);
        integer arrays (NDArray, list, numpy) select along axes as numpy does, into a copy."""
        if mode.recording:
            views = _recorded_views(self)
            if views is not None:
                return views.getitem(self, key)
        if key.__class__ is slice and key.step is None and self._strides is None and self._shape:
            # x[a:b] on a contiguous array (batches): rows a..b, always a view
            start, stop, _ = key.indices(self._shape[0])
            inner = self._shape[1:]
            step = math.prod(inner) * self._dtype.itemsize
            return wrap_chunk(self._chunk, self._offset + start * step,
                              (max(0, stop - start),) + inner, self._dtype)
        if is_basic_key(key):
            view = self._view(key)
            return view if view._strides is None else view.copy()
        return _invoke.gather(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        """Write ``value`` (scalar, numpy array, list or NDArray, broadcast to the part)
        into the part ``key`` selects, through the engine."""
        if is_basic_key(key):
            target = self if _is_everything(key) else self._view(key)
            _invoke.assign(target, value)
        else:
            _invoke.scatter(self, key, value)

    # -- shape changes -------------------------------------------------------------
    def flatten(self, inplace: bool = False) -> NDArray:
        """The array as 2-D: the first axis kept, the others merged (``Flatten``);
        ``inplace=True`` gives a view of the same memory instead of a copy."""
        if inplace and self.ndim >= 1:
            return self.reshape(self._shape[0], math.prod(self._shape[1:]))
        return _frontend.call("Flatten", self)

    def expand_dims(self, axis: int, inplace: bool = False) -> NDArray:
        """A new axis of length 1 at ``axis`` (``expand_dims``); ``inplace=True`` gives a
        view of the same memory instead of a copy."""
        ndim = self.ndim
        if inplace and isinstance(axis, int) and -ndim - 1 <= axis <= ndim:
            at = axis if axis >= 0 else axis + ndim + 1
            return self.reshape(self._shape[:at] + (1,) + self._shape[at:])
        return _frontend.call("expand_dims", self, axis=axis)  # also what explains a bad axis

    def squeeze(self, axis: Any = None, inplace: bool = False) -> NDArray:
        """The array without axes of length 1 (all of them, or ``axis``: an int or a
        tuple) (``squeeze``); ``inplace=True`` gives a view of the same memory instead of a
        copy."""
        if inplace:
            axes = (axis,) if isinstance(axis, int) else axis
            ndim = self.ndim
            if axes is None:
                kept = [d for d in self._shape if d != 1]
                return self.reshape(tuple(kept) if kept else (1,))
            if all(isinstance(a, int) and -ndim <= a < ndim for a in axes):
                drop = {a % ndim for a in axes}
                if all(self._shape[a] == 1 for a in drop):
                    kept = [d for i, d in enumerate(self._shape) if i not in drop]
                    return self.reshape(tuple(kept) if kept else (1,))
        return _frontend.call("squeeze", self, axis=axis)  # also what explains a bad axis

    def reshape(self, *shape: Any, **kwargs: Any) -> NDArray:
        """A view with a new shape, written with MXNet's codes (0 copies a dimension, -1
        infers one, -2 copies the rest, -3 merges two, -4 splits one; ``reverse=True``
        matches from the right).  ``x.reshape(2, 3)``, ``x.reshape((2, 3))`` and
        ``x.reshape(shape=(2, 3))`` are the same."""
        reverse = bool(kwargs.pop("reverse", False))
        if "shape" in kwargs:
            if shape:
                raise TypeError("reshape() got the shape both positionally and as shape=")
            shape = kwargs.pop("shape")
        elif len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = shape[0]
        if kwargs:
            raise TypeError(f"reshape() got unexpected keyword argument(s) {', '.join(kwargs)}")
        new_shape = infer_reshape(self._shape, shape, reverse)
        if mode.recording:
            views = _recorded_views(self)
            if views is not None:
                return views.reshape(self, new_shape)
        source = self if self._strides is None else self.copy()
        return wrap_chunk(source._chunk, source._offset, new_shape, source._dtype)

    @property
    def T(self) -> NDArray:
        """The transpose, a copy with the axes reversed (1-D arrays are returned as they are)."""
        if self.ndim < 2:
            return self
        return _frontend.call("transpose", self)

    def broadcast_to(self, shape: Sequence[int]) -> NDArray:
        """Broadcast to ``shape`` (leading dimensions are added as needed)."""
        shape = tuple(int(d) for d in shape)
        if len(shape) < self.ndim:
            raise ShapeError(f"cannot broadcast an array of shape {self._shape} to {shape}: "
                             f"the target has fewer dimensions")
        padded = (1,) * (len(shape) - self.ndim) + self._shape
        for have, want in zip(padded, shape):
            if have != want and have != 1:
                raise ShapeError(f"cannot broadcast an array of shape {self._shape} to {shape}")
        source = self if padded == self._shape else self.reshape(padded)
        return _frontend.call("broadcast_to", source, shape=shape)

    # -- copies ------------------------------------------------------------------
    def copy(self) -> NDArray:
        """A new array with the same values, on the same device."""
        return self.copyto(self.context)

    def copyto(self, other: NDArray | Context) -> NDArray:
        """Copy into ``other`` (an NDArray of the same shape: values are converted to its
        dtype) or into a new array on the device ``other``; returns the destination."""
        if isinstance(other, Context):
            dest = new_array(self._shape, self._dtype, device_of(other))
        elif isinstance(other, NDArray):
            if other is self:
                return self
            if other._shape != self._shape:
                raise ShapeError(
                    f"copyto: the destination has shape {other._shape} but the source has "
                    f"shape {self._shape}; they must match")
            if other.__class__ is not NDArray and other.stype != "default":
                from ._sparse import _cast_into  # into sparse storage: a cast

                _cast_into(self, other)
                return other
            dest = other
        else:
            raise TypeError(f"copyto: expected an NDArray or a Context, got "
                            f"{type(other).__name__} {other!r}")
        if mode.recording and dest._chunk.dev is self._chunk.dev:
            views = _recorded_views(self)
            if views is not None:
                return views.copy(self, dest)
        _invoke.push_copy(self, dest)
        return dest

    def as_in_context(self, context: Context) -> NDArray:
        """This array if it is on ``context``, else a copy there."""
        if self.context == context:
            return self
        return self.copyto(context)

    def astype(self, dtype: Any, copy: bool = True) -> NDArray:
        """A copy converted to ``dtype`` (or this array, when ``copy=False`` and it has it)."""
        dtype = np.dtype(dtype)
        if not copy and dtype == self._dtype:
            return self
        if mode.recording:
            views = _recorded_views(self)
            if views is not None:
                return views.astype(self, dtype)
        dest = new_array(self._shape, dtype, self._chunk.dev)
        _invoke.push_copy(self, dest)
        return dest

    def tostype(self, stype: str) -> NDArray:
        """A copy with storage type ``stype``: ``'default'`` (dense), ``'row_sparse'`` or
        ``'csr'`` (2-D only); see :mod:`dagnet.ndarray.sparse`."""
        from ._sparse import cast_storage

        return cast_storage(self, stype)

    # -- autograd ----------------------------------------------------------------
    def attach_grad(self, grad_req: str = "write", stype: str | None = None) -> None:
        """Ask for this array's gradient: a zero-filled buffer (``.grad``) that
        ``backward`` writes (``grad_req='write'``), adds to (``'add'``) or leaves alone
        (``'null'``); ``stype`` ('row_sparse', 'csr') asks for a sparse buffer, which
        receives the gradient cast to its storage type."""
        if stype is not None and stype != "default":
            from ._sparse import _attach_grad

            _attach_grad(self, grad_req, stype)
            return
        if grad_req not in GRAD_REQS:
            raise ValueError(f"attach_grad: grad_req {grad_req!r} is not one of "
                             f"{', '.join(GRAD_REQS)}")
        grad = new_array(self._shape, self._dtype, self._chunk.dev)
        _invoke.assign(grad, 0)
        mark_variable(self, grad, grad_req)

    @property
    def grad(self) -> NDArray | None:
        """The gradient buffer of an array that called ``attach_grad`` (else None)."""
        entry = self.__dict__.get("_ag")
        return entry[0].grad if entry is not None and entry[0].__class__ is Variable else None

    @property
    def _fresh_grad(self) -> bool:
        """Whether a backward pass wrote this variable's gradient since the flag was last
        cleared (MXNet's ``_fresh_grad``; False for an array without a gradient)."""
        entry = self.__dict__.get("_ag")
        return entry is not None and entry[0].__class__ is Variable and entry[0].fresh

    @_fresh_grad.setter
    def _fresh_grad(self, value: bool) -> None:
        entry = self.__dict__.get("_ag")
        if entry is None or entry[0].__class__ is not Variable:
            raise AttributeError("_fresh_grad can be set only on an array with a gradient: "
                                 "call attach_grad() (or autograd.mark_variables) first")
        entry[0].fresh = bool(value)

    def backward(self, out_grad: NDArray | None = None, retain_graph: bool = False,
                 train_mode: bool = True) -> None:
        """Differentiate this recorded array (head gradient ``out_grad``, default ones)
        into the ``.grad`` of every variable it depends on (see ``dagnet.autograd.backward``)."""
        hooks.backward([self], None if out_grad is None else [out_grad],
                       retain_graph=retain_graph, train_mode=train_mode)

    def split_v2(self, indices_or_sections: Any, axis: int = 0,
                 squeeze_axis: bool = False) -> Any:
        """``x.split_v2(...)`` is :func:`dagnet.nd.split_v2` of ``x`` (numpy-style split)."""
        from ._numpy_style import split_v2

        return split_v2(self, indices_or_sections, axis=axis, squeeze_axis=squeeze_axis)

    def to_dlpack_for_read(self) -> Any:
        """A DLPack capsule of this array for a reader (:func:`dagnet.nd.to_dlpack_for_read`)."""
        from ._dlpack import to_dlpack_for_read

        return to_dlpack_for_read(self)

    def to_dlpack_for_write(self) -> Any:
        """A DLPack capsule of this array for a writer (:func:`dagnet.nd.to_dlpack_for_write`)."""
        from ._dlpack import to_dlpack_for_write

        return to_dlpack_for_write(self)

    def detach(self) -> NDArray:
        """The same memory as an array outside any graph (no gradient flows through it)."""
        return wrap_chunk(self._chunk, self._offset, self._shape, self._dtype, self._strides,
                          self._data)

    # -- arithmetic: operators by MXNet's names ------------------------------------
    def __add__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_add", "_plus_scalar")

    __radd__ = __add__

    def __iadd__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_add", "_plus_scalar", out=self)

    def __sub__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_sub", "_minus_scalar")

    def __rsub__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_sub", "_rminus_scalar", reflected=True)

    def __isub__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_sub", "_minus_scalar", out=self)

    def __mul__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_mul", "_mul_scalar")

    __rmul__ = __mul__

    def __imul__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_mul", "_mul_scalar", out=self)

    def __truediv__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_div", "_div_scalar")

    def __rtruediv__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_div", "_rdiv_scalar", reflected=True)

    def __itruediv__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_div", "_div_scalar", out=self)

    def __mod__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_mod", "_mod_scalar")

    def __rmod__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_mod", "_rmod_scalar", reflected=True)

    def __imod__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_mod", "_mod_scalar", out=self)

    def __pow__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_power", "_power_scalar")

    def __rpow__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_power", "_rpower_scalar", reflected=True)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return _invoke.binary(self, other, "broadcast_equal", "_equal_scalar", strict=False)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return _invoke.binary(self, other, "broadcast_not_equal", "_not_equal_scalar",
                              strict=False)

    def __gt__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_greater", "_greater_scalar")

    def __ge__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_greater_equal", "_greater_equal_scalar")

    def __lt__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_lesser", "_lesser_scalar")

    def __le__(self, other: Any) -> Any:
        return _invoke.binary(self, other, "broadcast_lesser_equal", "_lesser_equal_scalar")

    def __neg__(self) -> NDArray:
        return _invoke.unary(self, "negative")

    def __abs__(self) -> NDArray:
        return _invoke.unary(self, "abs")


class _Fluent:
    """``x.sum(axis=1)`` calls the operator ``sum`` with ``x`` as its first input."""

    def __init__(self, op_name: str):
        self.op_name = op_name
        self.__doc__ = f"``x.{op_name}(...)`` is ``dagnet.nd.{op_name}(x, ...)``."

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self
        return functools.partial(_frontend.call, self.op_name, obj)


# MXNet's fluent methods: each is the operator of the same name applied to the array.
_FLUENT = """
    abs arccos arccosh arcsin arcsinh arctan arctanh argmax argmax_channel argmin argsort
    broadcast_axes broadcast_like cbrt ceil clip cos cosh degrees depth_to_space diag exp
    expm1 fix flip floor log log10 log1p log2 log_softmax max mean min
    nanprod nansum norm one_hot ones_like pad pick prod radians rcbrt reciprocal relu repeat
    reshape_like rint round rsqrt shape_array sigmoid sign sin sinh size_array slice slice_axis
    slice_like softmax softmin sort space_to_depth split sqrt square sum swapaxes take
    tan tanh tile topk transpose trunc zeros_like
""".split()
for _name in _FLUENT:
    setattr(NDArray, _name, _Fluent(_name))
del _name


# -- construction ------------------------------------------------------------------
_new = object.__new__


def wrap_chunk(chunk: Chunk, offset: int, shape: tuple[int, ...], dtype: np.dtype,
               strides: tuple[int, ...] | None = None, data: Any = None) -> NDArray:
    """An NDArray viewing ``chunk`` (``strides`` None: C-contiguous; ``data``: its xp view)."""
    array = _new(NDArray)
    array._chunk = chunk
    array._offset = offset
    array._shape = shape
    array._dtype = dtype
    array._strides = strides
    array._data = data
    return array


def new_array(shape: tuple[int, ...], dtype: np.dtype, dev: Device, eng: Any = None) -> NDArray:
    """A new, uninitialised, C-contiguous array on ``dev`` with its own chunk."""
    nbytes = math.prod(shape) * dtype.itemsize
    chunk = new_chunk(nbytes, dev, eng)
    data = (np.ndarray(shape, dtype, chunk.handle.data) if dev.numpy
            else _build_view(chunk, 0, shape, dtype, None))
    return wrap_chunk(chunk, 0, shape, dtype, None, data)


def _build_view(chunk: Chunk, offset: int, shape: tuple[int, ...], dtype: np.dtype,
                strides: tuple[int, ...] | None) -> Any:
    raw = chunk.handle.data
    dev = chunk.dev
    if 0 in shape:  # no element to reach: where in the chunk does not matter (it may be past it)
        offset, strides = 0, None
    if dev.numpy:
        return np.ndarray(shape, dtype, raw, offset, strides)
    itemsize = dtype.itemsize
    if strides is None:
        nbytes = math.prod(shape) * itemsize
        return raw[offset:offset + nbytes].view(dtype).reshape(shape)
    flat = raw[:chunk.nbytes - chunk.nbytes % itemsize].view(dtype)
    return dev.xp.lib.stride_tricks.as_strided(flat[offset // itemsize:], shape, strides)


def _recorded_views(array: NDArray) -> Any:
    """The recorder's differentiable views when ``array`` is in a live graph (else None);
    only asked while recording."""
    return hooks.views if in_graph(array) else None


def _is_everything(key: Any) -> bool:
    return (isinstance(key, slice) and key == slice(None)) or key is Ellipsis


def _unpickle(values: np.ndarray, ctx_text: str) -> NDArray:
    from ._creation import array, parse_context

    try:
        ctx = parse_context(ctx_text)
        device_of(ctx)
    except Exception:  # the device is not here: load on the CPU
        from ..context import cpu

        ctx = cpu()
    return array(values, ctx=ctx, dtype=values.dtype)


from . import _frontend, _invoke  # noqa: E402  (they use NDArray; imported last)
