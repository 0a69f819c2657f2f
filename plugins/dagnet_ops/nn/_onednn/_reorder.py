"""Layout changes through oneDNN's reorder primitive: plain NCHW arrays to channels in
blocks (``(N, C/block, H, W, block)``: NCHW16c, oneDNN's AVX-512 layout, by default; or
NCHW8c, its AVX2 one) and back."""

from __future__ import annotations

import threading

import numpy as np

from ._library import Library
from ._primitive import (
    CHANNEL_BLOCK,
    KernelCache,
    MemoryDesc,
    Reorder,
    ReorderReplay,
    blocked_shape,
    output_array,
    plain_shape,
)

__all__ = ["to_blocked", "to_plain", "layout_change_replay"]

_CACHE_SIZE = 256


class _LayoutChange:
    """One reorder between the plain and a channel-blocked layout of a plain shape."""

    def __init__(self, lib: Library, shape: tuple[int, ...], to_blocked: bool, block: int):
        self.lib = lib
        self.descs = (MemoryDesc(lib, shape), MemoryDesc(lib, shape, block=block))
        self.reorder = Reorder(lib, self.descs[0], self.descs[1].handle, output=not to_blocked)
        self._lock = threading.Lock()

    def run(self, plain: np.ndarray, blocked: np.ndarray, threads: int) -> None:
        with self._lock:
            self.reorder.run(self.lib, plain, blocked, threads)

    def replay(self, plain: np.ndarray, blocked: np.ndarray, threads: int) -> ReorderReplay:
        return ReorderReplay(self.lib, self.reorder, plain, blocked, threads)


_cache = KernelCache(_CACHE_SIZE, "reorder")


def _change(lib: Library, shape: tuple[int, ...], to_blocked: bool, threads: int, block: int):
    return _cache.get(lib, (shape, to_blocked, block), threads,
                      lambda: _LayoutChange(lib, shape, to_blocked, block))


def to_blocked(lib: Library, x: np.ndarray, threads: int, out: np.ndarray | None = None,
               block: int = CHANNEL_BLOCK) -> np.ndarray | None:
    """The C-contiguous float32 NCHW array ``x`` with its channels (a multiple of
    ``block``) in blocks of ``block``, written into ``out`` when it fits; None when oneDNN
    has no reorder for it."""
    change = _change(lib, tuple(x.shape), True, threads, block)
    if change is None:
        return None
    y = output_array(out, blocked_shape(x.shape, block))
    change.run(x, y, threads)
    return y


def to_plain(lib: Library, x: np.ndarray, threads: int, out: np.ndarray | None = None
             ) -> np.ndarray | None:
    """The C-contiguous float32 channel-blocked array ``x`` (NCHW16c, NCHW8c) as plain
    NCHW, written into ``out`` when it fits; None when oneDNN has no reorder for it."""
    shape = plain_shape(x.shape)
    change = _change(lib, shape, False, threads, x.shape[-1])
    if change is None:
        return None
    y = output_array(out, shape)
    change.run(y, x, threads)
    return y


def layout_change_replay(lib: Library, plain: np.ndarray, blocked: np.ndarray,
                         to_blocked: bool, threads: int) -> ReorderReplay | None:
    """:func:`to_blocked` (or :func:`to_plain`) between these very arrays as oneDNN's calls
    (see ``ReorderReplay``); None when oneDNN has no reorder for them."""
    change = _change(lib, tuple(plain.shape), to_blocked, threads, blocked.shape[-1])
    return None if change is None else change.replay(plain, blocked, threads)
