"""``mxnet.ndarray.ndarray``: the module path MXNet 1.x code imports :class:`NDArray`
from (``from mxnet.ndarray.ndarray import NDArray``); the names are ``dagnet.ndarray``'s."""

from __future__ import annotations

from ._ndarray import NDArray

__all__ = ["NDArray", "py_slice"]

py_slice = slice  # Python's slice, under the name MXNet's module gives it

# MXNet's storage-type ids by name (dagnet stores every array densely, as 'default')
_STORAGE_TYPE_STR_TO_ID = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
