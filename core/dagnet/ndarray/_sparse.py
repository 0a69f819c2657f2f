"""Sparse arrays (MXNet's ``RowSparseNDArray`` and ``CSRNDArray``) on the engine.

Design
------
A sparse array is an :class:`~dagnet.ndarray.NDArray` subclass with a
logical ``shape`` and ``dtype`` known at once, and an engine variable (the
``var`` of a zero-byte chunk, so waiting, contexts and autograd's write
checks work as for any array).  Its storage is a set of *component* device
arrays: the values (``data``) and the auxiliary index arrays (``indices``
for row_sparse; ``indptr`` and ``indices`` for csr, MXNet's aux order).
How many values a result has is only known when it is computed, so the
components are not fixed at creation: every function that produces a
sparse array is pushed to the engine with the array's variable among those
it writes, and *replaces* the components when it runs; every function that
reads one lists the variable among those it reads and takes the components
when it runs.  The engine's ordering of reads and writes on that one
variable is therefore the ordering of the whole sparse array, exactly as
for a dense array.  Reading from Python (``.data``, ``.indices``,
``asnumpy``) waits for the variable first, then copies (MXNet's
``data``/``indices`` are deep copies too).

A sparse array has no dense view (its ``_data`` slot is never set), so the
imperative path's fast lane fails over at once to :func:`dispatch`: the
operator's registered sparse implementation when there is one
(:mod:`._storage`), else MXNet's *storage fallback* -- the inputs are made
dense, the dense kernel runs, the result is dense (or cast into a sparse
``out=``).  While autograd records, every call takes the fallback, and the
densifying casts are recorded ``cast_storage`` calls, so gradients flow back
to sparse variables; a gradient buffer of sparse storage receives the dense
gradient cast to its storage type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import DagnetError, ShapeError
from ..context import Context
from ..engine import FnProperty
from ..runtime import (
    GRAD_REQS,
    current_engine,
    device_of,
    hooks,
    in_graph,
    mark_variable,
    mode,
    new_chunk,
    stream_scope,
)
from ._ndarray import NDArray, new_array
from ._storage import check_storage, check_stype, storage_impl

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "SparseStorageError",
           "new_sparse", "cast_storage", "dispatch", "push_sparse", "components",
           "set_components", "components_on_host", "is_sparse", "to_dense_array",
           "write_gradient", "check_components", "AUX_DTYPE"]

_NORMAL = FnProperty.NORMAL
AUX_DTYPE = np.dtype(np.int64)  # MXNet's index type for indices and indptr


class SparseStorageError(DagnetError, ValueError):
    """An operation that sparse storage does not support (or malformed sparse components)."""


# -- the classes -------------------------------------------------------------------------
class BaseSparseNDArray(NDArray):
    """The common base of :class:`RowSparseNDArray` and :class:`CSRNDArray`.

    Operations push through the engine like a dense array's; operators
    without a sparse implementation compute on a dense copy and return a
    dense result (MXNet's storage fallback).  ``size`` and ``reshape`` are
    undefined for sparse arrays, as in MXNet.
    """

    __slots__ = ("_values", "_aux")
    _STYPE = ""
    _AUX_NAMES: tuple[str, ...] = ()

    @property
    def stype(self) -> str:
        """The storage type: ``'row_sparse'`` or ``'csr'``."""
        return self._STYPE

    @property
    def size(self) -> int:
        """Undefined for a sparse array (MXNet raises NotImplementedError as well)."""
        raise NotImplementedError("size is ambiguous for a sparse array; use .shape, or "
                                  ".data.size for the number of stored values")

    def _xp(self) -> Any:
        raise SparseStorageError(
            f"a {type(self).__name__} has no dense view; convert it with tostype('default') "
            f"first")

    @property
    def _num_aux(self) -> int:
        return len(self._AUX_NAMES)

    @property
    def _aux_types(self) -> list[type]:
        return [AUX_DTYPE.type] * len(self._AUX_NAMES)

    def _aux_type(self, i: int) -> type:
        return AUX_DTYPE.type

    # as MXNet's sparse arrays: with an array of the same shape ``+``, ``-`` and ``*`` take
    # the elemwise_* operators (which keep sparse storage), else broadcast_*; ``/`` is
    # NDArray's (broadcast_div)
    def _same_shape_op(self, other: Any, same: str, broadcast: str, scalar: str) -> Any:
        from ._invoke import binary

        op = same if isinstance(other, NDArray) and other.shape == self._shape else broadcast
        return binary(self, other, op, scalar)

    def __add__(self, other: Any) -> Any:
        return self._same_shape_op(other, "elemwise_add", "broadcast_add", "_plus_scalar")

    def __sub__(self, other: Any) -> Any:
        return self._same_shape_op(other, "elemwise_sub", "broadcast_sub", "_minus_scalar")

    def __mul__(self, other: Any) -> Any:
        return self._same_shape_op(other, "elemwise_mul", "broadcast_mul", "_mul_scalar")

    def __repr__(self) -> str:
        shape = "x".join(str(d) for d in self._shape)
        return f"\n<{type(self).__name__} {shape} @{self.context}>"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        host = self.asnumpy()
        return host if dtype is None else host.astype(dtype, copy=False)

    def __reduce__(self) -> tuple:
        values, aux = self._host_components()
        return (_unpickle, (self._STYPE, self._shape, values, aux, str(self.context)))

    # -- host access -----------------------------------------------------------------
    def _host_components(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """The values and index arrays as host copies (waits for pending writes)."""
        self.wait_to_read()
        dev = self._chunk.dev
        parts = [self._values, *self._aux]
        if dev.numpy:
            hosts = [np.array(p, copy=True) for p in parts]
        else:
            hosts = [dev.backend.to_host(p) for p in parts]
        return hosts[0], hosts[1:]

    def asnumpy(self) -> np.ndarray:
        """A dense numpy copy of the values, after pending writes finish."""
        values, aux = self._host_components()
        return _densify(np, self._STYPE, self._shape, self._dtype, values, aux)

    def _component(self, index: int) -> NDArray:
        """A new dense NDArray holding a copy of component ``index`` (-1: the values)."""
        self.wait_to_read()
        part = self._values if index < 0 else self._aux[index]
        dest = new_array(tuple(part.shape), np.dtype(part.dtype), self._chunk.dev)
        if dest._shape and 0 not in dest._shape:
            dest._xp()[...] = part
        return dest

    @property
    def data(self) -> NDArray:
        """A copy of the stored values (``indices`` say where they go), as a dense NDArray."""
        return self._component(-1)

    @data.setter
    def data(self, value: Any) -> None:
        raise NotImplementedError("the components of a sparse array cannot be set; build a "
                                  "new one with csr_matrix or row_sparse_array")

    def _aux_data(self, index: int) -> NDArray:
        """A copy of auxiliary array ``index`` (MXNet's order) as a dense NDArray."""
        return self._component(index)

    # -- conversion and copies -----------------------------------------------------
    def tostype(self, stype: str) -> NDArray:
        """A copy with storage type ``stype`` (csr and row_sparse do not convert into each
        other, as in MXNet)."""
        check_stype(stype, "tostype")
        if stype not in ("default", self._STYPE):
            raise ValueError(f"cast_storage from {self._STYPE} to {stype} is not supported")
        return cast_storage(self, stype)

    def copy(self) -> BaseSparseNDArray:
        """A new sparse array with the same storage and values on the same device."""
        return self.copyto(self.context)

    def copyto(self, other: Any) -> Any:
        """Copy into ``other`` (a dense array or one of this storage type, same shape) or a
        new sparse array on the device ``other``; returns the destination."""
        if isinstance(other, Context):
            dest = new_sparse(self._STYPE, self._shape, self._dtype, device_of(other))
        elif isinstance(other, NDArray):
            if other is self:
                return self
            if other.stype not in ("default", self._STYPE):
                raise TypeError(f"copyto does not support destination NDArray stype "
                                f"{other.stype}")
            if other._shape != self._shape:
                raise ShapeError(f"copyto: the destination has shape {other._shape} but the "
                                 f"source has shape {self._shape}; they must match")
            dest = other
        else:
            raise TypeError(f"copyto does not support type {type(other).__name__}")
        _cast_into(self, dest)
        return dest

    def as_in_context(self, context: Context) -> BaseSparseNDArray:
        """This array if it is on ``context``, else a copy there."""
        return self if self.context == context else self.copyto(context)

    def astype(self, dtype: Any, copy: bool = True) -> BaseSparseNDArray:
        """A copy with values of ``dtype`` and the same storage (or this array, when
        ``copy=False`` and it has that dtype)."""
        dtype = np.dtype(dtype)
        if not copy and dtype == self._dtype:
            return self
        dest = new_sparse(self._STYPE, self._shape, dtype, self._chunk.dev)
        _cast_into(self, dest)
        return dest

    def detach(self) -> BaseSparseNDArray:
        """The same storage outside any graph."""
        result = _wrap(self._STYPE, self._chunk, self._shape, self._dtype)
        result._values, result._aux = self._values, self._aux
        return result

    def reshape(self, *shape: Any, **kwargs: Any) -> NDArray:
        raise SparseStorageError(f"reshape is not supported for {type(self).__name__}; "
                                 f"convert with tostype('default') first")

    def check_format(self, full_check: bool = True) -> None:
        """Raise SparseStorageError when the components do not describe a valid array of
        this shape (``full_check``: also the order and range of every index)."""
        values, aux = self._host_components()
        check_components(self._STYPE, self._shape, values, aux, full_check)

    def attach_grad(self, grad_req: str = "write", stype: str | None = None) -> None:
        """Ask for a gradient buffer, of this array's storage type unless ``stype``."""
        _attach_grad(self, grad_req, stype)

    # -- assignment -------------------------------------------------------------------
    def __setitem__(self, key: Any, value: Any) -> None:
        """Only ``x[:] = value`` (an NDArray, a numpy array; a number for row_sparse)."""
        if not (isinstance(key, slice) and key == slice(None)):
            raise SparseStorageError(f"{type(self).__name__} only supports [:] for "
                                     f"assignment, got {key!r}")
        if isinstance(value, NDArray):
            if value is not self:
                value.copyto(self)
        elif isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
            if self._STYPE == "csr":
                raise ValueError("Assigning numeric types to CSRNDArray is not implemented yet.")
            _fill_rsp(self, value)
        elif isinstance(value, (np.ndarray, np.generic, list, tuple)):
            from ._creation import array

            array(value, ctx=self.context, dtype=self._dtype).copyto(self)
        else:
            raise TypeError(f"type {type(value).__name__} not supported")

    # -- in-place arithmetic: compute, then copy into this array (as MXNet) -------------
    def __iadd__(self, other: Any) -> Any:
        (self + other).copyto(self)
        return self

    def __isub__(self, other: Any) -> Any:
        (self - other).copyto(self)
        return self

    def __imul__(self, other: Any) -> Any:
        (self * other).copyto(self)
        return self

    def __itruediv__(self, other: Any) -> Any:
        (self / other).copyto(self)
        return self


class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row format: row ``i``'s values are
    ``data[indptr[i]:indptr[i+1]]`` in the columns ``indices[indptr[i]:indptr[i+1]]``
    (ascending, no duplicates).  Build one with :func:`dagnet.nd.sparse.csr_matrix` or
    ``x.tostype('csr')``."""

    __slots__ = ()
    _STYPE = "csr"
    _AUX_NAMES = ("indptr", "indices")

    @property
    def indptr(self) -> NDArray:
        """A copy of the row offsets (int64, ``rows + 1`` values)."""
        return self._component(0)

    @property
    def indices(self) -> NDArray:
        """A copy of the column index of every stored value (int64)."""
        return self._component(1)

    @indptr.setter
    def indptr(self, value: Any) -> None:
        raise NotImplementedError("the components of a sparse array cannot be set")

    @indices.setter
    def indices(self, value: Any) -> None:
        raise NotImplementedError("the components of a sparse array cannot be set")

    def __getitem__(self, key: Any) -> NDArray:
        """Rows: ``x[i]`` (a 1-row CSRNDArray) and ``x[a:b]`` (also as ``x[(a:b,)]``);
        ``x[:]`` is ``x``."""
        if isinstance(key, tuple) and len(key) == 1 and isinstance(key[0], slice):
            key = key[0]
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            begin = int(key) + self._shape[0] if key < 0 else int(key)
            return _call_op("slice", self, begin=(begin,), end=(begin + 1,))
        if isinstance(key, slice):
            if key.step is not None:
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            if key.start is None and key.stop is None:
                return self
            begin, end, _ = key.indices(self._shape[0])
            return _call_op("slice", self, begin=(begin,), end=(end,))
        if isinstance(key, tuple):
            raise ValueError("Multi-dimension indexing is not supported")
        raise ValueError(f"Undefined behaviour for {key}")

    def asscipy(self) -> Any:
        """A ``scipy.sparse.csr_matrix`` with copies of the components (needs scipy)."""
        try:
            import scipy.sparse as spsp
        except ImportError:
            raise ImportError("scipy could not be imported. Please make sure that the scipy "
                              "is installed.") from None
        values, (indptr, indices) = self._host_components()
        return spsp.csr_matrix((values, indices, indptr), shape=self._shape, dtype=self._dtype)


class RowSparseNDArray(BaseSparseNDArray):
    """An array stored as a set of its rows (slices along the first axis):
    ``dense[indices[i]] = data[i]``, the indices ascending; every other row is zero.
    Build one with :func:`dagnet.nd.sparse.row_sparse_array` or
    ``x.tostype('row_sparse')``."""

    __slots__ = ()
    _STYPE = "row_sparse"
    _AUX_NAMES = ("indices",)

    @property
    def indices(self) -> NDArray:
        """A copy of the indices of the stored rows (int64, ascending)."""
        return self._component(0)

    @indices.setter
    def indices(self, value: Any) -> None:
        raise NotImplementedError("the components of a sparse array cannot be set")

    def __getitem__(self, key: Any) -> NDArray:
        """Only ``x[:]``, which is ``x`` (as in MXNet)."""
        if isinstance(key, slice):
            if key.step is not None or key.start is not None or key.stop is not None:
                raise SparseStorageError("RowSparseNDArray only supports [:] for __getitem__")
            return self
        if isinstance(key, tuple):
            raise ValueError("Multi-dimension indexing is not supported")
        raise SparseStorageError(f"__getitem__ with key {key!r} is not implemented for "
                                 f"RowSparseNDArray; only [:] is")

    def retain(self, indices: Any) -> RowSparseNDArray:
        """The rows of this array whose indices are in ``indices``
        (``sparse.retain(self, indices)``)."""
        return _call_op("_sparse_retain", self, indices)


_CLASSES: dict[str, type[BaseSparseNDArray]] = {"csr": CSRNDArray,
                                                "row_sparse": RowSparseNDArray}


def components_on_host(array: BaseSparseNDArray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Host copies of ``array``'s values and index arrays (waits for pending writes)."""
    return array._host_components()


def is_sparse(array: Any) -> bool:
    """Whether ``array`` is a sparse NDArray."""
    return isinstance(array, BaseSparseNDArray)


def _call_op(name: str, *args: Any, **kwargs: Any) -> Any:
    from ._frontend import call

    return call(name, *args, **kwargs)


# -- construction ------------------------------------------------------------------------
_new = object.__new__


def _wrap(stype: str, chunk: Any, shape: tuple[int, ...], dtype: np.dtype) -> BaseSparseNDArray:
    result = _new(_CLASSES[stype])
    result._chunk = chunk
    result._shape = shape
    result._dtype = dtype
    return result


def _empty_components(xp: Any, stype: str, shape: tuple[int, ...], dtype: np.dtype
                      ) -> tuple[Any, list[Any]]:
    if stype == "csr":
        return xp.zeros((0,), dtype), [xp.zeros((shape[0] + 1,), AUX_DTYPE),
                                      xp.zeros((0,), AUX_DTYPE)]
    return xp.zeros((0,) + tuple(shape[1:]), dtype), [xp.zeros((0,), AUX_DTYPE)]


def new_sparse(stype: str, shape: Sequence[int], dtype: Any, dev: Any) -> BaseSparseNDArray:
    """A new all-zero sparse array (no stored values) of ``stype`` on device ``dev``."""
    check_stype(stype, "new_sparse")
    if stype == "default":
        raise ValueError("new_sparse: 'default' is the dense storage type; use empty/zeros")
    shape = tuple(int(d) for d in shape)
    if stype == "csr" and len(shape) != 2:
        raise ShapeError(f"a csr array must be 2-D, got shape {shape}")
    if not shape:
        raise ShapeError("a row_sparse array needs at least one dimension")
    dtype = np.dtype(dtype)
    result = _wrap(stype, new_chunk(0, dev), shape, dtype)
    result._values, result._aux = _empty_components(dev.xp, stype, shape, dtype)
    return result


def components(array: BaseSparseNDArray) -> tuple[Any, list[Any]]:
    """The values and index arrays of ``array`` (device arrays); only meaningful inside
    an engine function that reads ``array``'s variable."""
    return array._values, list(array._aux)


def set_components(array: BaseSparseNDArray, values: Any, aux: Sequence[Any]) -> None:
    """Replace ``array``'s values and index arrays; only inside an engine function that
    writes ``array``'s variable.  Values are converted to the array's dtype, indices to
    int64."""
    xp = array._chunk.dev.xp
    array._values = xp.asarray(values).astype(array._dtype, copy=False)
    array._aux = [xp.asarray(a).astype(AUX_DTYPE, copy=False) for a in aux]


def push_sparse(fn: Any, reads: Sequence[NDArray], writes: Sequence[NDArray], name: str) -> None:
    """Push ``fn(xp)`` to the engine reading the variables of ``reads`` and writing those of
    ``writes`` (dense or sparse arrays, all on one device); ``fn`` runs in the device's
    stream and may take and replace sparse components (:func:`components`,
    :func:`set_components`) and write dense arrays' views."""
    arrays = [*reads, *writes]
    dev = arrays[0]._chunk.dev
    for array in arrays:
        if array._chunk.dev is not dev:
            raise SparseStorageError(f"{name}: arrays on {dev.ctx} and {array.context} in one "
                                     f"call; move them with .as_in_context(ctx)")
    xp = dev.xp

    def run(run_ctx: Any) -> None:
        with stream_scope(run_ctx):
            fn(xp)

    write_vars = [a._chunk.var for a in writes]
    read_vars = [a._chunk.var for a in reads if a._chunk.var not in write_vars]
    current_engine().push_sync(run, dev.ctx, read_vars, write_vars, _NORMAL, 0, name)


# -- the storage conversions (run inside engine functions) -------------------------------
def _densify(xp: Any, stype: str, shape: tuple[int, ...], dtype: np.dtype, values: Any,
             aux: Sequence[Any]) -> Any:
    dense = xp.zeros(shape, dtype)
    if stype == "row_sparse":
        if len(aux[0]):
            dense[aux[0]] = values
    else:
        indptr, indices = aux
        if len(indices):
            rows = xp.repeat(xp.arange(shape[0]), xp.diff(indptr))
            dense[rows, indices] = values
    return dense


def _sparsify(xp: Any, stype: str, dense: Any) -> tuple[Any, list[Any]]:
    if stype == "row_sparse":
        flat = dense.reshape(dense.shape[0], -1)
        keep = xp.nonzero(xp.any(flat != 0, axis=1))[0].astype(AUX_DTYPE)
        return dense[keep], [keep]
    mask = dense != 0
    indptr = xp.zeros((dense.shape[0] + 1,), AUX_DTYPE)
    xp.cumsum(mask.sum(axis=1), out=indptr[1:])
    _, cols = xp.nonzero(mask)
    return dense[mask], [indptr, cols.astype(AUX_DTYPE)]


def check_components(stype: str, shape: tuple[int, ...], values: Any, aux: Sequence[Any],
                     full_check: bool = True) -> None:
    """Raise SparseStorageError naming what is wrong with these host components."""
    if stype == "csr":
        indptr, indices = aux
        rows, cols = shape
        if indptr.ndim != 1 or indptr.shape[0] != rows + 1:
            raise SparseStorageError(f"csr: indptr must hold rows + 1 = {rows + 1} offsets, "
                                     f"got shape {tuple(indptr.shape)}")
        if indices.ndim != 1 or values.ndim != 1 or indices.shape[0] != values.shape[0]:
            raise SparseStorageError(f"csr: data and indices must be 1-D of one length, got "
                                     f"shapes {tuple(values.shape)} and {tuple(indices.shape)}")
        if not full_check:
            return
        if indptr[0] != 0 or indptr[-1] != indices.shape[0]:
            raise SparseStorageError(f"csr: indptr must start at 0 and end at the number of "
                                     f"values ({indices.shape[0]}), got {indptr[0]} ... "
                                     f"{indptr[-1]}")
        if np.any(np.diff(indptr) < 0):
            raise SparseStorageError("csr: indptr must be non-decreasing")
        if len(indices) and (indices.min() < 0 or indices.max() >= cols):
            raise SparseStorageError(f"csr: column indices must be in [0, {cols}), got values "
                                     f"from {indices.min()} to {indices.max()}")
        for row in range(rows):
            part = indices[indptr[row]:indptr[row + 1]]
            if np.any(np.diff(part) <= 0):
                raise SparseStorageError(f"csr: the column indices of row {row} must be "
                                         f"strictly ascending (sorted, no duplicates), got "
                                         f"{part.tolist()}")
        return
    (indices,) = aux
    if indices.ndim != 1 or values.shape[:1] != indices.shape or \
            tuple(values.shape[1:]) != tuple(shape[1:]):
        raise SparseStorageError(
            f"row_sparse: data must have shape (len(indices),) + {tuple(shape[1:])}, got "
            f"data {tuple(values.shape)} and indices {tuple(indices.shape)}")
    if not full_check:
        return
    if len(indices) and (indices.min() < 0 or indices.max() >= shape[0]):
        raise SparseStorageError(f"row_sparse: row indices must be in [0, {shape[0]}), got "
                                 f"values from {indices.min()} to {indices.max()}")
    if np.any(np.diff(indices) <= 0):
        raise SparseStorageError(f"row_sparse: row indices must be strictly ascending (sorted, "
                                 f"no duplicates), got {indices.tolist()}")


# -- casts through the engine --------------------------------------------------------------
def _cast_into(src: NDArray, dest: NDArray) -> None:
    """Push ``dest = src`` converting storage (and dtype); both arrays exist already."""
    if src._chunk.dev is not dest._chunk.dev:
        src = src.copyto(dest.context) if not is_sparse(src) else _to_device(src, dest.context)
    if mode.recording and not hooks.traced_write(dest, src):
        from ..runtime import check_write

        check_write(dest)
    src_stype, dst_stype = src.stype, dest.stype
    shape, dtype = src._shape, dest._dtype
    if src_stype == "default":
        view = src._xp()
        if dst_stype == "default":
            from ._invoke import push_copy

            push_copy(src, dest)
            return

        def to_sparse(xp: Any) -> None:
            values, aux = _sparsify(xp, dst_stype, view)
            set_components(dest, values.astype(dtype), aux)

        push_sparse(to_sparse, [src], [dest], "cast_storage")
        return
    if dst_stype == "default":
        out = dest._xp()

        def to_dense(xp: Any) -> None:
            values, aux = components(src)
            out[...] = _densify(xp, src_stype, shape, dtype, values, aux)

        push_sparse(to_dense, [src], [dest], "cast_storage")
        return
    if src_stype == dst_stype:
        def copy(xp: Any) -> None:
            values, aux = components(src)
            set_components(dest, values.astype(dtype, copy=True), [a.copy() for a in aux])
    else:
        def copy(xp: Any) -> None:
            values, aux = components(src)
            dense = _densify(xp, src_stype, shape, dtype, values, aux)
            set_components(dest, *_sparsify(xp, dst_stype, dense))
    push_sparse(copy, [src], [dest], "cast_storage")


def _to_device(src: BaseSparseNDArray, ctx: Context) -> BaseSparseNDArray:
    """A copy of sparse ``src`` on another device (through host memory)."""
    dev = device_of(ctx)
    dest = new_sparse(src._STYPE, src._shape, src._dtype, dev)
    values, aux = src._host_components()

    def place(xp: Any) -> None:
        if dev.numpy:
            set_components(dest, values, aux)
        else:
            put = dev.backend.from_host
            set_components(dest, put(values, ctx.device_id), [put(a, ctx.device_id)
                                                              for a in aux])

    push_sparse(place, [], [dest], "_copyto")
    return dest


def _fill_rsp(dest: RowSparseNDArray, value: Any) -> None:
    """``rsp[:] = value``: every row stored and equal to ``value`` (no rows for 0)."""
    shape, dtype = dest._shape, dest._dtype

    def fill(xp: Any) -> None:
        if value == 0:
            set_components(dest, *_empty_components(xp, "row_sparse", shape, dtype))
        else:
            set_components(dest, xp.full(shape, value, dtype),
                           [xp.arange(shape[0], dtype=AUX_DTYPE)])

    push_sparse(fill, [], [dest], "_set_value")


def cast_storage(array: NDArray, stype: str) -> NDArray:
    """A copy of ``array`` with storage type ``stype`` (the imperative ``cast_storage``);
    recorded by autograd when ``array`` is in a graph."""
    check_stype(stype, "cast_storage")
    if stype == "default" and mode.recording and in_graph(array):
        return _recorded_densify(array)
    if stype != "default" and len(array._shape) != 2 and stype == "csr":
        raise ShapeError(f"cast_storage: a csr array must be 2-D, got shape {array._shape}")
    dev = array._chunk.dev
    dest = (new_array(array._shape, array._dtype, dev) if stype == "default"
            else new_sparse(stype, array._shape, array._dtype, dev))
    _cast_into(array, dest)
    return dest


def to_dense_array(array: NDArray) -> NDArray:
    """``array`` itself when dense, else a dense copy (recorded while autograd records)."""
    return array if array.__class__ is NDArray or not is_sparse(array) else \
        cast_storage(array, "default")


def _recorded_densify(array: NDArray) -> NDArray:
    """``cast_storage(array, 'default')`` as a recorded call: the gradient flows back."""
    from ._invoke import prepared

    call = prepared("cast_storage", {"stype": "default"})
    dest = new_array(array._shape, array._dtype, array._chunk.dev)
    _cast_into(array, dest)
    hooks.record_call(call, [array], [dest], None)
    return dest


# -- operators meeting sparse arrays ---------------------------------------------------------
def dispatch(call: Any, inputs: Sequence[Any], out: Any, ctx: Any) -> Any:
    """Run prepared operator ``call`` on ``inputs`` of which some (or ``out``) are sparse:
    its sparse implementation, else the storage fallback (see the module docstring)."""
    from ._invoke import PreparedCall

    for index, array in enumerate(inputs):
        if not isinstance(array, NDArray):
            raise TypeError(f"operator {call.name!r}: input {index} must be an NDArray, got "
                            f"{type(array).__name__} {array!r:.60}")
    check_storage(call.name, call.attrs, [a.stype for a in inputs])
    impl = storage_impl(call.name)
    if impl is not None and not mode.recording:
        result = impl.compute(call, list(inputs), out)
        if result is not NotImplemented:
            return result
    dense_inputs = [to_dense_array(a) for a in inputs]
    if out is None:
        return PreparedCall.run(call, dense_inputs, None, ctx)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    dense_outs = [o if not is_sparse(o) else new_array(o._shape, o._dtype, o._chunk.dev)
                  for o in outs]
    PreparedCall.run(call, dense_inputs,
                     dense_outs if isinstance(out, (list, tuple)) else dense_outs[0], ctx)
    for given, dense in zip(outs, dense_outs):
        if given is not dense:
            _cast_into(dense, given)
    return out


# -- gradients of sparse storage --------------------------------------------------------------
def _attach_grad(array: NDArray, grad_req: str, stype: str | None) -> None:
    if grad_req not in GRAD_REQS:
        raise ValueError(f"attach_grad: grad_req {grad_req!r} is not one of "
                         f"{', '.join(GRAD_REQS)}")
    stype = array.stype if stype is None else check_stype(stype, "attach_grad")
    dev = array._chunk.dev
    if stype == "default":
        from ._invoke import assign

        grad = new_array(array._shape, array._dtype, dev)
        assign(grad, 0)
    else:
        grad = new_sparse(stype, array._shape, array._dtype, dev)
    mark_variable(array, grad, grad_req)


def write_gradient(target: NDArray, dense: NDArray, add: bool) -> None:
    """``target = dense`` (``add``: ``target += dense``) for a sparse gradient buffer."""
    if add:
        from ._invoke import prepared

        dense = prepared("elemwise_add").run([to_dense_array(target), dense])
    _cast_into(dense, target)


def _unpickle(stype: str, shape: tuple[int, ...], values: np.ndarray, aux: list,
              ctx_text: str) -> BaseSparseNDArray:
    from ._creation import parse_context

    try:
        dev = device_of(parse_context(ctx_text))
    except Exception:  # the device is not here: load on the CPU
        from ..context import cpu

        dev = device_of(cpu())
    result = new_sparse(stype, shape, values.dtype, dev)
    host_values, host_aux = values, aux

    def place(xp: Any) -> None:
        if dev.numpy:
            set_components(result, host_values, host_aux)
        else:
            put = dev.backend.from_host
            set_components(result, put(host_values, dev.ctx.device_id),
                           [put(a, dev.ctx.device_id) for a in host_aux])

    push_sparse(place, [], [result], "_unpickle")
    return result
