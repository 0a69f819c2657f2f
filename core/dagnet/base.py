"""``mxnet.base`` for code written against MXNet 1.x: the error base, the type tuples, the
data directory.

:data:`MXNetError` is :class:`dagnet.DagnetError`, the base of every dagnet error, so
``except mx.base.MXNetError`` catches what dagnet raises.  MXNet's C-library plumbing
(``_LIB``, ``check_call``, the ctypes handle types) has no counterpart: dagnet has no
C library.
"""

from __future__ import annotations

import os
import platform
from typing import Any

import numpy as np

from ._errors import DagnetError, NotImplementedForSymbol

__all__ = ["MXNetError", "NotImplementedForSymbol", "integer_types", "numeric_types",
           "string_types", "mx_real_t", "py_str", "data_dir", "data_dir_default", "as_list"]

MXNetError = DagnetError

integer_types = (int, np.int32, np.int64)
numeric_types = (float, int, np.generic)
string_types = (str,)
mx_real_t = np.float32  # the default real type, as MXNet names it


def py_str(raw: bytes | str) -> str:
    """Text from UTF-8 bytes (text is returned as is: dagnet's callbacks pass names as
    ``str`` where MXNet's C callbacks pass ``bytes``)."""
    return raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else str(raw)


def data_dir_default() -> str:
    """Where downloaded data goes unless ``MXNET_HOME`` says otherwise: ``%APPDATA%\\mxnet``
    on Windows, ``~/.mxnet`` elsewhere (MXNet's choice, so both find the same files)."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """The data directory: ``MXNET_HOME``, else :func:`data_dir_default`."""
    return os.getenv("MXNET_HOME", data_dir_default())


def as_list(obj: Any) -> list | tuple:
    """``obj`` itself when it is a list or tuple, else ``[obj]``."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


_as_list = as_list  # the name MXNet 1.x code imports
