"""Loading oneDNN (``libdnnl.so.3`` from the ``onednn-cpu-gomp`` wheel) through ctypes.

The C API of oneDNN v3 (``dnnl.h``) is called directly: no compiler, no binding package.
One CPU engine serves the process; each thread that runs primitives gets its own stream
and its own OpenMP thread count (OpenMP's ``nthreads`` setting belongs to the calling
thread), set from ``config cpu_kernel_threads`` before each run.  ``OMP_WAIT_POLICY``
defaults to ``PASSIVE`` when the library loads.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys
import threading
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from dagnet import DagnetError

from ..._load_once import LoadOnce

__all__ = ["OneDNNError", "Library", "load", "failure", "DISTRIBUTION", "DIMS", "ExecArg", "log"]

log = logging.getLogger("dagnet_ops.nn.onednn")

DISTRIBUTION = "onednn-cpu-gomp"
_SONAME = "libdnnl.so.3"
MAX_NDIMS = 12  # DNNL_MAX_NDIMS: every dnnl_dims_t is an int64 array of this length
DIMS = ctypes.c_int64 * MAX_NDIMS

_STATUS = {
    1: "out of memory",
    2: "invalid arguments",
    3: "unimplemented (no oneDNN kernel for these shapes and parameters)",
    4: "last implementation reached",
    5: "runtime error",
    6: "not required",
}


class OneDNNError(DagnetError, RuntimeError):
    """A oneDNN call returned an error status; the message names the call and the status."""


class ExecArg(ctypes.Structure):
    """``dnnl_exec_arg_t``: an argument index (``DNNL_ARG_*``) and a memory object."""

    _fields_ = [("arg", ctypes.c_int), ("memory", ctypes.c_void_p)]


def _candidate_paths() -> list[Path]:
    """Where the wheel puts the library: ``<prefix>/lib`` of this environment, or any file
    of the installed distribution named like it."""
    paths = [Path(sys.prefix) / "lib" / _SONAME]
    try:
        dist = distribution(DISTRIBUTION)
    except PackageNotFoundError:
        return paths
    for file in dist.files or ():
        if file.name == _SONAME:
            paths.append(Path(dist.locate_file(file)).resolve())
    return paths


# (name, restype, argtypes) of every entry point used; a missing one fails the load
_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_INT = ctypes.c_int
_SIGNATURES = [
    ("dnnl_engine_create", _INT, [_PP, _INT, ctypes.c_size_t]),
    ("dnnl_stream_create", _INT, [_PP, _P, ctypes.c_uint]),
    ("dnnl_stream_wait", _INT, [_P]),
    ("dnnl_memory_desc_create_with_tag", _INT, [_PP, _INT, DIMS, _INT, _INT]),
    ("dnnl_memory_desc_destroy", _INT, [_P]),
    ("dnnl_memory_desc_equal", _INT, [_P, _P]),
    ("dnnl_memory_desc_reshape", _INT, [_PP, _P, _INT, DIMS]),
    ("dnnl_memory_desc_get_size", ctypes.c_size_t, [_P]),
    ("dnnl_memory_create", _INT, [_PP, _P, _P, _P]),
    ("dnnl_memory_set_data_handle", _INT, [_P, _P]),
    ("dnnl_memory_destroy", _INT, [_P]),
    ("dnnl_primitive_attr_create", _INT, [_PP]),
    ("dnnl_primitive_attr_set_scratchpad_mode", _INT, [_P, _INT]),
    ("dnnl_primitive_attr_destroy", _INT, [_P]),
    ("dnnl_primitive_attr_set_post_ops", _INT, [_P, _P]),
    ("dnnl_post_ops_create", _INT, [_PP]),
    ("dnnl_post_ops_destroy", _INT, [_P]),
    ("dnnl_post_ops_append_eltwise", _INT, [_P, _INT, ctypes.c_float, ctypes.c_float]),
    ("dnnl_post_ops_append_sum", _INT, [_P, ctypes.c_float, ctypes.c_int32, _INT]),
    ("dnnl_primitive_desc_query_md", _P, [_P, _INT, _INT]),
    ("dnnl_primitive_desc_query", _INT, [_P, _INT, _INT, _P]),
    ("dnnl_primitive_desc_destroy", _INT, [_P]),
    ("dnnl_primitive_create", _INT, [_PP, _P]),
    ("dnnl_primitive_execute", _INT, [_P, _P, _INT, ctypes.POINTER(ExecArg)]),
    ("dnnl_primitive_destroy", _INT, [_P]),
    ("dnnl_reorder_primitive_desc_create", _INT, [_PP, _P, _P, _P, _P, _P]),
    ("dnnl_convolution_forward_primitive_desc_create", _INT,
     [_PP, _P, _INT, _INT, _P, _P, _P, _P, DIMS, DIMS, DIMS, DIMS, _P]),
    ("dnnl_convolution_backward_data_primitive_desc_create", _INT,
     [_PP, _P, _INT, _P, _P, _P, DIMS, DIMS, DIMS, DIMS, _P, _P]),
    ("dnnl_convolution_backward_weights_primitive_desc_create", _INT,
     [_PP, _P, _INT, _P, _P, _P, _P, DIMS, DIMS, DIMS, DIMS, _P, _P]),
    ("dnnl_inner_product_forward_primitive_desc_create", _INT, [_PP, _P, _INT, _P, _P, _P, _P, _P]),
    ("dnnl_pooling_forward_primitive_desc_create", _INT,
     [_PP, _P, _INT, _INT, _P, _P, DIMS, DIMS, DIMS, DIMS, DIMS, _P]),
    ("dnnl_pooling_backward_primitive_desc_create", _INT,
     [_PP, _P, _INT, _P, _P, DIMS, DIMS, DIMS, DIMS, DIMS, _P, _P]),
    ("dnnl_batch_normalization_forward_primitive_desc_create", _INT,
     [_PP, _P, _INT, _P, _P, ctypes.c_float, ctypes.c_uint, _P]),
    ("dnnl_batch_normalization_backward_primitive_desc_create", _INT,
     [_PP, _P, _INT, _P, _P, _P, ctypes.c_float, ctypes.c_uint, _P, _P]),
]


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int),
                ("hash", ctypes.c_char_p), ("cpu_runtime", ctypes.c_uint),
                ("gpu_runtime", ctypes.c_uint)]


class Library:
    """The loaded ``libdnnl`` with its entry points typed, the process's CPU engine, and a
    stream per thread."""

    def __init__(self, dll: ctypes.CDLL, path: Path):
        self.dll = dll
        self.path = path
        for name, restype, argtypes in _SIGNATURES:
            fn = getattr(dll, name)
            fn.restype, fn.argtypes = restype, argtypes
        dll.dnnl_version.restype = ctypes.POINTER(_Version)
        v = dll.dnnl_version().contents
        self.version = (v.major, v.minor, v.patch)
        if v.major != 3:
            raise OneDNNError(f"{path} is oneDNN {v.major}.{v.minor}; dagnet calls the v3 C API")
        self.engine = ctypes.c_void_p()
        self.check(dll.dnnl_engine_create(ctypes.byref(self.engine), 1, 0), "dnnl_engine_create")
        self._local = threading.local()
        self._omp_set_num_threads = _openmp_thread_setter()

    def check(self, status: int, call: str) -> None:
        """Raise :class:`OneDNNError` naming ``call`` unless ``status`` is ``dnnl_success``."""
        if status:
            raise OneDNNError(
                f"oneDNN call {call} failed: status {status} "
                f"({_STATUS.get(status, 'unknown status')}); library {self.path}")

    def stream(self, threads: int) -> ctypes.c_void_p:
        """The calling thread's stream, with its OpenMP thread count set to ``threads``."""
        local = self._local
        stream = getattr(local, "stream", None)
        if stream is None:
            stream = ctypes.c_void_p()
            self.check(self.dll.dnnl_stream_create(ctypes.byref(stream), self.engine, 1),
                       "dnnl_stream_create")
            local.stream = stream
        self.use_threads(threads)
        return stream

    def use_threads(self, threads: int) -> None:
        """Set the calling thread's OpenMP thread count to ``threads``.  oneDNN plans a
        primitive's work for the count in effect when its descriptor is made, and a
        primitive keeps that plan: made under one thread, it runs on one thread even where
        more are set later; so primitives are made, and cached, per thread count."""
        local = self._local
        if getattr(local, "threads", None) != threads and self._omp_set_num_threads is not None:
            self._omp_set_num_threads(threads)
            local.threads = threads


def _openmp_thread_setter():
    """``omp_set_num_threads`` of the GNU OpenMP runtime libdnnl is linked to (already
    loaded with it), or None if it cannot be found."""
    try:
        gomp = ctypes.CDLL("libgomp.so.1")
    except OSError:
        return None
    setter = gomp.omp_set_num_threads
    setter.restype, setter.argtypes = None, [ctypes.c_int]
    return setter


def load() -> Library | None:
    """The library, loaded on first use; None (with the reason logged at debug level and
    kept by :func:`failure`) when it is not installed or does not load."""
    return _loaded.get()


def failure() -> str | None:
    """Why the library did not load (None if it loaded or was not tried yet)."""
    return _loaded.failure


def _open() -> Library:
    # OpenMP's threads sleep between oneDNN calls instead of spinning (unless the user chose
    # otherwise): dagnet runs Python and numpy work between them, which spinning threads
    # would starve of cores.  Read once, when libgomp loads with libdnnl.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    tried = []
    for path in _candidate_paths():
        if not path.exists():
            tried.append(f"{path} (absent)")
            continue
        return Library(ctypes.CDLL(os.fspath(path)), path)
    raise OSError(f"{_SONAME} not found; tried {', '.join(tried)} "
                  f"(install it with: pip install {DISTRIBUTION})")


_loaded = LoadOnce(_open, (OSError, AttributeError, OneDNNError), "oneDNN kernels",
                   log)


def _after_fork_in_child() -> None:
    # GNU OpenMP's thread pool does not survive fork (a child's parallel region can wait for
    # the parent's threads forever), nor do locks other threads held: a forked child of a
    # process that loaded oneDNN runs numpy's kernels.
    _loaded.after_fork("this process was forked from one that had loaded oneDNN, and GNU "
                       "OpenMP does not survive fork")


os.register_at_fork(after_in_child=_after_fork_in_child)
