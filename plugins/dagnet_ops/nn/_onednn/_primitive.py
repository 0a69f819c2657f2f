"""One oneDNN primitive, ready to run on numpy arrays again and again.

A :class:`Kernel` owns a primitive made from a primitive descriptor and, for each argument,
a memory object whose data handle is pointed at the caller's array on every run.
Arguments arrive and leave in plain C order (NCHW, OIHW, ...); where the primitive chose
another layout (``format_tag any``), the kernel reorders into and out of buffers of that
layout around the run.  Those buffers and the scratchpad lie in the running thread's
arena (:func:`arena`): one buffer per thread, as large as the largest run on it has
needed, already paged in and aligned to a cache line (oneDNN's convolutions run about a
tenth slower on buffers whose loads straddle cache lines).  A run on the same thread never
overlaps another, so runs share it; taking a buffer from the storage pool instead cost
about 11 us a run, a fifth of a small layer's time in Python.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

import dagnet

from ._library import DIMS, ExecArg, Library, OneDNNError, log

__all__ = ["Kernel", "KernelCache", "KernelReplay", "ReorderReplay", "Replayed", "thread_scope",
           "Argument", "MemoryDesc", "Reorder", "scratchpad_attr",
           "output_array", "pooled_bytes", "aligned_bytes", "arena", "arena_layout",
           "post_ops_attr", "ELTWISE", "ARG",
           "CHANNEL_BLOCK", "EIGHT_CHANNEL_TAG", "BLOCKED_TAGS", "QUERY_EXEC_ARG_MD",
           "FORWARD_TRAINING", "FORWARD_INFERENCE", "BACKWARD", "blocked_shape", "plain_shape"]

#: ``DNNL_ARG_*`` indices
ARG = {"src": 1, "dst": 17, "weights": 33, "bias": 41, "mean": 49, "variance": 50, "scale": 51,
       "shift": 52, "workspace": 64, "scratchpad": 80, "diff_src": 129, "diff_dst": 145,
       "diff_weights": 161, "diff_scale": 255, "diff_shift": 256}
QUERY_EXEC_ARG_MD = 255
F32 = 3  # dnnl_f32
FORMAT_ANY = 1  # dnnl_format_tag_any
_PLAIN_TAG = {1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7}  # ndim -> dnnl_a, dnnl_ab, ... (C order)
#: ndim -> dnnl_aBc8b / aBcd8b / aBcde8b: channels in blocks of 8, the layout oneDNN's
#: AVX2 kernels (and its AVX-512 ones) run pooling on
EIGHT_CHANNEL_TAG = {3: 69, 4: 102, 5: 142}
#: channels per block -> ndim -> the ``dnnl_format_tag_t`` of channels in such blocks
#: (dnnl_aBcd16b is nChw16c, dnnl_aBcd8b nChw8c)
BLOCKED_TAGS = {16: {4: 78}, 8: EIGHT_CHANNEL_TAG}
#: channels per block in oneDNN's AVX-512 layouts (and in dagnet's NCHW16c arrays)
CHANNEL_BLOCK = 16
#: ``dnnl_prop_kind_t``: what a primitive computes
FORWARD_TRAINING, FORWARD_INFERENCE, BACKWARD = 64, 96, 128


def blocked_shape(shape: tuple[int, ...], block: int = CHANNEL_BLOCK) -> tuple[int, ...]:
    """The shape ``(N, C/block, *spatial, block)`` of plain ``(N, C, *spatial)`` data with
    its channels in blocks (NCHW16c's by default)."""
    n, c, *sizes = shape
    return (n, c // block, *sizes, block)


def plain_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The plain ``(N, C, *spatial)`` shape of channel-blocked data's
    ``(N, C/block, *spatial, block)``."""
    n, blocks, *sizes, block = shape
    return (n, blocks * block, *sizes)
_SCRATCHPAD_USER = 1  # dnnl_scratchpad_mode_user
_HOST = dagnet.cpu()


class MemoryDesc:
    """A memory descriptor this process created (destroyed with it): of the plain C-order
    layout, of oneDNN's choice (``any_layout``), of channels in blocks of ``block`` (a
    key of :data:`BLOCKED_TAGS`: for 4-D data the layout of an array of shape
    ``(N, C/block, H, W, block)``, such as NCHW16c), or of the ``dnnl_format_tag_t``
    ``tag``."""

    def __init__(self, lib: Library, shape: tuple[int, ...], *, any_layout: bool = False,
                 block: int = 0, tag: int | None = None):
        self.lib, self.shape, self.block = lib, tuple(shape), block
        dims = DIMS(*shape)
        tag = tag or (FORMAT_ANY if any_layout else BLOCKED_TAGS[block][len(shape)] if block
                      else _PLAIN_TAG[len(shape)])
        self.handle = ctypes.c_void_p()
        lib.check(lib.dll.dnnl_memory_desc_create_with_tag(
            ctypes.byref(self.handle), len(shape), dims, F32, tag),
            "dnnl_memory_desc_create_with_tag")

    @classmethod
    def reshaped(cls, lib: Library, md: int, shape: tuple[int, ...]) -> MemoryDesc:
        """The layout of descriptor ``md`` seen with ``shape`` (dimensions of size 1 added
        or dropped); OneDNNError where that layout cannot be written so."""
        self = cls.__new__(cls)
        self.lib, self.shape, self.block = lib, tuple(shape), 0
        self.handle = ctypes.c_void_p()
        lib.check(lib.dll.dnnl_memory_desc_reshape(ctypes.byref(self.handle), md, len(shape),
                                                   DIMS(*shape)), "dnnl_memory_desc_reshape")
        return self

    def __del__(self):
        if self.handle:
            self.lib.dll.dnnl_memory_desc_destroy(self.handle)


def scratchpad_attr(lib: Library) -> ctypes.c_void_p:
    """Primitive attributes asking for a user-managed scratchpad: the kernel owns it, so a
    primitive may run from any thread (the library's shared one ties it to its creator)."""
    attr = ctypes.c_void_p()
    lib.check(lib.dll.dnnl_primitive_attr_create(ctypes.byref(attr)), "dnnl_primitive_attr_create")
    lib.check(lib.dll.dnnl_primitive_attr_set_scratchpad_mode(attr, _SCRATCHPAD_USER),
              "dnnl_primitive_attr_set_scratchpad_mode")
    return attr


#: ``dnnl_alg_kind_t`` of the element-wise post-ops (oneDNN 3): kind -> algorithm
ELTWISE = {"relu": 0x20, "tanh": 0x21, "elu": 0x22, "soft_relu": 0x27, "logistic": 0x29,
           "clip": 0x2e, "gelu_erf": 0x31}


def post_ops_attr(lib: Library, post_ops: tuple) -> ctypes.c_void_p:
    """:func:`scratchpad_attr` with ``post_ops`` appended in order: ``("sum",)`` adds what
    the destination held; ``("eltwise", kind, alpha, beta)`` applies the element-wise
    function ``kind`` of :data:`ELTWISE`."""
    attr = scratchpad_attr(lib)
    if not post_ops:
        return attr
    ops = ctypes.c_void_p()
    lib.check(lib.dll.dnnl_post_ops_create(ctypes.byref(ops)), "dnnl_post_ops_create")
    try:
        for op in post_ops:
            if op[0] == "sum":
                lib.check(lib.dll.dnnl_post_ops_append_sum(ops, 1.0, 0, 0),
                          "dnnl_post_ops_append_sum")
            else:
                _, kind, alpha, beta = op
                lib.check(lib.dll.dnnl_post_ops_append_eltwise(ops, ELTWISE[kind], alpha, beta),
                          "dnnl_post_ops_append_eltwise")
        lib.check(lib.dll.dnnl_primitive_attr_set_post_ops(attr, ops),
                  "dnnl_primitive_attr_set_post_ops")
    except OneDNNError:
        lib.dll.dnnl_primitive_attr_destroy(attr)
        raise
    finally:
        lib.dll.dnnl_post_ops_destroy(ops)
    return attr


@dataclass(frozen=True)
class Argument:
    """An argument of a kernel: its ``DNNL_ARG_*`` name, its plain shape (None: the
    primitive's own layout, passed as a byte array of :meth:`Kernel.nbytes`), whether
    the primitive writes it, whether it also reads what the output held before
    (``accumulate``: the destination of a sum post-op), and ``block``: 0 for an array in
    the plain layout, else the channels per block of a channel-blocked one (see
    :class:`MemoryDesc`)."""

    name: str
    shape: tuple[int, ...] | None
    output: bool = False
    accumulate: bool = False
    block: int = 0


class _Memory:
    """A memory object of a given descriptor whose data handle is set before each run."""

    def __init__(self, lib: Library, md: int):
        self.lib, self.md = lib, md
        self.handle = ctypes.c_void_p()
        lib.check(lib.dll.dnnl_memory_create(ctypes.byref(self.handle), md, lib.engine, None),
                  "dnnl_memory_create")
        self.address: int | None = None  # where point_at last pointed it
        self.nbytes = lib.dll.dnnl_memory_desc_get_size(md)

    def point_at(self, array: np.ndarray | int) -> None:
        """Point the memory at ``array``'s data, or at the address ``array`` (an int)."""
        address = array if type(array) is int else array.ctypes.data
        if address != self.address:  # a bound graph's node passes the same arrays again
            self.lib.check(self.lib.dll.dnnl_memory_set_data_handle(self.handle, address),
                           "dnnl_memory_set_data_handle")
            self.address = address

    def __del__(self):
        if self.handle:
            self.lib.dll.dnnl_memory_destroy(self.handle)


class _Primitive:
    """A primitive created from (and owning) a primitive descriptor."""

    def __init__(self, lib: Library, pd: ctypes.c_void_p, what: str):
        self.lib, self.pd = lib, pd
        self.handle = ctypes.c_void_p()
        lib.check(lib.dll.dnnl_primitive_create(ctypes.byref(self.handle), pd),
                  f"dnnl_primitive_create ({what})")

    def md(self, arg: int) -> int:
        return self.lib.dll.dnnl_primitive_desc_query_md(self.pd, QUERY_EXEC_ARG_MD, arg)

    def run(self, stream: ctypes.c_void_p, args: ctypes.Array) -> None:
        self.lib.check(self.lib.dll.dnnl_primitive_execute(self.handle, stream, len(args), args),
                       "dnnl_primitive_execute")

    def __del__(self):
        if self.handle:
            self.lib.dll.dnnl_primitive_destroy(self.handle)
        if self.pd:
            self.lib.dll.dnnl_primitive_desc_destroy(self.pd)


class _Arena(threading.local):
    """The running thread's scratch buffer (see :func:`arena`); ``generation`` numbers the
    buffer, unique among all threads' buffers (0: none yet)."""

    buffer: np.ndarray | None = None
    address = 0
    nbytes = 0
    generation = 0


_arena = _Arena()
_arena_generations = itertools.count(1)
_LINE = 64  # bytes in a cache line: where arena buffers start


def arena_layout(sizes: Sequence[int]) -> tuple[list[int], int]:
    """The offsets at which :func:`arena` places buffers of ``sizes`` bytes (each on a
    cache line), and the bytes they span."""
    offsets, total = [], 0
    for nbytes in sizes:
        offsets.append(total)
        total += -(-nbytes // _LINE) * _LINE
    return offsets, total


def arena(nbytes: int) -> int:
    """The address of the running thread's arena, grown to at least ``nbytes`` bytes: for
    buffers used within one call on this thread and by no other thread (a kernel run's
    reorders and scratchpad), placed at :func:`arena_layout`'s offsets.  It only grows,
    holding as much as the largest run on the thread needed."""
    if nbytes > _arena.nbytes:
        buffer = aligned_bytes(max(nbytes, 2 * _arena.nbytes), _LINE)
        buffer.fill(0)  # page it in now, not in the first kernel that writes it
        _arena.buffer, _arena.address, _arena.nbytes = buffer, buffer.ctypes.data, len(buffer)
        _arena.generation = next(_arena_generations)
    return _arena.address


def thread_scope() -> tuple[int, int]:
    """What a :class:`KernelReplay` depends on besides its arrays: the running thread (its
    stream and OpenMP thread count) and the buffer of its arena."""
    return threading.get_ident(), _arena.generation


@contextmanager
def pooled_bytes(*sizes: int) -> Iterator[list[np.ndarray]]:
    """Byte buffers of ``sizes`` from dagnet's CPU storage pool (aligned to a cache line,
    already paged in), given back to the pool when the block ends."""
    blocks = [dagnet.storage.alloc(nbytes, _HOST) for nbytes in sizes]
    try:
        yield [block.data[:nbytes] for block, nbytes in zip(blocks, sizes)]
    finally:
        for block in blocks:
            dagnet.storage.free(block)


class Reorder:
    """Copies one layout into another: a plain array into a buffer of another layout (an
    input) or back (an output).

    ``inner`` is the memory object of the other layout that a primitive is given.  Where
    the plain shape ends in dimensions of size 1 (a 1x1 convolution's filters) the copy
    runs on both layouts with those dimensions dropped: oneDNN's reorders of
    ``(O, I, 1, 1)`` filters take about three times as long as of the same ``(O, I)``.
    """

    def __init__(self, lib: Library, plain: MemoryDesc, inner_md: int, output: bool):
        self.output = output
        self.inner = self._copied = _Memory(lib, inner_md)
        plain_md, shape = plain.handle, plain.shape
        squeezed = _without_trailing_ones(shape)
        if squeezed != shape and not plain.block:
            try:
                self._descs = (MemoryDesc(lib, squeezed),
                               MemoryDesc.reshaped(lib, inner_md, squeezed))
            except OneDNNError:  # a layout that does not drop them: copy as it is
                pass
            else:
                plain_md = self._descs[0].handle
                self._copied = _Memory(lib, self._descs[1].handle)
        self.plain = _Memory(lib, plain_md)
        src, dst = (self._copied, self.plain) if output else (self.plain, self._copied)
        pd = ctypes.c_void_p()
        lib.check(lib.dll.dnnl_reorder_primitive_desc_create(
            ctypes.byref(pd), src.md, lib.engine, dst.md, lib.engine, None),
            "dnnl_reorder_primitive_desc_create")
        self.primitive = _Primitive(lib, pd, "reorder")
        self.args = (ExecArg * 2)(ExecArg(ARG["src"], src.handle.value),
                                  ExecArg(ARG["dst"], dst.handle.value))

    def run(self, lib: Library, plain: np.ndarray | int, inner: np.ndarray | int,
            threads: int) -> None:
        """Copy ``plain`` into ``inner`` (or back, for an output) and wait; the caller holds
        the lock that guards this reorder's memory objects."""
        stream = lib.stream(threads)
        self.plain.point_at(plain)
        self.point_inner(inner)
        self.primitive.run(stream, self.args)
        lib.check(lib.dll.dnnl_stream_wait(stream), "dnnl_stream_wait")

    def point_inner(self, buffer: np.ndarray | int) -> None:
        """Point the memory of the other layout (the primitive's and the copy's) at
        ``buffer`` (an array or an address)."""
        self.inner.point_at(buffer)
        if self._copied is not self.inner:
            self._copied.point_at(buffer)


def _without_trailing_ones(shape: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` without the dimensions of size 1 at its end (two dimensions kept)."""
    end = len(shape)
    while end > 2 and shape[end - 1] == 1:
        end -= 1
    return tuple(shape[:end])


class Kernel:
    """A primitive with its arguments bound by name, run on numpy arrays by :meth:`run`.

    ``pd`` is a primitive descriptor (the kernel takes ownership); ``arguments`` the
    arguments the caller supplies, in plain layout.  A kernel runs one call at a time
    (its memory objects are bound to one run's buffers); concurrent callers wait.
    """

    def __init__(self, lib: Library, pd: ctypes.c_void_p, arguments: list[Argument], what: str):
        self.lib, self.what = lib, what
        self.primitive = _Primitive(lib, pd, what)
        self._plain = {a.name: MemoryDesc(lib, a.shape, block=a.block)
                       for a in arguments if a.shape}
        self._direct: dict[str, _Memory] = {}
        self._reorders: dict[str, Reorder] = {}
        self._reorders_in: dict[str, Reorder] = {}  # accumulated outputs: their old values
        self._bound: list[tuple[str, _Memory]] = []  # the primitive's arguments, in order
        for a in arguments:
            inner_md = self.primitive.md(ARG[a.name])
            if a.shape is None:
                memory = self._direct[a.name] = _Memory(lib, inner_md)
            elif lib.dll.dnnl_memory_desc_equal(inner_md, self._plain[a.name].handle):
                memory = self._direct[a.name] = _Memory(lib, self._plain[a.name].handle)
            else:
                reorder = self._reorders[a.name] = Reorder(
                    lib, self._plain[a.name], inner_md, a.output)
                memory = reorder.inner
                if a.output and a.accumulate:
                    self._reorders_in[a.name] = Reorder(lib, self._plain[a.name], inner_md,
                                                        False)
            self._bound.append((a.name, memory))
        scratch = _Memory(lib, self.primitive.md(ARG["scratchpad"]))
        self._scratch = scratch if scratch.nbytes else None
        if self._scratch is not None:
            self._bound.append(("scratchpad", scratch))
        self._args = (ExecArg * len(self._bound))(
            *(ExecArg(ARG[name], memory.handle.value) for name, memory in self._bound))
        self._lock = threading.Lock()
        self._plans: dict[tuple, tuple] = {}  # staged inputs -> what ``_plan`` gives

    def nbytes(self, name: str) -> int:
        """The bytes argument ``name`` takes in the primitive's own layout."""
        return self.lib.dll.dnnl_memory_desc_get_size(self.primitive.md(ARG[name]))

    def takes_layout(self, name: str, desc: MemoryDesc) -> bool:
        """Whether the primitive takes argument ``name`` in the layout of ``desc``."""
        return bool(self.lib.dll.dnnl_memory_desc_equal(self.primitive.md(ARG[name]),
                                                        desc.handle))

    def shares_layout(self, other: Kernel, name: str) -> bool:
        """Whether input ``name`` is reordered into the same layout by this kernel and
        ``other``, so that one :meth:`stage` serves both runs."""
        mine, theirs = self._reorders.get(name), other._reorders.get(name)
        return bool(mine and theirs and not mine.output and not theirs.output and
                    self.lib.dll.dnnl_memory_desc_equal(mine.inner.md, theirs.inner.md))

    def stage(self, name: str, array: np.ndarray, buffer: np.ndarray, threads: int) -> None:
        """Reorder input ``name``, the plain ``array``, into ``buffer`` (bytes,
        :meth:`nbytes` of them) in the primitive's layout, for runs given it ``staged``."""
        with self._lock:
            self._reorders[name].run(self.lib, array, buffer, threads)

    def prepared(self, name: str, array: np.ndarray, threads: int) -> tuple[np.ndarray, bool]:
        """Input ``name`` (the plain ``array``) as runs can take it again and again: in a
        buffer of its own in the primitive's layout (``True``: pass it ``staged``), or
        ``array`` itself where the primitive takes the plain layout (``False``).  A
        kernel's weights are prepared so once, not reordered at every run."""
        if name not in self._reorders:
            return np.ascontiguousarray(array), False
        buffer = aligned_bytes(self.nbytes(name))
        self.stage(name, np.ascontiguousarray(array), buffer, threads)
        return buffer, True

    def run(self, arrays: Mapping[str, np.ndarray | int], threads: int, *,
            staged: Collection[str] = ()) -> None:
        """Run on ``arrays`` (by argument name: C-contiguous float32 of the declared shapes, or
        bytes for the primitive's own layout; outputs are overwritten; or, for either,
        the address of its data, an int) over ``threads`` OpenMP threads.  The inputs
        named in ``staged`` are given already in the primitive's layout (:meth:`stage`)."""
        lib = self.lib
        with self._lock:
            key = staged if type(staged) is tuple else tuple(staged)
            plan = self._plans.get(key)
            if plan is None:
                plan = self._plans[key] = self._plan(key)
            todo, offsets, total = plan
            base = arena(total)
            stream = lib.stream(threads)
            if self._scratch is not None:
                self._scratch.point_at(base + offsets[-1])
            for name in staged:
                self._reorders[name].point_inner(arrays[name])
            for name, memory in self._direct.items():
                memory.point_at(arrays[name])
            for (name, reorder), offset in zip(todo, offsets):
                reorder.point_inner(base + offset)
                reorder.plain.point_at(arrays[name])
                if not reorder.output:
                    reorder.primitive.run(stream, reorder.args)
                elif name in self._reorders_in:  # the old values a sum post-op adds to
                    back = self._reorders_in[name]
                    back.point_inner(base + offset)
                    back.plain.point_at(arrays[name])
                    back.primitive.run(stream, back.args)
            self.primitive.run(stream, self._args)
            for _, reorder in todo:
                if reorder.output:
                    reorder.primitive.run(stream, reorder.args)
            lib.check(lib.dll.dnnl_stream_wait(stream), "dnnl_stream_wait")

    def _plan(self, staged: Collection[str]) -> tuple[list, list[int], int]:
        """The reorders a run given ``staged`` inputs does, and where its buffers (theirs,
        then the scratchpad's) lie in the arena."""
        todo = [(name, r) for name, r in self._reorders.items() if name not in staged]
        sizes = [r.inner.nbytes for _, r in todo]
        if self._scratch is not None:
            sizes.append(self._scratch.nbytes)
        offsets, total = arena_layout(sizes)
        return todo, offsets, total


class Replayed:
    """oneDNN's calls that redo one run on fixed arrays, on memory objects of their own
    (pointed once, shared with no other run): ``calls``, each returning oneDNN's status.
    They hold while run on the thread that made them with that thread's arena unchanged
    (:func:`thread_scope`), and while the arrays they were given keep their memory; what
    the arrays hold may change."""

    def __init__(self, lib: Library, threads: int):
        self.lib, self.threads = lib, threads
        self._memories: list[_Memory] = []
        self.calls: tuple[Callable[[], Any], ...] = ()

    def use_threads(self) -> None:
        """Set the thread's OpenMP thread count to the run's (no status)."""
        self.lib.use_threads(self.threads)

    def check(self, status: int, call: Callable[[], int]) -> None:
        """Raise :class:`OneDNNError` for one of :attr:`calls` that returned ``status``."""
        self.lib.check(status, f"{call.func.__name__} (replayed)")

    def _args(self, bound: Sequence[tuple[int, int, int]]) -> ctypes.Array:
        """Execution arguments of memory objects of this replay's own: (argument, memory
        descriptor, address) each."""
        args = []
        for arg, md, address in bound:
            memory = _Memory(self.lib, md)
            memory.point_at(address)
            self._memories.append(memory)
            args.append(ExecArg(arg, memory.handle.value))
        return (ExecArg * len(args))(*args)

    def _copy(self, reorder: Reorder, plain: int, inner: int, stream) -> Callable[[], int]:
        """The call running ``reorder`` between ``plain`` and ``inner``."""
        ends = [(reorder.plain.md, plain), (reorder._copied.md, inner)]
        src, dst = ends[::-1] if reorder.output else ends
        args = self._args([(ARG["src"], *src), (ARG["dst"], *dst)])
        return _execute(self.lib, reorder.primitive.handle, stream, args)


class KernelReplay(Replayed):
    """One :meth:`Kernel.run` on fixed arrays as oneDNN's calls (see :class:`Replayed`)."""

    def __init__(self, kernel: Kernel, arrays: Mapping[str, np.ndarray | int], threads: int,
                 staged: Collection[str] = ()):
        super().__init__(kernel.lib, threads)
        lib = self.lib
        self._kernel = kernel  # its primitives
        before, after = [], []
        with kernel._lock:
            key = tuple(staged)
            todo, offsets, total = kernel._plans.get(key) or kernel._plan(key)
            base = arena(total)
            stream = lib.stream(threads)
            where = {name: _address(arrays[name]) for name in (*kernel._direct, *staged)}
            if kernel._scratch is not None:
                where["scratchpad"] = base + offsets[-1]
            for (name, reorder), offset in zip(todo, offsets):
                where[name] = base + offset
                copy = self._copy(reorder, _address(arrays[name]), where[name], stream)
                if not reorder.output:
                    before.append(copy)
                else:
                    after.append(copy)
                    if name in kernel._reorders_in:  # the old values a sum post-op adds to
                        before.append(self._copy(kernel._reorders_in[name],
                                                 _address(arrays[name]), where[name], stream))
            args = self._args([(ARG[name], memory.md, where[name])
                               for name, memory in kernel._bound])
            run = _execute(lib, kernel.primitive.handle, stream, args)
        self.calls = (self.use_threads, *before, run, *after,
                      functools.partial(lib.dll.dnnl_stream_wait, stream))


class ReorderReplay(Replayed):
    """One :meth:`Reorder.run` between the fixed ``plain`` and ``inner`` arrays as oneDNN's
    calls (see :class:`Replayed`)."""

    def __init__(self, lib: Library, reorder: Reorder, plain: np.ndarray, inner: np.ndarray,
                 threads: int):
        super().__init__(lib, threads)
        self._reorder = reorder  # its primitive
        stream = lib.stream(threads)
        self.calls = (self.use_threads,
                      self._copy(reorder, _address(plain), _address(inner), stream),
                      functools.partial(lib.dll.dnnl_stream_wait, stream))


def _address(array: np.ndarray | int) -> int:
    return array if type(array) is int else array.ctypes.data


def _execute(lib: Library, primitive: ctypes.c_void_p, stream, args: ctypes.Array
             ) -> Callable[[], int]:
    """The call executing ``primitive`` on ``args`` in ``stream`` (it keeps ``args``)."""
    return functools.partial(lib.dll.dnnl_primitive_execute, primitive, stream, len(args), args)


def aligned_bytes(nbytes: int, alignment: int = 64) -> np.ndarray:
    """A byte array of its own (kept, unlike :func:`pooled_bytes`) starting on an
    ``alignment`` boundary."""
    raw = np.empty(nbytes + alignment, np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start:start + nbytes]


def output_array(out: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray:
    """``out`` if a kernel can write it directly (float32, C order, of ``shape``), else a
    new array."""
    shape = tuple(shape)
    if out is not None and out.shape == shape and out.dtype == np.float32 and \
            out.flags.c_contiguous:
        return out
    return np.empty(shape, np.float32)


class KernelCache:
    """Kernels built on first use and kept, the ``size`` most recently used, per thread
    count: oneDNN plans a primitive's work for the OpenMP threads in effect when it is made
    (:meth:`Library.use_threads`), so one made for a single thread would stay on one.  A
    problem oneDNN has no kernel for is remembered as None (and logged at debug level)."""

    def __init__(self, size: int, what: str):
        self.size, self.what = size, what
        self._kernels: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, lib: Library, key: Hashable, threads: int, build: Callable[[], Any]) -> Any:
        """The kernel of ``key`` on ``threads`` threads, ``build()`` on first use."""
        full_key = (key, threads)
        with self._lock:
            if full_key in self._kernels:
                self._kernels.move_to_end(full_key)
                return self._kernels[full_key]
        lib.use_threads(threads)
        try:
            kernel = build()
        except OneDNNError as exc:
            log.debug("oneDNN has no %s kernel for %s, numpy's is used: %s", self.what, key,
                      exc)
            kernel = None
        with self._lock:
            self._kernels[full_key] = kernel
            while len(self._kernels) > self.size:
                self._kernels.popitem(last=False)
        return kernel

    def __len__(self) -> int:
        return len(self._kernels)
