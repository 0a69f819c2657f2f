"""``mxnet.ndarray.utils``: creating, saving and loading arrays of any storage type;
the names are ``dagnet.ndarray``'s, the same objects."""

from __future__ import annotations

from . import array, empty, load, load_frombuffer, save, zeros

__all__ = ["array", "empty", "load", "load_frombuffer", "save", "zeros"]
