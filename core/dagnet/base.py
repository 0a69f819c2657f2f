"""``mxnet.base`` for code written against MXNet 1.x: the error base, the type tuples, the
data directory.

:data:`MXNetError` is :class:`dagnet.DagnetError`, the base of every dagnet error, so
``except mx.base.MXNetError`` catches what dagnet raises.

dagnet has no C library.  For code that calls MXNet's through ctypes -- its own unit
tests do -- ``_LIB`` emulates the few entry points that code uses (``_LIB.MX...`` names
them; any other is an error saying which Python API does the same), over the ctypes
helpers MXNet's callers pass arguments with (``c_str``, ``c_str_array``, ``mx_uint``, the
handle types): a handle stands for a dagnet object (``sym.handle``, ``Symbol(handle)``,
``NDArray(handle=...)``).
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._errors import DagnetError, NotImplementedForSymbol

__all__ = ["MXNetError", "NotImplementedForSymbol", "integer_types", "numeric_types",
           "string_types", "mx_real_t", "py_str", "data_dir", "data_dir_default", "as_list",
           "SymbolHandle", "NDArrayHandle", "mx_uint", "mx_int", "mx_int64", "mx_float",
           "c_str", "c_str_array", "c_array", "check_call"]

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


# -- the ctypes side of MXNet's C API ---------------------------------------------------
SymbolHandle = ctypes.c_void_p
NDArrayHandle = ctypes.c_void_p
mx_uint = ctypes.c_uint
mx_int = ctypes.c_int
mx_int64 = ctypes.c_int64
mx_float = ctypes.c_float


def c_str(string: str) -> ctypes.c_char_p:
    """``string`` as a C ``const char *`` (UTF-8)."""
    return ctypes.c_char_p(string.encode("utf-8"))


def c_str_array(strings: Sequence[str]) -> Any:
    """``strings`` as a C ``const char **`` (UTF-8)."""
    array = (ctypes.c_char_p * len(strings))()
    array[:] = [s.encode("utf-8") for s in strings]
    return array


def c_array(ctype: Any, values: Sequence[Any]) -> Any:
    """``values`` as a C array of ``ctype``."""
    return (ctype * len(values))(*values)


def check_call(ret: int) -> None:
    """MXNet's check of a C call's return code.  dagnet's emulated entry points raise their
    errors as exceptions and return 0, so only a code from elsewhere can fail here."""
    if ret != 0:
        raise DagnetError(f"a C API call returned error code {ret}")


def __getattr__(name: str) -> Any:
    if name == "_LIB":
        from ._clib import LIB

        return LIB
    raise AttributeError(f"module 'dagnet.base' has no attribute {name!r}")
