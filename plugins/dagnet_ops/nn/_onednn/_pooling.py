"""Max pooling and its gradient through oneDNN.

The forward runs oneDNN's inference kernel (no workspace).  oneDNN's max pooling
backward reads a workspace (where each window's maximum was) that its training forward
writes; dagnet's ``_backward_Pooling`` has the data and the output but no workspace, so
it runs oneDNN's training forward again for it (one pass of the data) and then the
backward.  The primitives take and give plain NCHW arrays.
"""

from __future__ import annotations

import ctypes
from typing import NamedTuple

import numpy as np

from ._library import DIMS, Library
from ._primitive import (
    EIGHT_CHANNEL_TAG,
    FORWARD_INFERENCE,
    FORWARD_TRAINING,
    Argument,
    Kernel,
    KernelCache,
    MemoryDesc,
    output_array,
    pooled_bytes,
    scratchpad_attr,
)

__all__ = ["PoolProblem", "max_pool", "max_pool_grad"]

_POOLING_MAX = 0x1FF
_CACHE_SIZE = 64


class PoolProblem(NamedTuple):
    """One max pooling's shapes and geometry; ``pad_after`` may exceed ``pad`` (MXNet's
    ``full`` convention) or fall short of it."""

    x_shape: tuple[int, ...]
    y_shape: tuple[int, ...]
    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    pad: tuple[int, ...]
    pad_after: tuple[int, ...]


def _geometry(p: PoolProblem) -> tuple:
    """oneDNN's strides, kernel, dilation (none), padding before and after."""
    return (DIMS(*p.stride), DIMS(*p.kernel), DIMS(*(0 for _ in p.kernel)),
            DIMS(*p.pad), DIMS(*p.pad_after))


def _forward_pd(lib, prop, x, y, geometry, attr):
    pd = ctypes.c_void_p()
    lib.check(lib.dll.dnnl_pooling_forward_primitive_desc_create(
        ctypes.byref(pd), lib.engine, prop, _POOLING_MAX, x.handle, y.handle,
        *geometry, attr), "max pooling forward descriptor")
    return pd


class _MaxPool:
    """The inference forward kernel of one problem: on channels in blocks of 8 (with the
    reorders) where the channels divide so, for oneDNN's kernel of the plain layout
    (``simple_nchw``) takes about ten times as long as its blocked kernel and the reorders
    together."""

    def __init__(self, lib: Library, p: PoolProblem):
        tag = EIGHT_CHANNEL_TAG.get(len(p.x_shape)) if p.x_shape[1] % 8 == 0 else None
        x = MemoryDesc(lib, p.x_shape, tag=tag)
        y = MemoryDesc(lib, p.y_shape, any_layout=tag is not None)
        attr = scratchpad_attr(lib)
        try:
            pd = _forward_pd(lib, FORWARD_INFERENCE, x, y, _geometry(p), attr)
        finally:
            lib.dll.dnnl_primitive_attr_destroy(attr)
        self.forward = Kernel(lib, pd, [Argument("src", p.x_shape),
                                        Argument("dst", p.y_shape, output=True)],
                              "max pooling forward")

    def run(self, x, y, threads):
        self.forward.run({"src": x, "dst": y}, threads)


class _MaxPoolGrad:
    """The forward (for the workspace) and backward kernels of one problem."""

    def __init__(self, lib: Library, p: PoolProblem):
        x, y = MemoryDesc(lib, p.x_shape), MemoryDesc(lib, p.y_shape)
        geometry = _geometry(p)
        attr = scratchpad_attr(lib)
        try:
            forward = _forward_pd(lib, FORWARD_TRAINING, x, y, geometry, attr)
            hint = _forward_pd(lib, FORWARD_TRAINING, x, y, geometry, attr)
            try:
                backward = ctypes.c_void_p()
                lib.check(lib.dll.dnnl_pooling_backward_primitive_desc_create(
                    ctypes.byref(backward), lib.engine, _POOLING_MAX, x.handle, y.handle,
                    *geometry, hint, attr), "max pooling backward descriptor")
            finally:
                lib.dll.dnnl_primitive_desc_destroy(hint)
        finally:
            lib.dll.dnnl_primitive_attr_destroy(attr)
        self.forward = Kernel(lib, forward, [
            Argument("src", p.x_shape), Argument("dst", p.y_shape, output=True),
            Argument("workspace", None, output=True)], "max pooling forward")
        self.backward = Kernel(lib, backward, [
            Argument("diff_dst", p.y_shape), Argument("workspace", None),
            Argument("diff_src", p.x_shape, output=True)], "max pooling backward")

    def run(self, x, dy, dx, threads):
        with pooled_bytes(self.forward.nbytes("workspace"), dy.nbytes) as (workspace, y):
            y = y.view(np.float32).reshape(dy.shape)  # the forward's output again, unused
            self.forward.run({"src": x, "dst": y, "workspace": workspace}, threads)
            self.backward.run({"diff_dst": dy, "workspace": workspace, "diff_src": dx}, threads)


_cache = KernelCache(_CACHE_SIZE, "max pooling")


def _kernels_for(lib: Library, kind: type, problem: PoolProblem, threads: int):
    """The cached ``kind`` (:class:`_MaxPool` or :class:`_MaxPoolGrad`) of ``problem``, or
    None where oneDNN has none."""
    return _cache.get(lib, (kind.__name__, problem), threads, lambda: kind(lib, problem))


def _problem(x_shape, y_shape, kernel, stride, pad, pad_after) -> PoolProblem | None:
    if not all(x_shape):
        return None  # oneDNN takes no empty arrays; numpy's kernels handle them
    return PoolProblem(tuple(x_shape), tuple(y_shape), tuple(kernel), tuple(stride),
                       tuple(pad), tuple(pad_after))


def max_pool_grad(lib, x, dy, kernel, stride, pad, pad_after, threads, out=None):
    """The gradient of max pooling ``x`` ``(N, C, *S)`` (float32, C order) for the output
    gradient ``dy``: each window's gradient goes to its maximum.  Written into ``out`` when
    it fits (float32, C order); None when oneDNN has no kernel for it."""
    problem = _problem(x.shape, dy.shape, kernel, stride, pad, pad_after)
    kernels = problem and _kernels_for(lib, _MaxPoolGrad, problem, threads)
    if kernels is None:
        return None
    dx = output_array(out, x.shape)
    kernels.run(x, dy, dx, threads)
    return dx


def max_pool(lib, x, y_shape, kernel, stride, pad, pad_after, threads, out=None):
    """Max pooling of ``x`` ``(N, C, *S)`` (float32, C order) into ``y_shape``, written into
    ``out`` when it fits (float32, C order); None when oneDNN has no kernel for it."""
    problem = _problem(x.shape, y_shape, kernel, stride, pad, pad_after)
    kernels = problem and _kernels_for(lib, _MaxPool, problem, threads)
    if kernels is None:
        return None
    y = output_array(out, y_shape)
    kernels.run(x, y, threads)
    return y
