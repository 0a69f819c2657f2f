"""What the contrib operators share: errors naming the operator, writing a result by its
request, scattered accumulation, and the rules of the operators pooling regions of
interest."""

from __future__ import annotations

from typing import Any

import numpy as np

from dagnet import OperatorError, ShapeError
from dagnet.operator import OpReqType, assign

__all__ = ["contrib_error", "host", "kernel_error", "put", "roi_batch", "roi_infer_type",
           "scatter_add"]


def contrib_error(op: str, message: str) -> ShapeError:
    """A shape or parameter problem found at inference, naming the operator."""
    return ShapeError(f"operator {op!r}: {message}")


def kernel_error(op: str, message: str) -> OperatorError:
    """A problem with the values found while running, naming the operator."""
    return OperatorError(f"operator {op!r}: {message}")


def put(out: Any, req: OpReqType, value: Any) -> None:
    """Write ``value`` into ``out`` per ``req``, cast to ``out``'s dtype first."""
    if req is OpReqType.NULL:
        return
    if hasattr(value, "dtype") and value.dtype != out.dtype:
        value = value.astype(out.dtype)
    assign(out, req, value)


def scatter_add(xp: Any, target: Any, index: Any, values: Any) -> None:
    """``target[index] += values``, repeated indices accumulating."""
    at = getattr(xp.add, "at", None)
    if at is not None:
        at(target, index, values)
    else:  # pragma: no cover - old cupy only
        import cupyx

        cupyx.scatter_add(target, index, values)


def host(x: Any) -> np.ndarray:
    """A numpy array of ``x`` (copied from the device when it is not on the host)."""
    return x.get() if hasattr(x, "get") else np.asarray(x)


def roi_infer_type(attrs: Any, ins: list, outs: list) -> tuple[list, list]:
    """The type rule of an operator pooling ``rois`` out of ``data``: both inputs and the
    output share one dtype, the first known of data's, rois' and the output's."""
    dtype = ins[0] if ins[0] is not None else (ins[1] if ins[1] is not None else outs[0])
    return [dtype, dtype], [dtype]


def roi_batch(op: str, roi: Any, n: int, r: int) -> int:
    """The batch index that roi number ``r`` names in its first field, checked against the
    ``n`` samples of the data."""
    batch = int(roi[0])
    if not 0 <= batch < n:
        raise kernel_error(op, f"roi {r} names batch {batch}, but data has {n}")
    return batch
