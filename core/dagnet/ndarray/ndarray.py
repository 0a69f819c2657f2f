"""``mxnet.ndarray.ndarray``: the module path MXNet 1.x code imports :class:`NDArray`
from (``from mxnet.ndarray.ndarray import NDArray``); the names are ``dagnet.ndarray``'s."""

from __future__ import annotations

from ._ndarray import NDArray
from ._storage import STORAGE_TYPE_ID_TO_STR as _STORAGE_TYPE_ID_TO_STR  # noqa: F401
from ._storage import STORAGE_TYPE_STR_TO_ID as _STORAGE_TYPE_STR_TO_ID  # noqa: F401

__all__ = ["NDArray", "py_slice"]

py_slice = slice  # Python's slice, under the name MXNet's module gives it

# MXNet's storage-type names and ids
_STORAGE_TYPE_UNDEFINED = -1
_STORAGE_TYPE_DEFAULT = 0
_STORAGE_TYPE_ROW_SPARSE = 1
_STORAGE_TYPE_CSR = 2
_STORAGE_AUX_TYPES = {"row_sparse": ["int64"], "csr": ["int64", "int64"]}
