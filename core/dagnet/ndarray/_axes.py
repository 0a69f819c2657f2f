"""MXNet's NDArray helpers that rearrange axes or encode indices through an operator:
``moveaxis`` (through ``transpose``) and the legacy ``onehot_encode`` (through
``one_hot``)."""

from __future__ import annotations

from collections.abc import Sequence

from . import _invoke
from ._ndarray import NDArray

__all__ = ["moveaxis", "onehot_encode"]


def _axes(axes: int | Sequence[int], ndim: int, what: str) -> list[int]:
    listed = [axes] if isinstance(axes, int) else list(axes)
    normalized = []
    for axis in listed:
        if not -ndim <= axis < ndim:
            raise ValueError(f"moveaxis: {what} {axis} is out of range for an array of "
                             f"{ndim} dimensions; use 0 <= {what} < {ndim} (or negative "
                             f"from the end)")
        normalized.append(axis % ndim)
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"moveaxis: repeated axis in {what} {axes}")
    return normalized


def moveaxis(tensor: NDArray, source: int | Sequence[int],
             destination: int | Sequence[int]) -> NDArray:
    """``tensor`` with its ``source`` axes moved to the ``destination`` positions, the
    others keeping their order (``numpy.moveaxis``), through ``transpose``."""
    ndim = tensor.ndim
    moved = _axes(source, ndim, "source")
    places = _axes(destination, ndim, "destination")
    if len(moved) != len(places):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must "
                         f"name as many axes")
    order = [axis for axis in range(ndim) if axis not in moved]
    for place, axis in sorted(zip(places, moved)):
        order.insert(place, axis)
    return _invoke.invoke("transpose", [tensor], {"axes": tuple(order)})


def onehot_encode(indices: NDArray, out: NDArray) -> NDArray:
    """Write the one-hot rows of ``indices`` into ``out`` (its second dimension is the
    depth) and return ``out`` (MXNet's legacy form of ``one_hot``)."""
    if not isinstance(out, NDArray) or out.ndim != 2:
        raise ValueError(f"onehot_encode: out must be a 2-D NDArray (indices x depth), got "
                         f"{getattr(out, 'shape', type(out).__name__)}")
    return _invoke.invoke("one_hot", [indices], {"depth": out.shape[1],
                                                 "dtype": out._dtype.name}, out)
