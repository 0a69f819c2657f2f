"""``mxnet.ndarray.ndarray``: the module path MXNet 1.x code imports :class:`NDArray`
and the array helpers from (``from mxnet.ndarray import ndarray as nd``,
``nd.empty(...)``); the names are ``dagnet.ndarray``'s, the same objects."""

from __future__ import annotations

from . import (
    add,
    arange,
    array,
    concatenate,
    divide,
    empty,
    equal,
    eye,
    from_dlpack,
    from_numpy,
    full,
    greater,
    greater_equal,
    histogram,
    lesser,
    lesser_equal,
    linspace,
    logical_and,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    modulo,
    moveaxis,
    multiply,
    not_equal,
    onehot_encode,
    ones,
    power,
    split_v2,
    subtract,
    to_dlpack_for_read,
    to_dlpack_for_write,
    true_divide,
    waitall,
    zeros,
)
from ._ndarray import NDArray
from ._storage import STORAGE_TYPE_ID_TO_STR as _STORAGE_TYPE_ID_TO_STR  # noqa: F401
from ._storage import STORAGE_TYPE_STR_TO_ID as _STORAGE_TYPE_STR_TO_ID  # noqa: F401

__all__ = [
    "NDArray", "add", "arange", "array", "concatenate", "divide", "empty", "equal", "eye",
    "from_dlpack", "from_numpy", "full", "greater", "greater_equal", "histogram", "lesser",
    "lesser_equal", "linspace", "logical_and", "logical_or", "logical_xor", "maximum",
    "minimum", "modulo", "moveaxis", "multiply", "not_equal", "onehot_encode", "ones", "power",
    "py_slice", "split_v2", "subtract", "to_dlpack_for_read", "to_dlpack_for_write",
    "true_divide", "waitall", "zeros",
]

py_slice = slice  # Python's slice, under the name MXNet's module gives it

# MXNet's storage-type names and ids
_STORAGE_TYPE_UNDEFINED = -1
_STORAGE_TYPE_DEFAULT = 0
_STORAGE_TYPE_ROW_SPARSE = 1
_STORAGE_TYPE_CSR = 2
_STORAGE_AUX_TYPES = {"row_sparse": ["int64"], "csr": ["int64", "int64"]}
