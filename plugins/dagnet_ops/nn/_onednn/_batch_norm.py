"""Batch normalization of NCHW16c data through oneDNN: forward (with the batch's statistics
or given ones) and backward.

The data and its gradients are NCHW16c arrays (``(N, C/16, H, W, 16)``, oneDNN's AVX-512
layout, taken as they are); the per-channel arrays (scale, shift, mean, variance and
their gradients) are plain float32 vectors of ``C``.  Each problem's primitives are built
once per thread count and kept.
"""

from __future__ import annotations

import ctypes
from typing import NamedTuple

import numpy as np

from ._library import Library
from ._primitive import (
    BACKWARD,
    CHANNEL_BLOCK,
    FORWARD_TRAINING,
    Argument,
    Kernel,
    KernelCache,
    MemoryDesc,
    output_array,
    plain_shape,
    scratchpad_attr,
)

__all__ = ["BatchNormProblem", "batch_norm_forward", "batch_norm_backward"]

_USE_GLOBAL_STATS, _USE_SCALE, _USE_SHIFT = 1, 2, 4
_CACHE_SIZE = 256


class BatchNormProblem(NamedTuple):
    """One batch normalization: the data's plain NCHW shape, epsilon, and whether the
    statistics are given (``global_stats``) rather than the batch's."""

    shape: tuple[int, ...]
    eps: float
    global_stats: bool

    @property
    def flags(self) -> int:
        return _USE_SCALE | _USE_SHIFT | (_USE_GLOBAL_STATS if self.global_stats else 0)


def _forward_pd(lib: Library, p: BatchNormProblem, data: MemoryDesc, attr) -> ctypes.c_void_p:
    pd = ctypes.c_void_p()
    lib.check(lib.dll.dnnl_batch_normalization_forward_primitive_desc_create(
        ctypes.byref(pd), lib.engine, FORWARD_TRAINING, data.handle, data.handle,
        p.eps, p.flags, attr), "batch normalization forward descriptor")
    return pd


def _channels(p: BatchNormProblem) -> tuple[int]:
    return (p.shape[1],)


def _forward(lib: Library, p: BatchNormProblem) -> Kernel:
    data, attr = MemoryDesc(lib, p.shape, block=CHANNEL_BLOCK), scratchpad_attr(lib)
    try:
        pd = _forward_pd(lib, p, data, attr)
    finally:
        lib.dll.dnnl_primitive_attr_destroy(attr)
    c, computed = _channels(p), not p.global_stats
    args = [Argument("src", None), Argument("dst", None, output=True),
            Argument("scale", c), Argument("shift", c),
            Argument("mean", c, output=computed), Argument("variance", c, output=computed)]
    return Kernel(lib, pd, args, "batch normalization forward")


def _backward(lib: Library, p: BatchNormProblem) -> Kernel:
    data, attr = MemoryDesc(lib, p.shape, block=CHANNEL_BLOCK), scratchpad_attr(lib)
    try:
        hint = _forward_pd(lib, p, data, attr)
        try:
            pd = ctypes.c_void_p()
            lib.check(lib.dll.dnnl_batch_normalization_backward_primitive_desc_create(
                ctypes.byref(pd), lib.engine, BACKWARD, data.handle, data.handle, data.handle,
                p.eps, p.flags, hint, attr), "batch normalization backward descriptor")
        finally:
            lib.dll.dnnl_primitive_desc_destroy(hint)
    finally:
        lib.dll.dnnl_primitive_attr_destroy(attr)
    c = _channels(p)
    args = [Argument("src", None), Argument("mean", c), Argument("variance", c),
            Argument("diff_dst", None), Argument("scale", c),
            Argument("diff_src", None, output=True), Argument("diff_scale", c, output=True),
            Argument("diff_shift", c, output=True)]
    return Kernel(lib, pd, args, "batch normalization backward")


_cache = KernelCache(_CACHE_SIZE, "batch normalization")


def _kernel(lib: Library, pass_: str, problem: BatchNormProblem, threads: int) -> Kernel | None:
    build = _forward if pass_ == "forward" else _backward
    return _cache.get(lib, (pass_, problem), threads, lambda: build(lib, problem))


def _vector(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.float32)


def batch_norm_forward(lib: Library, x, scale, shift, eps, threads, out=None, mean=None,
                       variance=None):
    """``(y, mean, variance)`` of NCHW16c ``x`` (float32): ``y = (x - mean) / sqrt(variance +
    eps) * scale + shift`` per channel, written into ``out`` when it fits, with the batch's
    mean and (biased) variance, or the given ones when ``mean`` and ``variance`` are given;
    None when oneDNN has no kernel for it."""
    given = mean is not None
    problem = BatchNormProblem(plain_shape(x.shape), float(eps), given)
    kernel = _kernel(lib, "forward", problem, threads)
    if kernel is None:
        return None
    channels = problem.shape[1]
    mean = _vector(mean) if given else np.empty(channels, np.float32)
    variance = _vector(variance) if given else np.empty(channels, np.float32)
    y = output_array(out, x.shape)
    kernel.run({"src": x, "dst": y, "scale": _vector(scale), "shift": _vector(shift),
                "mean": mean, "variance": variance}, threads)
    return y, mean, variance


def batch_norm_backward(lib: Library, dy, x, scale, mean, variance, eps, global_stats, threads,
                        out=None):
    """``(dx, dscale, dshift)`` of :func:`batch_norm_forward` (statistics ``mean`` and
    ``variance``: the batch's unless ``global_stats``), ``dx`` written into ``out`` when it
    fits; None when oneDNN has no kernel for it."""
    problem = BatchNormProblem(plain_shape(x.shape), float(eps), bool(global_stats))
    kernel = _kernel(lib, "backward", problem, threads)
    if kernel is None:
        return None
    channels = problem.shape[1]
    dx = output_array(out, x.shape)
    dscale, dshift = np.empty(channels, np.float32), np.empty(channels, np.float32)
    kernel.run({"src": x, "mean": _vector(mean), "variance": _vector(variance), "diff_dst": dy,
                "scale": _vector(scale), "diff_src": dx, "diff_scale": dscale,
                "diff_shift": dshift}, threads)
    return dx, dscale, dshift
