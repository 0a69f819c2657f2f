"""Layout changes through oneDNN's reorder primitive: plain NCHW arrays to NCHW16c
(``(N, C/16, H, W, 16)``, channels in blocks of 16: oneDNN's AVX-512 layout) and back."""

from __future__ import annotations

import threading

import numpy as np

from ._library import Library
from ._primitive import (
    KernelCache,
    MemoryDesc,
    Reorder,
    blocked_shape,
    output_array,
    plain_shape,
)

__all__ = ["to_blocked", "to_plain"]

_CACHE_SIZE = 256


class _LayoutChange:
    """One reorder between the plain and the NCHW16c layout of a plain shape."""

    def __init__(self, lib: Library, shape: tuple[int, ...], to_blocked: bool):
        self.lib = lib
        self.descs = (MemoryDesc(lib, shape), MemoryDesc(lib, shape, blocked=True))
        self.reorder = Reorder(lib, self.descs[0], self.descs[1].handle, output=not to_blocked)
        self._lock = threading.Lock()

    def run(self, plain: np.ndarray, blocked: np.ndarray, threads: int) -> None:
        with self._lock:
            self.reorder.run(self.lib, plain, blocked, threads)


_cache = KernelCache(_CACHE_SIZE, "reorder")


def _change(lib: Library, shape: tuple[int, ...], to_blocked: bool, threads: int):
    return _cache.get(lib, (shape, to_blocked), threads,
                      lambda: _LayoutChange(lib, shape, to_blocked))


def to_blocked(lib: Library, x: np.ndarray, threads: int, out: np.ndarray | None = None
               ) -> np.ndarray | None:
    """The C-contiguous float32 NCHW array ``x`` as NCHW16c (its channels a multiple of
    16), written into ``out`` when it fits; None when oneDNN has no reorder for it."""
    change = _change(lib, tuple(x.shape), True, threads)
    if change is None:
        return None
    y = output_array(out, blocked_shape(x.shape))
    change.run(x, y, threads)
    return y


def to_plain(lib: Library, x: np.ndarray, threads: int, out: np.ndarray | None = None
             ) -> np.ndarray | None:
    """The C-contiguous float32 NCHW16c array ``x`` as plain NCHW, written into ``out`` when
    it fits; None when oneDNN has no reorder for it."""
    shape = plain_shape(x.shape)
    change = _change(lib, shape, False, threads)
    if change is None:
        return None
    y = output_array(out, shape)
    change.run(y, x, threads)
    return y
