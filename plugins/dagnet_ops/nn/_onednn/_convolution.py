"""Convolution through oneDNN: forward, data gradient and weight (+ bias) gradient.

Each distinct problem (shapes, stride, dilation, padding, groups) builds its three
primitives once per thread count (oneDNN plans a primitive's work for the threads in
effect when it is made); a training step repeats the same problems, so later calls only
point the memory objects at the new arrays and run.  Layouts are left to oneDNN
(``format_tag any``: blocked channels on AVX-512), and the kernels reorder to and from
the plain NCHW / OIHW arrays dagnet passes, except where ``ConvProblem.plain_layouts``
keeps those.  With ``blocked=16`` the data and its gradients are NCHW16c arrays
(``(N, C/16, H, W, 16)``, oneDNN's own layout on AVX-512), with ``blocked=8`` NCHW8c
arrays (its AVX2 one), taken and given as they are; only the filters are reordered.
:func:`channel_block` asks oneDNN which of those this CPU's kernels want.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ._library import DIMS, Library, OneDNNError
from ._primitive import (
    ARG,
    BLOCKED_TAGS,
    CHANNEL_BLOCK,
    FORWARD_INFERENCE,
    FORWARD_TRAINING,
    QUERY_EXEC_ARG_MD,
    Argument,
    Kernel,
    KernelCache,
    MemoryDesc,
    blocked_shape,
    output_array,
    plain_shape,
    pooled_bytes,
    post_ops_attr,
)

__all__ = ["ConvProblem", "kernel_for", "inference_kernel", "fuses_eltwise", "conv_forward",
           "conv_grad_data", "conv_grad_weight", "conv_grads", "takes_blocked",
           "channel_block", "picked_block", "runs_on_blocks"]

_CONVOLUTION_DIRECT = 1
_CACHE_SIZE = 256  # problems kept: a large network has a few dozen distinct ones


class ConvProblem(NamedTuple):
    """One convolution's shapes and parameters (dagnet's: ``w`` is ``(F, C/g, *kernel)``,
    the data's shapes plain NCHW even when ``blocked``); the bias is added by the layer,
    not here.  ``blocked``: 0, or the channels per block of the data, the output and their
    gradients (16: NCHW16c arrays, 8: NCHW8c)."""

    x_shape: tuple[int, ...]
    w_shape: tuple[int, ...]
    y_shape: tuple[int, ...]
    stride: tuple[int, ...]
    dilate: tuple[int, ...]
    pad: tuple[int, ...]
    groups: int
    blocked: int = 0
    #: the inference kernel's: a bias argument, and the post-ops (see ``post_ops_attr``)
    bias: bool = False
    post_ops: tuple = ()

    def plain_layouts(self, pass_: str) -> bool:
        """Whether ``pass_`` runs on the plain layouts (oneDNN's matrix-product kernels)
        rather than oneDNN's choice: for a 1x1 convolution without padding, where they take
        about half the time of the blocked kernels with the reorders; for the data gradient
        of an ungrouped convolution with fewer input channels than a channel block (a
        network's first layer), where oneDNN 3.2 picks a channel-last kernel three times
        slower."""
        if self.blocked:
            return False
        pointwise = all(k == 1 for k in self.w_shape[2:]) and not any(self.pad)
        few_channels = self.groups == 1 and self.w_shape[1] < CHANNEL_BLOCK
        return pointwise or (pass_ == "backward_data" and few_channels)

    @property
    def onednn_w_shape(self) -> tuple[int, ...]:
        """The weight as oneDNN sees it: ``(g, F/g, C/g, *kernel)`` with groups."""
        if self.groups == 1:
            return self.w_shape
        return (self.groups, self.w_shape[0] // self.groups, *self.w_shape[1:])


class _Descs:
    """The memory descriptors and geometry arrays shared by a problem's primitives."""

    def __init__(self, lib: Library, p: ConvProblem, layout_free: bool):
        # layout_free: oneDNN picks the layouts (reordered to and from), the data's
        # NCHW16c when the problem is blocked
        self.x, self.y = (MemoryDesc(lib, shape, any_layout=layout_free and not p.blocked,
                                     block=p.blocked) for shape in (p.x_shape, p.y_shape))
        self.w = MemoryDesc(lib, p.onednn_w_shape, any_layout=layout_free)
        self.stride = DIMS(*p.stride)
        self.dilate = DIMS(*(d - 1 for d in p.dilate))  # oneDNN counts the gaps
        self.pad = DIMS(*p.pad)
        self.b = MemoryDesc(lib, (p.w_shape[0],)) if p.bias else None
        self.attr = post_ops_attr(lib, p.post_ops)
        self.lib = lib

    def __del__(self):
        self.lib.dll.dnnl_primitive_attr_destroy(self.attr)


def _forward_pd(lib: Library, d: _Descs) -> ctypes.c_void_p:
    pd = ctypes.c_void_p()
    lib.check(lib.dll.dnnl_convolution_forward_primitive_desc_create(
        ctypes.byref(pd), lib.engine, FORWARD_TRAINING, _CONVOLUTION_DIRECT,
        d.x.handle, d.w.handle, None, d.y.handle,
        d.stride, d.dilate, d.pad, d.pad, d.attr), "convolution forward descriptor")
    return pd


def _inference(lib: Library, p: ConvProblem, d: _Descs, threads: int) -> Kernel:
    """The forward kernel for inference: with a bias and the problem's post-ops (a sum
    post-op reads the destination's old values).

    Left to choose the data's layout for inference, oneDNN 3.2 on AVX2 picks channels-last
    kernels (``brgconv``, ``brdgmm_dw``).  For a grouped (depthwise) convolution their
    reorders from and to NCHW take longer than the convolution -- a depthwise 3x3 of 96
    channels at 112x112 took 4.3 ms with them against 0.65 ms on channels in blocks of 8 --
    so its data takes the layout oneDNN picks for its training kernels (blocks of 8 on
    AVX2, 16 on AVX-512; plain where the channels do not divide).  An ungrouped one on
    plain data keeps oneDNN's choice, within a tenth of the blocked kernels either way.

    On channel-blocked data (``p.blocked``) an ungrouped convolution wider than 1x1 has two
    kernels: oneDNN's on the blocks, and the one oneDNN picks for inference when left to
    choose, with reorders from and to the blocks.  Neither is faster everywhere (on AVX2,
    oneDNN's channels-last kernel took 3.6 ms against 4.7 ms for a 3x3 layer of 256
    channels at 14x14, and 3.0 ms against 2.8 ms for one of 64 at 56x56), so both are
    timed on this machine at first use and the faster kept."""
    accumulate = any(op[0] == "sum" for op in p.post_ops)
    if p.blocked:
        on_blocks = _inference_kernel(lib, p, d, d.x.handle, d.y.handle, accumulate)
        if p.groups > 1 or all(k == 1 for k in p.w_shape[2:]):
            return on_blocks
        chosen = [MemoryDesc(lib, shape, any_layout=True) for shape in (p.x_shape, p.y_shape)]
        try:
            on_choice = _inference_kernel(lib, p, d, chosen[0].handle, chosen[1].handle,
                                          accumulate)
        except OneDNNError:
            return on_blocks
        if on_choice.takes_layout("src", d.x) and on_choice.takes_layout("dst", d.y):
            return on_blocks  # oneDNN's choice is the blocks
        return min((on_blocks, on_choice), key=lambda kernel: _seconds(kernel, p, threads))
    hint = None
    x_md, y_md = d.x.handle, d.y.handle
    if p.groups > 1 and not p.plain_layouts("inference"):
        try:
            hint = _forward_pd(lib, d)
        except OneDNNError:
            pass
        else:
            x_md, y_md = (lib.dll.dnnl_primitive_desc_query_md(hint, QUERY_EXEC_ARG_MD, ARG[name])
                          for name in ("src", "dst"))
    try:
        return _inference_kernel(lib, p, d, x_md, y_md, accumulate)
    finally:
        if hint is not None:  # the new descriptor holds copies of its memory descriptors
            lib.dll.dnnl_primitive_desc_destroy(hint)


def _inference_kernel(lib: Library, p: ConvProblem, d: _Descs, x_md, y_md,
                      accumulate: bool) -> Kernel:
    """The inference kernel on data of descriptor ``x_md`` into ``y_md``, its arguments the
    problem's arrays (plain, or channel-blocked when ``p.blocked``)."""
    pd = _inference_pd(lib, d, x_md, y_md)
    args = [Argument("src", p.x_shape, block=p.blocked), Argument("weights", p.onednn_w_shape),
            Argument("dst", p.y_shape, output=True, accumulate=accumulate, block=p.blocked)]
    if p.bias:
        args.insert(2, Argument("bias", (p.w_shape[0],)))
    return Kernel(lib, pd, args, "convolution inference")


def _inference_pd(lib: Library, d: _Descs, x_md, y_md) -> ctypes.c_void_p:
    """An inference primitive descriptor of the problem ``d`` describes, on data of
    descriptor ``x_md`` into ``y_md``; OneDNNError where oneDNN has no kernel."""
    pd = ctypes.c_void_p()
    lib.check(lib.dll.dnnl_convolution_forward_primitive_desc_create(
        ctypes.byref(pd), lib.engine, FORWARD_INFERENCE, _CONVOLUTION_DIRECT,
        x_md, d.w.handle, d.b.handle if d.b else None, y_md,
        d.stride, d.dilate, d.pad, d.pad, d.attr), "convolution inference descriptor")
    return pd


def _seconds(kernel: Kernel, p: ConvProblem, threads: int, runs: int = 2) -> float:
    """The fastest of ``runs`` runs of the inference ``kernel`` (after one to warm it) on
    arrays of the problem's shapes."""
    x, y = (np.zeros(_data(shape, p.blocked), np.float32) for shape in (p.x_shape, p.y_shape))
    weights, staged = kernel.prepared("weights", np.zeros(p.onednn_w_shape, np.float32),
                                      threads)
    arrays = {"src": x, "weights": weights, "dst": y}
    if p.bias:
        arrays["bias"] = np.zeros(p.w_shape[0], np.float32)
    best = float("inf")
    for attempt in range(runs + 1):
        start = time.perf_counter()
        kernel.run(arrays, threads, staged=("weights",) if staged else ())
        if attempt:
            best = min(best, time.perf_counter() - start)
    return best


def _forward(lib: Library, p: ConvProblem, d: _Descs) -> Kernel:
    x, y = _data_shapes(p)
    args = [Argument("src", x), Argument("weights", p.onednn_w_shape),
            Argument("dst", y, output=True)]
    return Kernel(lib, _forward_pd(lib, d), args, "convolution forward")


def _data_shapes(p: ConvProblem) -> tuple:
    """The data's and the output's shapes as the training kernels' arguments declare them:
    None (the primitive's own layout, passed as it is) when the problem is blocked."""
    return (None, None) if p.blocked else (p.x_shape, p.y_shape)


def _backward_pd(lib: Library, d: _Descs, create: Callable[..., int], what: str
                 ) -> ctypes.c_void_p:
    """A backward primitive descriptor from ``create(pd_ref, hint)``, oneDNN needing the
    forward one as its hint (made here and destroyed after)."""
    hint = _forward_pd(lib, d)
    try:
        pd = ctypes.c_void_p()
        lib.check(create(ctypes.byref(pd), hint), what)
    finally:
        lib.dll.dnnl_primitive_desc_destroy(hint)
    return pd


def _backward_data(lib: Library, p: ConvProblem, d: _Descs) -> Kernel:
    pd = _backward_pd(lib, d, lambda pd_ref, hint: (
        lib.dll.dnnl_convolution_backward_data_primitive_desc_create(
            pd_ref, lib.engine, _CONVOLUTION_DIRECT, d.x.handle, d.w.handle, d.y.handle,
            d.stride, d.dilate, d.pad, d.pad, hint, d.attr)),
        "convolution backward-data descriptor")
    x, y = _data_shapes(p)
    args = [Argument("diff_dst", y), Argument("weights", p.onednn_w_shape),
            Argument("diff_src", x, output=True)]
    return Kernel(lib, pd, args, "convolution backward data")


def _backward_weights(lib: Library, p: ConvProblem, d: _Descs) -> Kernel:
    pd = _backward_pd(lib, d, lambda pd_ref, hint: (
        lib.dll.dnnl_convolution_backward_weights_primitive_desc_create(
            pd_ref, lib.engine, _CONVOLUTION_DIRECT, d.x.handle, d.w.handle, None,
            d.y.handle, d.stride, d.dilate, d.pad, d.pad, hint, d.attr)),
        "convolution backward-weights descriptor")
    x, y = _data_shapes(p)
    args = [Argument("src", x), Argument("diff_dst", y),
            Argument("diff_weights", p.onednn_w_shape, output=True)]
    return Kernel(lib, pd, args, "convolution backward weights")


_BUILDERS: dict[str, Callable[[Library, ConvProblem, _Descs], Kernel]] = {
    "forward": _forward, "backward_data": _backward_data,
    "backward_weights": _backward_weights,
}
_cache = KernelCache(_CACHE_SIZE, "convolution")


def kernel_for(lib: Library, pass_: str, problem: ConvProblem, threads: int) -> Kernel | None:
    """The cached kernel for one pass (``inference``, ``forward``, ``backward_data`` or
    ``backward_weights``) of ``problem`` on ``threads`` threads, built on first use; None
    when oneDNN has no kernel for it (remembered too)."""
    def build() -> Kernel:
        descs = _Descs(lib, problem, not problem.plain_layouts(pass_))
        if pass_ == "inference":  # may time its candidates on these threads
            return _inference(lib, problem, descs, threads)
        return _BUILDERS[pass_](lib, problem, descs)

    return _cache.get(lib, (pass_, problem), threads, build)


def _problem(x_shape, w_shape, y_shape, stride, dilate, pad, groups, blocked=0, bias=False,
             post_ops=()) -> ConvProblem | None:
    shapes = (tuple(x_shape), tuple(w_shape), tuple(y_shape))
    if not all(all(shape) for shape in shapes):
        return None  # oneDNN takes no empty arrays; numpy's kernels handle them
    return ConvProblem(*shapes, tuple(stride), tuple(dilate), tuple(pad), groups, blocked,
                       bias, tuple(post_ops))


def fuses_eltwise(x_shape, w_shape, pad, groups) -> bool:
    """Whether the inference kernel of this convolution applies element-wise post-ops at
    no cost: not on the plain layouts of a 1x1 convolution (see
    :meth:`ConvProblem.plain_layouts`), where oneDNN 3.2's matrix-product kernel takes two
    to five times as long with one; its bias and sum post-ops cost nothing."""
    return not ConvProblem(tuple(x_shape), tuple(w_shape), (), (), (), tuple(pad),
                           groups).plain_layouts("inference")


def inference_kernel(lib, x_shape, w_shape, stride, dilate, pad, groups, threads, bias: bool,
                     post_ops: tuple, blocked: int = 0) -> Kernel | None:
    """The inference kernel of a convolution of plain ``x_shape`` data with ``w_shape``
    filters, with a bias argument when ``bias`` and the ``post_ops``; None when oneDNN has
    none.  Run it on ``{"src", "weights", "bias", "dst"}`` (the weights best
    :meth:`Kernel.prepared` once); with a sum post-op ``dst`` holds the addend.  With
    ``blocked`` (channels per block) the data and the output are channel-blocked arrays
    (see :class:`ConvProblem`)."""
    y_shape = _output_shape(x_shape, w_shape, stride, dilate, pad)
    problem = _problem(x_shape, w_shape, y_shape, stride, dilate, pad, groups, blocked,
                       bias=bias, post_ops=post_ops)
    return problem and kernel_for(lib, "inference", problem, threads)


_on_blocks: dict[ConvProblem, bool] = {}


def runs_on_blocks(lib, x_shape, w_shape, stride, dilate, pad, groups: int, block: int
                   ) -> bool:
    """Whether oneDNN has an inference kernel for this convolution (plain shapes) on data
    in channel blocks of ``block``: asked of a primitive descriptor, once per problem,
    without building (or timing, see ``_inference``) the kernel a run would use."""
    y_shape = _output_shape(x_shape, w_shape, stride, dilate, pad)
    problem = _problem(x_shape, w_shape, y_shape, stride, dilate, pad, groups, block,
                       bias=True)
    if problem is None:
        return False
    if problem not in _on_blocks:
        d = _Descs(lib, problem, True)
        try:
            pd = _inference_pd(lib, d, d.x.handle, d.y.handle)
        except OneDNNError:
            _on_blocks[problem] = False
        else:
            lib.dll.dnnl_primitive_desc_destroy(pd)
            _on_blocks[problem] = True
    return _on_blocks[problem]


def _output_shape(x_shape, w_shape, stride, dilate, pad) -> tuple[int, ...]:
    return (x_shape[0], w_shape[0], *(
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, p, d, k, st in zip(x_shape[2:], pad, dilate, w_shape[2:], stride)))


def _data(shape: tuple[int, ...], blocked: int) -> tuple[int, ...]:
    """An array shape of the data's plain ``shape``: channel-blocked when ``blocked``."""
    return blocked_shape(shape, blocked) if blocked else shape


def takes_blocked(lib, x_shape, w_shape, stride, dilate, pad, groups, threads) -> bool:
    """Whether oneDNN, left to choose, runs this 2-D convolution (plain shapes) on NCHW16c
    data and output: its native layout on AVX-512 machines, where the ``blocked`` kernels
    need no reorder of the data."""
    y_shape = _output_shape(x_shape, w_shape, stride, dilate, pad)
    problem = _problem(x_shape, w_shape, y_shape, stride, dilate, pad, groups)
    if problem is None or len(x_shape) != 4 or groups != 1 or \
            x_shape[1] % CHANNEL_BLOCK or w_shape[0] % CHANNEL_BLOCK:
        return False
    return picked_block(lib, problem, threads) == CHANNEL_BLOCK


#: the convolution :func:`channel_block` asks about: a 3x3 layer in the middle of a
#: residual network (64 channels on 56x56, batch 1)
_PROBE = ((1, 64, 56, 56), (64, 64, 3, 3), (1, 1), (1, 1), (1, 1))
_picked: dict[tuple, int] = {}


def picked_block(lib, problem: ConvProblem, threads: int) -> int:
    """The channels per block of the data and output layout oneDNN picks, left to choose,
    for the training forward kernel of ``problem`` (a plain one) on ``threads`` threads: 16
    (NCHW16c) on AVX-512 machines, 8 (NCHW8c) on AVX2 ones, or 0 for another layout (plain,
    channels-last) or no kernel.  Asked of oneDNN once per problem."""
    key = (problem, threads)
    if key not in _picked:
        lib.use_threads(threads)
        try:
            kernel = _forward(lib, problem, _Descs(lib, problem, True))
        except OneDNNError:
            _picked[key] = 0
        else:
            _picked[key] = next(
                (block for block in sorted(BLOCKED_TAGS, reverse=True)
                 if kernel.takes_layout("src", MemoryDesc(lib, problem.x_shape, block=block))
                 and kernel.takes_layout("dst", MemoryDesc(lib, problem.y_shape, block=block))),
                0)
    return _picked[key]


def channel_block(lib, threads: int) -> int:
    """The channels per block of the data layout oneDNN's convolutions want on this CPU --
    16 (NCHW16c) on AVX-512, 8 (NCHW8c) on AVX2 -- or 0 when they want another (plain,
    channels-last): :func:`picked_block` of a 3x3 convolution of 64 channels (oneDNN's
    inference kernels on AVX2 pick channels-last for ungrouped layers, no faster, and
    NCHW8c for depthwise ones)."""
    x_shape, w_shape, stride, dilate, pad = _PROBE
    y_shape = _output_shape(x_shape, w_shape, stride, dilate, pad)
    return picked_block(lib, _problem(x_shape, w_shape, y_shape, stride, dilate, pad, 1),
                        threads)


def conv_forward(lib, x, w, stride, dilate, pad, groups, threads, out=None, blocked=0):
    """``x`` ``(N, C, *S)`` cross-correlated with ``w`` ``(F, C/groups, *K)`` (float32),
    written into ``out`` when it fits; None when oneDNN has no kernel for it.  ``blocked``
    (channels per block): ``x`` and the result are channel-blocked (NCHW16c for 16)."""
    x_shape = plain_shape(x.shape) if blocked else x.shape
    y_shape = _output_shape(x_shape, w.shape, stride, dilate, pad)
    problem = _problem(x_shape, w.shape, y_shape, stride, dilate, pad, groups, blocked)
    kernel = problem and kernel_for(lib, "forward", problem, threads)
    if kernel is None:
        return None
    y = output_array(out, _data(y_shape, blocked))
    kernel.run({"src": x, "weights": w, "dst": y}, threads)
    return y


def conv_grad_data(lib, dy, w, x_shape, stride, dilate, pad, groups, threads, out=None,
                   blocked=0):
    """The gradient of :func:`conv_forward` for its input of (plain) ``x_shape``, written
    into ``out`` when it fits; None when oneDNN has no kernel for it."""
    y_shape = plain_shape(dy.shape) if blocked else dy.shape
    problem = _problem(x_shape, w.shape, y_shape, stride, dilate, pad, groups, blocked)
    kernel = problem and kernel_for(lib, "backward_data", problem, threads)
    if kernel is None:
        return None
    dx = output_array(out, _data(tuple(x_shape), blocked))
    kernel.run({"diff_dst": dy, "weights": w, "diff_src": dx}, threads)
    return dx


def conv_grad_weight(lib, x, dy, w_shape, stride, dilate, pad, groups, threads, out=None,
                     blocked=0):
    """The gradient of :func:`conv_forward` for its filters of ``w_shape``, written into
    ``out`` when it fits; None when oneDNN has no kernel for it."""
    x_shape, y_shape = (plain_shape(x.shape), plain_shape(dy.shape)) if blocked else \
        (x.shape, dy.shape)
    problem = _problem(x_shape, w_shape, y_shape, stride, dilate, pad, groups, blocked)
    kernel = problem and kernel_for(lib, "backward_weights", problem, threads)
    if kernel is None:
        return None
    dw = output_array(out, tuple(w_shape))
    kernel.run({"src": x, "diff_dst": dy, "diff_weights": dw}, threads)
    return dw


def conv_grads(lib, dy, x, w, stride, dilate, pad, groups, threads, dx_out=None, dw_out=None,
               blocked=0):
    """Both gradients of :func:`conv_forward`, ``(dx, dw)``, written into ``dx_out`` and
    ``dw_out`` when they fit, ``dy`` reordered once for the two passes where they take it
    in the same layout; None when oneDNN lacks a kernel for one of the passes."""
    x_shape, y_shape = (plain_shape(x.shape), plain_shape(dy.shape)) if blocked else \
        (x.shape, dy.shape)
    problem = _problem(x_shape, w.shape, y_shape, stride, dilate, pad, groups, blocked)
    data = problem and kernel_for(lib, "backward_data", problem, threads)
    weights = problem and kernel_for(lib, "backward_weights", problem, threads)
    if data is None or weights is None:
        return None
    dx, dw = output_array(dx_out, x.shape), output_array(dw_out, w.shape)
    if not data.shares_layout(weights, "diff_dst"):
        data.run({"diff_dst": dy, "weights": w, "diff_src": dx}, threads)
        weights.run({"src": x, "diff_dst": dy, "diff_weights": dw}, threads)
        return dx, dw
    with pooled_bytes(data.nbytes("diff_dst")) as (staged,):
        data.stage("diff_dst", dy, staged, threads)
        data.run({"diff_dst": staged, "weights": w, "diff_src": dx}, threads,
                 staged=("diff_dst",))
        weights.run({"src": x, "diff_dst": staged, "diff_weights": dw}, threads,
                    staged=("diff_dst",))
    return dx, dw
