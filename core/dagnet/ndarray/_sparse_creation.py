"""Creating sparse arrays: ``csr_matrix``, ``row_sparse_array``, ``zeros``, ``empty`` and
``array`` of :mod:`dagnet.ndarray.sparse`, with MXNet 1.x's arguments and defaults.

Components given as arrays are copied at the call (changing the source
afterwards changes nothing).  As in MXNet, creation checks only that their
shapes fit (a mismatch raises :class:`~dagnet.ndarray.sparse.SparseStorageError`
naming it); ``check_format()`` checks the index values themselves (order,
range, ``indptr`` offsets) and names what is wrong.  The default value dtype is the
source's for an NDArray, a numpy array or a scipy matrix, else float32; indices are
int64.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._errors import ShapeError
from ..runtime import device_of
from ._creation import DEFAULT_DTYPE, _ctx
from ._creation import array as _dense_array
from ._creation import zeros as _dense_zeros
from ._ndarray import NDArray
from ._sparse import (
    AUX_DTYPE,
    BaseSparseNDArray,
    CSRNDArray,
    RowSparseNDArray,
    SparseStorageError,
    cast_storage,
    check_components,
    new_sparse,
    push_sparse,
    set_components,
)
from ._storage import check_stype

__all__ = ["csr_matrix", "row_sparse_array", "zeros", "empty", "array",
           "from_host_components"]


def _scipy_sparse() -> Any:
    try:
        import scipy.sparse as spsp
    except ImportError:
        return None
    return spsp


def _default_dtype(source: Any, dtype: Any) -> np.dtype:
    if dtype is not None:
        return np.dtype(dtype)
    if isinstance(source, (NDArray, np.ndarray)):
        return np.dtype(source.dtype)
    spsp = _scipy_sparse()
    if spsp is not None and spsp.issparse(source):
        return np.dtype(source.dtype)
    return DEFAULT_DTYPE


def _host(source: Any, dtype: Any, what: str) -> np.ndarray:
    if isinstance(source, NDArray):
        host = source.asnumpy()
        return host if dtype is None else host.astype(dtype)
    try:
        return np.array(source, dtype=dtype)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be array like, got {type(source).__name__}") from None


def _check_shape(given: Any, wanted: Any) -> None:
    if wanted is not None and tuple(given) != tuple(wanted):
        raise ValueError(f"Shape mismatch: expected {tuple(wanted)}, got {tuple(given)}")


def _from_components(stype: str, shape: tuple[int, ...], values: np.ndarray,
                     aux: list[np.ndarray], ctx: Any) -> BaseSparseNDArray:
    check_components(stype, shape, values, aux, full_check=False)
    dev = device_of(_ctx(ctx))
    result = new_sparse(stype, shape, values.dtype, dev)
    if dev.numpy:  # a new array: nothing can be pending on it, so set it now
        set_components(result, values, aux)
        return result

    def place(xp: Any) -> None:
        put = dev.backend.from_host
        set_components(result, put(values, dev.ctx.device_id),
                       [put(a, dev.ctx.device_id) for a in aux])

    push_sparse(place, [], [result], "_sync_copyfrom")
    return result


def from_host_components(stype: str, shape: Sequence[int], values: np.ndarray,
                         aux: Sequence[np.ndarray], ctx: Any = None) -> BaseSparseNDArray:
    """A sparse array of ``stype`` from host components (values, then index arrays in
    MXNet's order), checked (SparseStorageError names what is wrong)."""
    check_stype(stype, "from_host_components")
    shape = tuple(int(d) for d in shape)
    return _from_components(stype, shape, np.asarray(values),
                            [np.asarray(a, AUX_DTYPE) for a in aux], ctx)


def _csr_from_definition(data: Any, indices: Any, indptr: Any, shape: Any, ctx: Any,
                         dtype: Any) -> CSRNDArray:
    dtype = _default_dtype(data, dtype)
    values = _host(data, dtype, "data")
    indptr = _host(indptr, AUX_DTYPE, "indptr")
    indices = _host(indices, AUX_DTYPE, "indices")
    if values.ndim != 1 or indptr.ndim != 1 or indices.ndim != 1:
        raise SparseStorageError(f"csr_matrix: data, indices and indptr must be 1-D, got "
                                 f"shapes {values.shape}, {indices.shape} and {indptr.shape}")
    if shape is None:
        if indptr.shape[0] == 0 or indices.shape[0] == 0:
            raise ValueError("invalid shape: the shape cannot be inferred without indices; "
                             "pass shape=")
        shape = (indptr.shape[0] - 1, int(indices.max()) + 1)
    shape = tuple(int(d) for d in shape)
    if len(shape) != 2:
        raise ShapeError(f"csr_matrix: the shape must be 2-D, got {shape}")
    return _from_components("csr", shape, values, [indptr, indices], ctx)


def csr_matrix(arg1: Any, shape: Any = None, ctx: Any = None, dtype: Any = None) -> CSRNDArray:
    """A :class:`CSRNDArray` from ``(data, indices, indptr)``, ``(data, (row, col))``
    (coordinates; needs scipy), a shape ``(M, N)`` (all zeros), a scipy sparse matrix, a
    CSRNDArray, or a dense 2-D array-like (NDArray, numpy array, nested lists)."""
    if isinstance(arg1, tuple):
        if len(arg1) == 2:
            if isinstance(arg1[1], tuple) and len(arg1[1]) == 2:
                data, (row, col) = arg1
                spsp = _scipy_sparse()
                if spsp is None:
                    raise ImportError("scipy could not be imported. Please make sure that "
                                      "the scipy is installed.")
                coo = spsp.coo_matrix((_host(data, None, "data"), (_host(row, None, "row"),
                                                                  _host(col, None, "col"))),
                                      shape=shape)
                _check_shape(coo.shape, shape)
                return array(coo.tocsr(), ctx=ctx, dtype=dtype)
            _check_shape(arg1, shape)
            return empty("csr", arg1, ctx=ctx, dtype=dtype)
        if len(arg1) == 3:
            return _csr_from_definition(arg1[0], arg1[1], arg1[2], shape, ctx, dtype)
        raise ValueError(f"Unexpected length of input tuple: {len(arg1)}")
    spsp = _scipy_sparse()
    if isinstance(arg1, CSRNDArray) or (spsp is not None and spsp.issparse(arg1)):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, RowSparseNDArray):
        raise ValueError("Unexpected input type: RowSparseNDArray")
    dense = _dense_array(arg1, dtype=_default_dtype(arg1, dtype))
    if ctx is not None and dense.context != _ctx(ctx):
        dense = dense.as_in_context(_ctx(ctx))
    _check_shape(dense.shape, shape)
    return cast_storage(dense, "csr")


def row_sparse_array(arg1: Any, shape: Any = None, ctx: Any = None, dtype: Any = None
                     ) -> RowSparseNDArray:
    """A :class:`RowSparseNDArray` from ``(data, indices)`` (the stored rows and their
    ascending row indices), a shape (all zeros), a RowSparseNDArray, or a dense
    array-like."""
    if isinstance(arg1, tuple):
        if len(arg1) < 2:
            raise ValueError(f"Unexpected length of input tuple: {len(arg1)}")
        if len(arg1) > 2 or all(isinstance(d, (int, np.integer)) for d in arg1):
            _check_shape(arg1, shape)
            return empty("row_sparse", arg1, ctx=ctx, dtype=dtype)
        if isinstance(arg1[0], (int, np.integer)) and isinstance(arg1[1], (int, np.integer)):
            return empty("row_sparse", arg1, ctx=ctx, dtype=dtype)
        data, indices = arg1
        dtype = _default_dtype(data, dtype)
        values = _host(data, dtype, "data")
        rows = _host(indices, AUX_DTYPE, "indices")
        if rows.ndim != 1:
            raise SparseStorageError(f"row_sparse_array: indices must be 1-D, got shape "
                                     f"{rows.shape}")
        if values.ndim == 0 or values.shape[0] != rows.shape[0]:
            raise SparseStorageError(f"row_sparse_array: data must have one row per index "
                                     f"({rows.shape[0]}), got data of shape {values.shape}")
        if shape is None:
            if not rows.size:
                raise ValueError("invalid shape: no indices to infer the shape from")
            shape = (int(rows.max()) + 1,) + values.shape[1:]
        shape = tuple(int(d) for d in shape)
        return _from_components("row_sparse", shape, values, [rows], ctx)
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx=ctx, dtype=dtype)
    if isinstance(arg1, CSRNDArray):
        raise ValueError("Unexpected input type: CSRNDArray")
    dense = _dense_array(arg1, dtype=_default_dtype(arg1, dtype))
    if ctx is not None and dense.context != _ctx(ctx):
        dense = dense.as_in_context(_ctx(ctx))
    _check_shape(dense.shape, shape)
    return cast_storage(dense, "row_sparse")


def zeros(stype: str, shape: int | Sequence[int], ctx: Any = None, dtype: Any = None,
          **kwargs: Any) -> NDArray:
    """An all-zero array of storage type ``stype`` (float32 unless ``dtype``)."""
    check_stype(stype, "zeros")
    if stype == "default":
        return _dense_zeros(shape, ctx=ctx, dtype=dtype, **kwargs)
    out = kwargs.pop("out", None)
    if kwargs:
        raise TypeError(f"zeros() got unexpected keyword argument(s) {', '.join(kwargs)}")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)
    result = new_sparse(stype, shape, DEFAULT_DTYPE if dtype is None else dtype,
                        device_of(_ctx(ctx)))
    if out is not None:
        result.copyto(out)
        return out
    return result


def empty(stype: str, shape: int | Sequence[int], ctx: Any = None, dtype: Any = None) -> NDArray:
    """A new sparse array with no stored values (sparse arrays start empty, i.e. zero)."""
    check_stype(stype, "empty")
    if stype == "default":
        from ._creation import empty as _dense_empty

        return _dense_empty(shape, ctx, dtype)
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def array(source_array: Any, ctx: Any = None, dtype: Any = None) -> BaseSparseNDArray:
    """A sparse array copied from a sparse NDArray or a scipy sparse matrix (csr; other
    scipy formats are converted to csr)."""
    if isinstance(source_array, NDArray):
        if not isinstance(source_array, BaseSparseNDArray):
            raise ValueError("Please use `tostype` to create RowSparseNDArray or CSRNDArray "
                             "from an NDArray")
        dtype = _default_dtype(source_array, dtype)
        result = new_sparse(source_array.stype, source_array.shape, dtype,
                            device_of(_ctx(ctx) if ctx is not None else source_array.context))
        source_array.copyto(result)
        return result
    spsp = _scipy_sparse()
    if spsp is not None and spsp.issparse(source_array):
        csr = spsp.csr_matrix(source_array)  # a copy in csr format
        csr.sort_indices()
        csr.sum_duplicates()
        return _csr_from_definition(csr.data, csr.indices, csr.indptr, csr.shape, ctx,
                                    _default_dtype(source_array, dtype))
    if isinstance(source_array, (np.ndarray, np.generic)):
        raise ValueError("Please use mx.nd.array to create an NDArray with source_array of "
                         f"type {type(source_array)}")
    raise ValueError(f"Unexpected source_array type: {type(source_array)}")
