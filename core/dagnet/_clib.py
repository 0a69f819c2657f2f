"""``mxnet.base._LIB`` emulated: the few entry points of MXNet's C library that code written
against it calls through ctypes (MXNet's own unit tests do), carried out by dagnet's Python
API.

Each takes its arguments as MXNet's callers pass them (``c_str``, ``mx_uint``,
``c_str_array``, handles, ``ctypes.byref`` of an output handle), raises its errors as
exceptions and returns 0, so ``check_call`` passes.  A handle stands for a dagnet object
(see :mod:`._handles`).  Any other name is a :class:`CLibraryError` saying which Python API
does the same.

=================================== ==========================================================
entry point                         carried out by
=================================== ==========================================================
MXBuildSubgraphByOpNames            ``Symbol.optimize_for(backend, op_names=...)``
MXSetSubgraphPropertyOpNames        ``executor.set_backend_options(b, at_bind=True, op_names=)``
MXSetSubgraphPropertyOpNamesV2      ``executor.set_backend_options(b, op_names=...)``
MXRemoveSubgraphPropertyOpNames[V2] ``executor.clear_backend_options(b, "op_names", ...)``
MXNDArrayFromDLPack                 ``nd.from_dlpack`` of the ``DLManagedTensor`` pointed to
=================================== ==========================================================
"""

from __future__ import annotations

import copy
import ctypes
from collections.abc import Callable
from typing import Any

from . import plugins
from ._errors import DagnetError
from ._handles import hand_out, resolve
from .executor import clear_backend_options, set_backend_options
from .ndarray import from_dlpack
from .symbol import Symbol

__all__ = ["LIB", "CLibraryError"]


class CLibraryError(DagnetError, AttributeError):
    """An entry point of MXNet's C library that dagnet does not emulate."""


# -- decoding ctypes arguments ------------------------------------------------------------
def _text(value: Any) -> str:
    raw = value.value if isinstance(value, ctypes.c_char_p) else value
    return raw.decode("utf-8") if isinstance(raw, (bytes, bytearray)) else str(raw)


def _count(value: Any) -> int:
    return int(value.value if isinstance(value, ctypes._SimpleCData) else value)


def _texts(array: Any, count: Any) -> list[str]:
    return [_text(array[i]) for i in range(_count(count))]


def _write_handle(out: Any, obj: Any) -> None:
    """Store a handle for ``obj`` where ``out`` (``ctypes.byref(h)`` or a pointer) points."""
    target = getattr(out, "_obj", None)  # what ctypes.byref() refers to
    if target is None:
        target = out.contents if hasattr(out, "contents") else out
    target.value = hand_out(obj)


# -- the entry points -----------------------------------------------------------------------
def _build_subgraph_by_op_names(sym_handle: Any, backend: Any, num_ops: Any, op_names: Any,
                                out: Any) -> int:
    symbol = resolve(sym_handle, Symbol, "MXBuildSubgraphByOpNames")
    names = _texts(op_names, num_ops)
    partitioned = (symbol.optimize_for(_text(backend), op_names=names) if names
                   else copy.copy(symbol))
    _write_handle(out, partitioned)
    return 0


def _set_op_names(at_bind: bool) -> Callable[..., int]:
    def entry(backend: Any, num_ops: Any, op_names: Any) -> int:
        name = _text(backend)
        if not at_bind:  # V2 sets the backend's own property: the backend must exist
            plugins.graph_passes().for_backend(name)
        set_backend_options(name, at_bind=at_bind, op_names=_texts(op_names, num_ops))
        return 0

    return entry


def _remove_op_names(at_bind: bool) -> Callable[..., int]:
    def entry(backend: Any) -> int:
        name = _text(backend)
        if not at_bind:
            plugins.graph_passes().for_backend(name)
        clear_backend_options(name, "op_names", at_bind=at_bind)
        return 0

    return entry


_DLTENSOR = b"dltensor"  # lives as long as the module: a capsule keeps a pointer to it
_new_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                 ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))


def _ndarray_from_dlpack(dlpack: Any, out: Any) -> int:
    """An NDArray over the ``DLManagedTensor`` at ``dlpack``, which it takes over (its
    deleter runs when the array's memory is freed)."""
    address = dlpack.value if isinstance(dlpack, ctypes.c_void_p) else dlpack
    if not address:
        raise DagnetError("MXNDArrayFromDLPack: the DLManagedTensor pointer is NULL")
    _write_handle(out, from_dlpack(_new_capsule(address, _DLTENSOR, None)))
    return 0


_ENTRY_POINTS: dict[str, Callable[..., int]] = {
    "MXBuildSubgraphByOpNames": _build_subgraph_by_op_names,
    "MXSetSubgraphPropertyOpNames": _set_op_names(at_bind=True),
    "MXSetSubgraphPropertyOpNamesV2": _set_op_names(at_bind=False),
    "MXRemoveSubgraphPropertyOpNames": _remove_op_names(at_bind=True),
    "MXRemoveSubgraphPropertyOpNamesV2": _remove_op_names(at_bind=False),
    "MXNDArrayFromDLPack": _ndarray_from_dlpack,
}

# what to call instead of entry points MXNet code often reaches for
_INSTEAD = {
    "MXOptimizeForBackend": "Symbol.optimize_for(backend, args, aux, ...)",
    "MXGenBackendSubgraph": "Symbol.get_backend_symbol(backend)",
    "MXNDArrayWaitAll": "mx.nd.waitall()",
    "MXNDArrayToDLPack": "mx.nd.to_dlpack_for_read(array) / to_dlpack_for_write(array)",
    "MXNDArraySave": "mx.nd.save(fname, arrays)",
    "MXNDArrayLoad": "mx.nd.load(fname)",
    "MXSymbolCreateFromJSON": "mx.sym.load_json(text)",
    "MXSymbolSaveToJSON": "Symbol.tojson()",
    "MXRandomSeed": "mx.random.seed(n)",
    "MXGetGPUCount": "mx.context.num_gpus()",
    "MXAutogradSetIsRecording": "mx.autograd.record() / mx.autograd.pause()",
    "MXAutogradSetIsTraining": "mx.autograd.train_mode() / mx.autograd.predict_mode()",
    "MXImperativeInvoke": "mx.nd.<operator>(...)",
    "MXSetIsNumpyShape": "mx.util.set_np_shape(active)",
    "MXIsNumpyShape": "mx.util.is_np_shape()",
    "MXGetLastError": "nothing: dagnet raises its errors as exceptions (mx.base.MXNetError)",
}


class _EmulatedLibrary:
    """The object ``mxnet.base._LIB`` names: its entry points are attributes."""

    def __getattr__(self, name: str) -> Callable[..., int]:
        try:
            return _ENTRY_POINTS[name]
        except KeyError:
            pass
        if name.startswith("__"):  # copy, pickle and friends probe for these
            raise AttributeError(name)
        instead = _INSTEAD.get(name, "the Python API MXNet wraps it in (mx.nd, mx.sym, "
                                     "mx.autograd, ...), which dagnet provides")
        raise CLibraryError(
            f"mxnet.base._LIB.{name}: dagnet has no C library; it emulates only "
            f"{', '.join(sorted(_ENTRY_POINTS))} for code that calls MXNet's through ctypes. "
            f"Use {instead} instead")

    def __dir__(self) -> list[str]:
        return sorted(_ENTRY_POINTS)

    def __repr__(self) -> str:
        return f"<dagnet's emulation of MXNet's C library: {', '.join(sorted(_ENTRY_POINTS))}>"


LIB = _EmulatedLibrary()
