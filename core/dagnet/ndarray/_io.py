"""Saving and loading NDArrays: ``dagnet.nd.save`` and ``dagnet.nd.load``.

The file is a numpy ``.npz`` archive (a zip of ``.npy`` files), readable
with ``numpy.load`` and nothing else:

- ``a0``, ``a1``, ... hold the arrays in order;
- ``__dagnet__`` holds a JSON manifest: ``{"format": "dagnet.ndarray",
  "version": 1, "kind": "list" | "dict", "names": [...]}`` where ``names``
  are the dict keys in order (empty for a list).

This is **not** MXNet's binary ``.params`` format: files written by MXNet
cannot be loaded here, nor these by MXNet (convert through numpy).  The file
name is used as given (``np.savez`` would append ``.npz``; we do not).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._creation import array
from ._ndarray import NDArray

__all__ = ["save", "load", "FORMAT", "VERSION"]

FORMAT = "dagnet.ndarray"
VERSION = 1
_MANIFEST = "__dagnet__"


def save(fname: str | os.PathLike, data: NDArray | Sequence[NDArray] | Mapping[str, NDArray]
         ) -> None:
    """Save one NDArray, a list of them, or a dict of name -> NDArray to ``fname``.

    Waits for the arrays' pending writes.  :func:`load` returns a list for a
    single array or a list, and a dict for a dict.
    """
    if isinstance(data, NDArray):
        data = [data]
    if isinstance(data, Mapping):
        names = list(data)
        if not all(isinstance(n, str) for n in names):
            raise TypeError("save: dict keys must be strings")
        arrays = [data[n] for n in names]
        kind = "dict"
    elif isinstance(data, (list, tuple)):
        names, arrays, kind = [], list(data), "list"
    else:
        raise TypeError(f"save: expected an NDArray, a list of NDArrays or a dict of str to "
                        f"NDArray, got {type(data).__name__}")
    for index, item in enumerate(arrays):
        if not isinstance(item, NDArray):
            label = repr(names[index]) if names else str(index)
            raise TypeError(f"save: item {label} is {type(item).__name__}, not an NDArray")
    manifest = {"format": FORMAT, "version": VERSION, "kind": kind, "names": names}
    payload = {f"a{i}": item.asnumpy() for i, item in enumerate(arrays)}
    payload[_MANIFEST] = np.array(json.dumps(manifest))
    with open(os.fspath(fname), "wb") as stream:
        np.savez(stream, **payload)


def load(fname: str | os.PathLike, ctx: Any = None) -> list[NDArray] | dict[str, NDArray]:
    """Load what :func:`save` wrote: a list, or a dict of name -> NDArray (on ``ctx``,
    default the CPU)."""
    from ..context import cpu

    path = os.fspath(fname)
    with open(path, "rb") as stream:
        magic = stream.read(4)
        if magic[:2] != b"PK":
            raise ValueError(
                f"{path} is not a dagnet NDArray file (a numpy .npz archive); MXNet's binary "
                f".params format is not supported -- load it with MXNet and save the arrays "
                f"through numpy")
        stream.seek(0)
        with np.load(stream, allow_pickle=False) as archive:
            if _MANIFEST not in archive.files:
                raise ValueError(f"{path} is an .npz archive without a dagnet manifest; "
                                 f"read it with numpy.load")
            manifest = json.loads(str(archive[_MANIFEST]))
            if manifest.get("format") != FORMAT or manifest.get("version", 0) > VERSION:
                raise ValueError(f"{path}: unsupported format {manifest.get('format')!r} "
                                 f"version {manifest.get('version')!r}")
            count = len([f for f in archive.files if f != _MANIFEST])
            where = ctx if ctx is not None else cpu()
            arrays = []
            for index in range(count):
                values = archive[f"a{index}"]
                arrays.append(array(values, ctx=where, dtype=values.dtype))
    if manifest["kind"] == "dict":
        return dict(zip(manifest["names"], arrays))
    return arrays
