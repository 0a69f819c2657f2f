"""A fully connected layer for inference through oneDNN's inner product: ``x @ w.T + b``
on float32 matrices, with element-wise post-ops (the fused activation).

Each problem (shapes, bias, post-ops) builds its primitive once per thread count.  The
data and the output stay plain; the weights go into the layout oneDNN picks, best once
per set of weights (:meth:`Kernel.prepared`).
"""

from __future__ import annotations

import ctypes
from typing import NamedTuple

from ._library import Library
from ._primitive import (
    FORWARD_INFERENCE,
    Argument,
    Kernel,
    KernelCache,
    MemoryDesc,
    post_ops_attr,
)

__all__ = ["inner_product_kernel"]

_CACHE_SIZE = 64


class _Problem(NamedTuple):
    x_shape: tuple[int, int]
    w_shape: tuple[int, int]
    bias: bool
    post_ops: tuple


def _build(lib: Library, p: _Problem) -> Kernel:
    x = MemoryDesc(lib, p.x_shape)
    w = MemoryDesc(lib, p.w_shape, any_layout=True)
    b = MemoryDesc(lib, (p.w_shape[0],)) if p.bias else None
    y_shape = (p.x_shape[0], p.w_shape[0])
    y = MemoryDesc(lib, y_shape)
    attr = post_ops_attr(lib, p.post_ops)
    try:
        pd = ctypes.c_void_p()
        lib.check(lib.dll.dnnl_inner_product_forward_primitive_desc_create(
            ctypes.byref(pd), lib.engine, FORWARD_INFERENCE, x.handle, w.handle,
            b.handle if b else None, y.handle, attr), "inner product descriptor")
    finally:
        lib.dll.dnnl_primitive_attr_destroy(attr)
    args = [Argument("src", p.x_shape), Argument("weights", p.w_shape),
            Argument("dst", y_shape, output=True)]
    if p.bias:
        args.insert(2, Argument("bias", (p.w_shape[0],)))
    return Kernel(lib, pd, args, "inner product")


_cache = KernelCache(_CACHE_SIZE, "inner product")


def inner_product_kernel(lib: Library, x_shape, w_shape, threads: int, bias: bool,
                         post_ops: tuple) -> Kernel | None:
    """The kernel of ``(N, K)`` data times ``(O, K)`` weights (plus a bias argument when
    ``bias``) with ``post_ops``; None when oneDNN has none.  Run it on ``{"src",
    "weights", "bias", "dst"}``, the weights best :meth:`Kernel.prepared` once."""
    if not all(x_shape) or not all(w_shape):
        return None
    problem = _Problem(tuple(x_shape), tuple(w_shape), bias, tuple(post_ops))
    return _cache.get(lib, problem, threads, lambda: _build(lib, problem))
