"""DLPack exchange (MXNet's ``to_dlpack_for_read``, ``to_dlpack_for_write`` and
``from_dlpack``).

An exported array is a PyCapsule named ``"dltensor"`` holding a ``DLManagedTensor``
(the unversioned DLPack protocol MXNet 1.x speaks), made by numpy's own
``__dlpack__`` over the array's memory.  The capsule keeps that memory alive: the
exported view holds the array's storage chunk, so freeing the NDArray does not hand the
block back to the pool while a consumer still reads it.  ``from_dlpack`` accepts such a
capsule -- from dagnet, MXNet, PyTorch or any other producer -- or any object with
``__dlpack__``; the NDArray it returns shares the producer's memory.  Only host (CPU)
memory is exchanged; a capsule of device memory is refused with an error naming the
device.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .._errors import DagnetError
from ..context import Context
from ..runtime import adopt_host_buffer, current_engine, device_of
from ._ndarray import NDArray, wrap_chunk

__all__ = ["DLPackError", "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write"]

_CAPSULE_NAME = b"dltensor"
_DL_CPU = 1
_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                 10: "rocm", 13: "cuda_managed"}


class DLPackError(DagnetError, ValueError):
    """A DLPack capsule or producer dagnet cannot take (used, not a tensor, not on the host)."""


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLTensorHead(ctypes.Structure):
    """The first fields of DLPack's ``DLTensor`` (enough to read the device)."""

    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


def _export(array: NDArray, what: str) -> Any:
    if not isinstance(array, NDArray):
        raise DLPackError(f"{what}: expected an NDArray, got {type(array).__name__}")
    if array.stype != "default":
        raise DLPackError(f"{what}: only dense arrays can be exported, this one is "
                          f"{array.stype!r}; convert it with tostype('default') first")
    chunk = array._chunk
    if not chunk.dev.numpy:
        raise DLPackError(f"{what}: only arrays in host memory can be exported, this one is "
                          f"on {array.context}; copy it with as_in_context(mx.cpu()) first")
    # Wait for every pending function that uses the array (reads and writes): the
    # consumer may write (for_write), and must see the final values (for_read).
    current_engine().wait_for_var(chunk.var)
    raw_buffer = chunk.handle.data
    nbytes = raw_buffer.nbytes
    if nbytes:
        raw = (ctypes.c_uint8 * nbytes).from_address(raw_buffer.ctypes.data)
        raw._owner = chunk  # the capsule keeps the storage block out of the pool
        flat = np.ctypeslib.as_array(raw)
    else:
        flat = np.empty(0, np.uint8)
    view = np.ndarray(array.shape, array._dtype, flat, array._offset, array._strides)
    return view.__dlpack__()


def to_dlpack_for_read(data: NDArray) -> Any:
    """A DLPack capsule (``"dltensor"``) viewing ``data``'s memory, for a consumer that
    only reads it; waits for the writes pending on ``data`` first."""
    return _export(data, "to_dlpack_for_read")


def to_dlpack_for_write(data: NDArray) -> Any:
    """A DLPack capsule (``"dltensor"``) viewing ``data``'s memory, for a consumer that
    may write it; waits for every pending read and write of ``data`` first."""
    return _export(data, "to_dlpack_for_write")


class _Producer:
    """What ``numpy.from_dlpack`` asks of a producer, around a bare capsule."""

    def __init__(self, capsule: Any, device: tuple[int, int]):
        self._capsule = capsule
        self._device = device

    def __dlpack__(self, **_: Any) -> Any:
        return self._capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._device


def _capsule_device(capsule: Any) -> tuple[int, int]:
    name = _get_name(capsule)
    if not _is_valid(capsule, name):
        raise DLPackError("from_dlpack: not a valid PyCapsule")
    if name != _CAPSULE_NAME:
        used = name == b"used_dltensor"
        raise DLPackError(
            "from_dlpack: this DLPack capsule was already consumed; a capsule can be "
            "consumed only once, export the array again" if used else
            f"from_dlpack: expected a DLPack capsule named 'dltensor', got "
            f"{(name or b'').decode(errors='replace')!r}")
    head = _DLTensorHead.from_address(_get_pointer(capsule, _CAPSULE_NAME))
    return head.device.device_type, head.device.device_id


def from_dlpack(dlpack: Any) -> NDArray:
    """An NDArray sharing the memory of a DLPack tensor: a ``"dltensor"`` PyCapsule (each
    is consumed once) or an object with ``__dlpack__``.  The tensor must be in host
    memory; the array is on ``cpu(0)``."""
    if type(dlpack).__name__ == "PyCapsule":
        device = _capsule_device(dlpack)
        producer: Any = _Producer(dlpack, device)
    elif hasattr(dlpack, "__dlpack__") and hasattr(dlpack, "__dlpack_device__"):
        device = tuple(dlpack.__dlpack_device__())
        producer = dlpack
    else:
        raise DLPackError(f"from_dlpack: expected a DLPack capsule or an object with "
                          f"__dlpack__, got {type(dlpack).__name__}")
    if device[0] != _DL_CPU:
        kind = _DEVICE_NAMES.get(device[0], f"device type {device[0]}")
        raise DLPackError(f"from_dlpack: the tensor is in {kind} memory (device "
                          f"{device[1]}); only host memory is exchanged, copy it to the CPU "
                          f"on the producer's side first")
    values = np.from_dlpack(producer)
    if not values.flags["C_CONTIGUOUS"]:
        values = np.ascontiguousarray(values)  # dagnet's arrays are dense: copy strided input
    dev = device_of(Context("cpu", 0))
    chunk = adopt_host_buffer(values, dev)
    data = np.ndarray(values.shape, values.dtype, chunk.handle.data)
    return wrap_chunk(chunk, 0, tuple(values.shape), values.dtype, None, data)
