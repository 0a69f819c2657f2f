"""The imperative path: every operator call, assignment and copy is one engine push.

:func:`invoke` runs a registered operator on NDArrays.  Everything that can
be wrong with a call -- parameters, input count, devices, shapes, dtypes,
``out=`` -- is checked before anything is pushed, so a failing call leaves
every array as it was.  Then one ``push_sync`` reads the input variables
and mutates the output variables (plus inputs the operator writes, such as
auxiliary states, and its resources); the pushed function calls the kernel
on the device arrays of the chunks.

Per operator and parameter set, what the call needs is computed once and
kept (:class:`PreparedCall`): the parsed parameters, counts and names, the
kernel per device type, and the inferred output shapes and dtypes per input
signature.  The caches follow the operator registry: a registry rebuilt by
``dagnet.plugins.reset()`` empties them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import plugins as _plugins
from .._errors import DagnetError, DTypeError, OperatorError, ShapeError
from ..context import Context, current_context
from ..engine import FnProperty
from ..engine import bulk_state as _bulk_state
from ..operator import Op, OpReqType, get_op
from ..runtime import (
    Chunk,
    bulk_or_push,
    check_copy_from,
    check_write,
    current_engine,
    device_of,
    hooks,
    kernel_function,
    mode,
    pushing_engine,
    request_resources,
    stream_scope,
)
from ..util import is_np_shape
from ._ndarray import _NUMBER, NDArray, _build_view, new_array
from ._storage import storage_impl

__all__ = ["invoke", "PreparedCall", "prepared", "binary", "unary", "assign", "push_copy",
           "copy_function", "gather", "scatter"]

_NORMAL = FnProperty.NORMAL
_np_ndarray = np.ndarray
_new = object.__new__
_WRITE = OpReqType.WRITE
_INPLACE = OpReqType.INPLACE
_CACHE_LIMIT = 512  # entries per cache before it is emptied (scalars make new keys)

# MXNet's host-memory contexts: their arrays are CPU memory, so a call may mix them with
# CPU arrays (and write into them with out=); such a mixed call runs on the CPU.
_HOST_ALIASES = frozenset({"cpu", "cpu_pinned", "cpu_shared"})


def _host_device(dev: Any) -> Any:
    """The ``cpu(i)`` device an array on ``dev`` may be mixed with, or None for a device
    that is not host memory of the numpy backend."""
    ctx = dev.ctx
    if ctx.device_type not in _HOST_ALIASES or not dev.numpy:
        return None
    return dev if ctx.device_type == "cpu" else device_of(Context("cpu", ctx.device_id))


# -- the per-operator caches ------------------------------------------------------
class _OpEntry:
    """One operator's prepared calls, by parameter set."""

    __slots__ = ("op", "calls", "fields", "var_num_key", "call_class")

    def __init__(self, op: Op):
        self.op = op
        self.calls: dict[Any, PreparedCall] = {}
        self.fields = op.params.fields()
        self.var_num_key = op.key_var_num_args
        self.call_class = _call_class(op)

    def prepare(self, kwargs: Mapping[str, Any]) -> PreparedCall:
        key = _kwargs_key(kwargs)
        call = self.calls.get(key) if key is not None else None
        if call is None:
            call = self.call_class(self.op, self.op.parse_params(dict(kwargs)))
            if key is not None:
                if len(self.calls) >= _CACHE_LIMIT:
                    self.calls.clear()
                self.calls[key] = call
        return call

    def prepared(self, kwargs: Mapping[str, Any]) -> PreparedCall | None:
        """The call already prepared for exactly these parameters, or None."""
        try:
            return self.calls.get(tuple([(k, v.__class__, v) for k, v in kwargs.items()]))
        except TypeError:  # an unhashable value (a list, an NDArray given by name)
            return None

    def scalar(self, value: Any) -> PreparedCall:
        """The call with ``scalar=value`` (the ``_plus_scalar`` family), cached by value."""
        key = (value.__class__, value)
        call = self.calls.get(key)
        if call is None:
            call = self.call_class(self.op, self.op.parse_params({"scalar": value}))
            if len(self.calls) >= _CACHE_LIMIT:
                self.calls.clear()
            self.calls[key] = call
        return call


def _freeze(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    return value


def _kwargs_key(kwargs: Mapping[str, Any]) -> Any:
    """A hashable key for a parameter dict, or None when it has none."""
    if not kwargs:
        return ()
    try:
        key = tuple([(k, v.__class__, v) for k, v in kwargs.items()])
        hash(key)
        return key
    except TypeError:
        pass
    try:
        key = tuple([(k, v.__class__, _freeze(v)) for k, v in kwargs.items()])
        hash(key)
        return key
    except TypeError:
        return None


_entries: dict[Any, _OpEntry] = {}
_entries_manager: Any = None


def _entry(op: str | Op) -> _OpEntry:
    """The cache entry of ``op`` (a name, an alias or an :class:`Op`)."""
    global _entries_manager
    if _plugins._manager is not _entries_manager:
        _entries.clear()
        _entries_manager = _plugins._manager
    key = op if op.__class__ is str else id(op)
    entry = _entries.get(key)
    if entry is None:
        record = get_op(op) if isinstance(op, str) else op
        if not isinstance(record, Op):
            raise TypeError(f"expected an operator name or a dagnet.operator.Op, got {op!r}")
        _entries_manager = _plugins._manager
        entry = _OpEntry(record)
        if len(_entries) >= _CACHE_LIMIT:  # Op records passed directly, one per call
            _entries.clear()
        # An Op given directly is kept alive by its entry, so its id stays its own.
        _entries[key] = entry
    return entry


def prepared(op: str | Op, kwargs: Mapping[str, Any] | None = None) -> PreparedCall:
    """``op`` with parameters ``kwargs`` parsed and ready to run (cached)."""
    return _entry(op).prepare(kwargs or {})


class PreparedCall:
    """One operator with one parsed parameter set: everything a call needs, once.

    :meth:`run` checks the inputs, allocates or checks the outputs and
    pushes the kernel.
    """

    __slots__ = ("op", "name", "attrs", "n_in", "in_names", "n_out", "n_visible", "mutated",
                 "resources", "kernels", "inplace_ok", "reqs", "infer_cache", "simple",
                 "gradient_call")

    def __init__(self, op: Op, attrs: Any):
        self.op = op
        self.name = op.name
        self.attrs = attrs
        self.n_in = op.n_inputs(attrs)
        self.in_names = op.list_inputs(attrs)
        self.n_out = op.n_outputs(attrs)
        self.n_visible = op.n_visible_outputs(attrs)
        self.mutated = tuple(op.mutated_inputs(attrs))
        self.resources = op.resource_requests(attrs)
        self.kernels: dict[str, Any] = {}
        # (input, output) pairs that may share memory: the declared in-place options
        self.inplace_ok = (frozenset(op.inplace_pairs(attrs)) if _INPLACE in op.supported_req
                           else frozenset())
        self.reqs = [_WRITE] * self.n_out
        self.infer_cache: dict[Any, tuple] = {}
        self.simple = self.n_out == 1 and not self.mutated and not self.resources
        self.gradient_call: PreparedCall | None = None  # the backward op's call (autograd)

    # -- checks before anything is pushed -------------------------------------------
    def _explain(self, error: BaseException, inputs: Sequence[NDArray]) -> str:
        text = str(error)
        if repr(self.name) not in text:
            text = f"operator {self.name!r}: {text}"
        return f"{text} (inputs: {self._describe(inputs) or 'none'})"

    def _describe(self, inputs: Sequence[NDArray]) -> str:
        return ", ".join(f"{name}={a._shape} {a._dtype.name}"
                         for name, a in zip(self.in_names, inputs))

    def _check_count(self, count: int) -> None:
        names = ", ".join(self.in_names) or "none"
        raise OperatorError(
            f"operator {self.name!r} expects {self.n_in} input(s) ({names}), got {count}")

    def _device(self, inputs: Sequence[Any], ctx: Context | None) -> Any:
        dev = None
        for index, array in enumerate(inputs):
            if not isinstance(array, NDArray):
                raise TypeError(
                    f"operator {self.name!r}: input {self.in_names[index]!r} must be an NDArray, "
                    f"got {type(array).__name__} {array!r:.60}")
            this = array._chunk.dev
            if dev is None:
                dev, first = this, index
            elif this is not dev:
                host = _host_device(this)
                if host is not None and host is _host_device(dev):
                    dev = host  # MXNet: pinned and shared memory mix with the CPU's
                    continue
                raise OperatorError(
                    f"operator {self.name!r}: input {self.in_names[index]!r} is on {this.ctx} "
                    f"but input {self.in_names[first]!r} is on {dev.ctx}; all inputs of a call "
                    f"must be on one device (move one with .as_in_context(ctx))")
        if dev is None:
            return device_of(ctx if ctx is not None else current_context())
        if ctx is not None and ctx != dev.ctx:
            raise OperatorError(
                f"operator {self.name!r}: ctx={ctx} was given but the inputs are on {dev.ctx}")
        return dev

    def _infer(self, inputs: Sequence[NDArray], key: Any) -> tuple:
        """Output shapes, dtypes and byte sizes for these inputs (cached by ``key``)."""
        op, name = self.op, self.name
        in_shapes = [a._shape for a in inputs]
        in_types = [a._dtype for a in inputs]
        try:
            ins, outs = op.shapes(self.attrs, in_shapes)
        except DagnetError as error:
            raise type(error)(self._explain(error, inputs)) from None
        except Exception as error:
            raise ShapeError(f"operator {name!r}: shape inference failed with "
                             f"{type(error).__name__}: {error} (inputs: {self._describe(inputs)})"
                             ) from error
        for index, (given, wanted) in enumerate(zip(in_shapes, ins)):
            if wanted is not None and tuple(wanted) != given:
                raise ShapeError(
                    f"operator {name!r}: input {self.in_names[index]!r} has shape {given} but "
                    f"the operator expects {tuple(wanted)} (inputs: {self._describe(inputs)})")
        any_empty = any(0 in s for s in in_shapes)
        for index, shape in enumerate(outs):
            # a 0 computed from known inputs is a real size (one_hot with depth=0), as in
            # MXNet's imperative calls; without inputs it is an unknown size unless NumPy
            # shape semantics are on
            if shape is None or any(d < 0 for d in shape) or \
                    (0 in shape and not any_empty and not in_shapes and not is_np_shape()):
                raise ShapeError(
                    f"operator {name!r}: cannot infer the shape of output {index} "
                    f"(got {shape}) from inputs {self._describe(inputs) or 'none'} and "
                    f"parameters {self.attrs}")
        try:
            tins, touts = op.dtypes(self.attrs, in_types)
        except DagnetError as error:
            raise type(error)(self._explain(error, inputs)) from None
        except Exception as error:
            raise DTypeError(f"operator {name!r}: type inference failed with "
                             f"{type(error).__name__}: {error} (inputs: {self._describe(inputs)})"
                             ) from error
        for index, (given, wanted) in enumerate(zip(in_types, tins)):
            if wanted is not None and wanted != given:
                raise DTypeError(
                    f"operator {name!r}: input {self.in_names[index]!r} has dtype {given.name} "
                    f"but the operator expects {np.dtype(wanted).name} "
                    f"(inputs: {self._describe(inputs)})")
        if any(t is None for t in touts):
            raise DTypeError(f"operator {name!r}: cannot infer the output dtypes {touts} from "
                             f"inputs {self._describe(inputs) or 'none'}")
        shapes = tuple(tuple(s) for s in outs)
        dtypes = tuple(np.dtype(t) for t in touts)
        sizes = tuple(math.prod(s) * t.itemsize for s, t in zip(shapes, dtypes))
        info = (shapes, dtypes, sizes)
        if not in_shapes and any(0 in s for s in shapes):
            return info  # valid under NumPy shape semantics only: not for the cache
        if len(self.infer_cache) >= _CACHE_LIMIT:
            self.infer_cache.clear()
        self.infer_cache[key] = info
        return info

    def _infer_from_values(self, inputs: Sequence[NDArray]) -> tuple:
        """Output shapes, dtypes and byte sizes of an operator whose output shapes depend
        on the input values (``Op.value_shapes``): waits for the inputs, never cached."""
        name = self.name
        values = [a.asnumpy() for a in inputs]
        try:
            outs = self.op.value_shapes(self.attrs, values)
            _, touts = self.op.dtypes(self.attrs, [a._dtype for a in inputs])
        except DagnetError as error:
            raise type(error)(self._explain(error, inputs)) from None
        if any(t is None for t in touts):
            raise DTypeError(f"operator {name!r}: cannot infer the output dtypes {touts} from "
                             f"inputs {self._describe(inputs)}")
        shapes = tuple(tuple(int(d) for d in s) for s in outs)
        dtypes = tuple(np.dtype(t) for t in touts)
        return shapes, dtypes, tuple(math.prod(s) * t.itemsize for s, t in zip(shapes, dtypes))

    def _check_out(self, out: Any, shapes: tuple, dtypes: tuple, dev: Any
                   ) -> list[NDArray] | None:
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(outs) != self.n_visible:
            raise OperatorError(f"operator {self.name!r} has {self.n_visible} output(s) but "
                                f"out= gives {len(outs)}")
        for index, array in enumerate(outs):
            if not isinstance(array, NDArray):
                raise TypeError(f"operator {self.name!r}: out= must be NDArrays, got "
                                f"{type(array).__name__}")
            if array.__class__ is not NDArray and array.stype != "default":
                return None
            if array._shape != shapes[index]:
                raise ShapeError(
                    f"operator {self.name!r}: out= array {index} has shape {array._shape} but "
                    f"the output has shape {shapes[index]}")
            if array._dtype != dtypes[index]:
                raise DTypeError(
                    f"operator {self.name!r}: out= array {index} has dtype {array._dtype.name} "
                    f"but the output has dtype {dtypes[index].name}")
            where = array._chunk.dev
            if where is not dev and (_host_device(where) is None
                                     or _host_device(where) is not _host_device(dev)):
                raise OperatorError(
                    f"operator {self.name!r}: out= array {index} is on {array.context} but the "
                    f"inputs are on {dev.ctx}")
        return outs

    def _kernel(self, device_type: str) -> Any:
        kernel = self.kernels.get(device_type)
        if kernel is None:
            kernel = self.kernels[device_type] = self.op.kernel_for(device_type)
        return kernel

    # -- the call ----------------------------------------------------------------------
    def run(self, inputs: Sequence[NDArray], out: Any = None, ctx: Context | None = None) -> Any:
        """Check, allocate and push; returns the visible output(s) (or ``out``)."""
        count = len(inputs)
        if count != self.n_in:
            self._check_count(count)
        # Device, inference key, input variables and device arrays; unrolled for the
        # one- and two-input calls that dominate imperative code.
        if count == 2 and ctx is None:
            lhs, rhs = inputs
            try:
                lchunk, rchunk = lhs._chunk, rhs._chunk
                ldata, rdata = lhs._data, rhs._data  # never set on a sparse array
            except AttributeError:
                if _any_sparse(inputs):
                    return _sparse_dispatch(self, inputs, out, ctx)
                self._device(inputs, ctx)  # raises the TypeError naming the input
                raise
            dev = lchunk.dev
            if rchunk.dev is not dev:
                dev = self._device(inputs, ctx)  # host memory mixes; raises for the rest
            key = (lhs._shape, rhs._shape, lhs._dtype, rhs._dtype)
            reads = [lchunk.var, rchunk.var]
            in_bytes = lchunk.nbytes + rchunk.nbytes
            in_data = [ldata if ldata is not None else lhs._xp(),
                       rdata if rdata is not None else rhs._xp()]
        elif count == 1 and ctx is None:
            data = inputs[0]
            try:
                chunk = data._chunk
                array = data._data  # never set on a sparse array
            except AttributeError:
                if _any_sparse(inputs):
                    return _sparse_dispatch(self, inputs, out, ctx)
                self._device(inputs, ctx)
                raise
            dev = chunk.dev
            key = (data._shape, data._dtype)
            reads = [chunk.var]
            in_bytes = chunk.nbytes
            in_data = [array if array is not None else data._xp()]
        else:
            dev = self._device(inputs, ctx)
            try:
                in_data = [a._data if a._data is not None else a._xp() for a in inputs]
            except AttributeError:  # a sparse input has no _data
                return _sparse_dispatch(self, inputs, out, ctx)
            key = tuple([a._shape for a in inputs] + [a._dtype for a in inputs])
            reads = [a._chunk.var for a in inputs]
            in_bytes = sum(a._chunk.nbytes for a in inputs)
        if self.op.value_shapes is not None:  # the output shape depends on the values
            info = self._infer_from_values(inputs)
        else:
            info = self.infer_cache.get(key)
            if info is None:
                info = self._infer(inputs, key)
        shapes, dtypes, sizes = info
        kernel = self.kernels.get(dev.device_type) or self._kernel(dev.device_type)
        eng = pushing_engine()
        reqs = self.reqs
        copies = None
        requested = ()
        if out is None and self.simple:
            # One fresh output, nothing mutated, no resources: the hot path, inlined.
            shape, dtype, nbytes = shapes[0], dtypes[0], sizes[0]
            handle = dev.pool.alloc(nbytes)
            chunk = _new(Chunk)
            chunk.handle, chunk.var, chunk.dev, chunk.nbytes = handle, eng.new_var(), dev, nbytes
            chunk.recorded = 0
            if dev.numpy:
                data = _np_ndarray(shape, dtype, handle.data)
            else:
                data = _build_view(chunk, 0, shape, dtype, None)
            result = _new(NDArray)
            result._chunk, result._offset, result._shape = chunk, 0, shape
            result._dtype, result._strides, result._data = dtype, None, data
            out_data = [data]
            writes = [chunk.var]
        else:
            if out is None:
                outs = [new_array(shape, dtype, dev, eng) for shape, dtype in zip(shapes, dtypes)]
                out_data = [o._data for o in outs]
                result = outs[0] if self.n_visible == 1 else outs[:self.n_visible]
            else:
                outs = self._check_out(out, shapes, dtypes, dev)
                if outs is None:  # a sparse out= array
                    return _sparse_dispatch(self, inputs, out, ctx)
                result = out
                for shape, dtype in zip(shapes[self.n_visible:], dtypes[self.n_visible:]):
                    outs.append(new_array(shape, dtype, dev, eng))  # hidden outputs
                out_data = [o._xp() for o in outs]
                reqs, copies = self._aliasing(inputs, outs)
            mutated = self.mutated
            if mutated:
                reads = [a._chunk.var for i, a in enumerate(inputs) if i not in mutated]
            writes = [o._chunk.var for o in outs] + [inputs[i]._chunk.var for i in mutated]
            if self.resources:
                requested = request_resources(dev.ctx, self.resources, writes)
        if mode.recording:  # autograd: refuse writes into the graph, add this call to it
            hooks.record_call(self, inputs,
                              outs if out is not None or not self.simple else [result], out)
        compute = kernel_function(kernel, self.attrs, mode.training, requested, dev.xp, in_data,
                                  reqs, out_data, copies)
        if _bulk_state.size <= 1:  # nbytes: what it touches (an engine may run a small one here)
            eng.push_sync(compute, dev.ctx, reads, writes, _NORMAL, 0, self.name,
                          nbytes=in_bytes + sum(sizes))
        else:  # bundled with the calls around it (dagnet.engine.bulk)
            bulk_or_push(eng, compute, dev.ctx, reads, writes, self.name,
                         [*inputs, *(outs if out is not None or not self.simple else [result])])
        return result

    def run_into(self, inputs: Sequence[NDArray], outs: Sequence[NDArray],
                 reqs: Sequence[OpReqType]) -> None:
        """Push the kernel on ``inputs`` into the given ``outs`` with write modes ``reqs``.

        No shape inference and no input count check: the caller allocated the outputs and
        chose the inputs (autograd runs backward operators this way: they read what the
        forward op's ``Gradient.uses`` names and write the forward inputs' gradients).
        """
        dev = inputs[0]._chunk.dev if inputs else self._device(inputs, None)
        for array in inputs:
            if array._chunk.dev is not dev:
                self._device(inputs, None)  # raises the mixed-device error
        kernel = self.kernels.get(dev.device_type) or self._kernel(dev.device_type)
        in_data = [a._data if a._data is not None else a._xp() for a in inputs]
        out_data = [o._data if o._data is not None else o._xp() for o in outs]
        writes = [o._chunk.var for o in outs]
        requested = request_resources(dev.ctx, self.resources, writes) if self.resources else ()
        compute = kernel_function(kernel, self.attrs, mode.training, requested, dev.xp, in_data,
                                  list(reqs), out_data)
        bulk_or_push(pushing_engine(), compute, dev.ctx, [a._chunk.var for a in inputs], writes,
                     self.name, [*inputs, *outs])

    def _aliasing(self, inputs: Sequence[NDArray], outs: Sequence[NDArray]
                  ) -> tuple[list, list | None]:
        """Write modes for ``out=`` arrays that share memory with an input.

        The very same view as an input is ``inplace`` when the operator supports
        it; any other sharing (or no in-place support) computes into a temporary
        that is copied into the output afterwards.
        """
        reqs = list(self.reqs)
        copies = []
        for o_index, o in enumerate(outs):
            for i_index, a in enumerate(inputs):
                if a._chunk is not o._chunk:
                    continue
                same = (a._offset == o._offset and a._shape == o._shape
                        and a._strides == o._strides and a._dtype == o._dtype)
                if same and (i_index, o_index) in self.inplace_ok:
                    reqs[o_index] = _INPLACE
                else:
                    reqs[o_index] = _WRITE
                    copies.append(o_index)
                    break
        return reqs, (copies or None)


class StorageCall(PreparedCall):
    """A prepared call of an operator whose sparse implementation may make sparse results
    from dense inputs (``cast_storage``, ``dot``): every call asks it first."""

    __slots__ = ()

    def run(self, inputs: Sequence[NDArray], out: Any = None, ctx: Context | None = None) -> Any:
        return _sparse_dispatch(self, inputs, out, ctx)


def _any_sparse(arrays: Sequence[Any]) -> bool:
    return any(isinstance(a, NDArray) and a.stype != "default" for a in arrays)


def _sparse_dispatch(call: PreparedCall, inputs: Sequence[Any], out: Any, ctx: Any) -> Any:
    from ._sparse import dispatch

    return dispatch(call, inputs, out, ctx)


def _call_class(op: Op) -> type[PreparedCall]:
    impl = storage_impl(op.name)
    return StorageCall if impl is not None and impl.dense_inputs else PreparedCall


# -- the public entry point ----------------------------------------------------------
def invoke(op: str | Op, inputs: Sequence[NDArray], kwargs: Mapping[str, Any] | None = None,
           out: Any = None, ctx: Context | None = None) -> Any:
    """Run operator ``op`` on ``inputs`` with parameters ``kwargs``, asynchronously.

    Returns the visible output (one NDArray) or a list of them; with ``out=``
    (an NDArray or a list) the results are written there and ``out`` is
    returned.  ``ctx`` places an operator without inputs (default: the
    current context).  Variadic operators get their count parameter
    (``num_args``) from ``len(inputs)`` when it is not given.  Errors are
    raised here, before anything is pushed.
    """
    entry = _entry(op)
    kwargs = dict(kwargs) if kwargs else {}
    if "ctx" in kwargs:
        given = kwargs.pop("ctx")
        if "ctx" in entry.fields:
            kwargs["ctx"] = str(given)
        if given is not None and given != "":  # '' (a sampler's default): the current one
            from ._creation import parse_context

            ctx = parse_context(given)
    if entry.var_num_key and entry.var_num_key not in kwargs:
        kwargs[entry.var_num_key] = len(inputs)
    return entry.prepare(kwargs).run(list(inputs), out, ctx)


def binary(lhs: NDArray, rhs: Any, array_op: str, scalar_op: str, out: Any = None,
           reflected: bool = False, strict: bool = True) -> Any:
    """``lhs (op) rhs`` for NDArray dunders: ``array_op`` with an NDArray, ``scalar_op`` with a
    number (``reflected``: the number was on the left).  Other operands raise TypeError as
    in MXNet (``strict``), or give ``NotImplemented`` (``==``/``!=``)."""
    if isinstance(rhs, NDArray):
        entry = _entries.get(array_op) if _plugins._manager is _entries_manager else None
        if entry is None:
            entry = _entry(array_op)
        call = entry.calls.get(()) or entry.prepare({})
        return call.run([rhs, lhs] if reflected else [lhs, rhs], out)
    if isinstance(rhs, _NUMBER):
        entry = _entries.get(scalar_op) if _plugins._manager is _entries_manager else None
        if entry is None:
            entry = _entry(scalar_op)
        return entry.scalar(rhs).run([lhs], out)
    if strict:
        raise TypeError(f"type {type(rhs).__name__} is not supported with an NDArray in "
                        f"{array_op}/{scalar_op}; use an NDArray or a number "
                        f"(convert numpy arrays with dagnet.nd.array)")
    return NotImplemented


def unary(data: NDArray, op_name: str) -> NDArray:
    """``op_name(data)`` for operators without parameters (``-x``, ``abs(x)``)."""
    return _entry(op_name).prepare({}).run([data])


# -- engine writes that are not operators -----------------------------------------
def copy_function(src: NDArray, dst: NDArray) -> tuple[Any, Any, FnProperty]:
    """The engine function that copies ``src`` into ``dst`` (across devices, converting
    dtype), the context to push it to and its property (the engine's copy lane when it
    crosses between host and an accelerator); it reads ``src``'s variable and writes
    ``dst``'s."""
    sdev, ddev = src._chunk.dev, dst._chunk.dev
    sview, dview = src._xp(), dst._xp()
    overlap = src._chunk is dst._chunk
    if sdev is ddev or (sdev.numpy and ddev.numpy):
        def copy(run_ctx: Any) -> None:
            with stream_scope(run_ctx):
                dview[...] = sview.copy() if overlap else sview

        return copy, ddev.ctx, _NORMAL
    to_device = ddev.device_type != "cpu"
    ctx = ddev.ctx if to_device else sdev.ctx
    prop = FnProperty.COPY_TO_GPU if to_device else FnProperty.COPY_FROM_GPU

    def copy_across(run_ctx: Any) -> None:
        stream = run_ctx.stream if run_ctx is not None else None
        host = sdev.backend.to_host(sview, stream if not to_device else None)
        with stream_scope(run_ctx):
            if ddev.numpy:
                dview[...] = host
            else:
                dview[...] = ddev.backend.from_host(host, ddev.ctx.device_id,
                                                    stream if to_device else None)

    return copy_across, ctx, prop


def push_copy(src: NDArray, dst: NDArray) -> None:
    """Copy ``src`` into ``dst`` through the engine (across devices and dtypes)."""
    if mode.recording and not hooks.traced_write(dst, src):
        check_write(dst)
    fn, ctx, prop = copy_function(src, dst)
    current_engine().push_sync(fn, ctx, [src._chunk.var], [dst._chunk.var], prop, 0, "_copyto")


def _assignable(value_shape: tuple[int, ...], target_shape: tuple[int, ...]) -> bool:
    """Whether numpy assignment can broadcast ``value_shape`` into ``target_shape``."""
    shape = tuple(value_shape)
    while len(shape) > len(target_shape) and shape[0] == 1:
        shape = shape[1:]
    if len(shape) > len(target_shape):
        return False
    return all(v in (1, t) for v, t in zip(shape[::-1], target_shape[::-1]))


def _host_value(value: Any, dtype: np.dtype, target_shape: tuple[int, ...], what: str,
                owned: bool = False) -> Any:
    """``value`` (scalar, list, numpy array) as a host array or scalar of ``dtype``.

    Arrays are copied (the caller may change ``value`` later) unless ``owned``.
    """
    if isinstance(value, _NUMBER):
        return np.asarray(value).astype(dtype)[()]
    if owned and isinstance(value, np.ndarray) and value.dtype == dtype:
        host = value
    else:
        host = np.array(value, dtype=dtype)
    if not _assignable(host.shape, target_shape):
        raise ValueError(f"{what}: cannot assign a value of shape {host.shape} to a part of "
                         f"shape {target_shape}")
    return host


def assign(target: NDArray, value: Any, owned: bool = False, name: str = "_set_value") -> None:
    """Write ``value`` into ``target`` (a view) through the engine, broadcasting.

    ``owned``: ``value`` is a numpy array nobody else will change (no copy needed);
    ``name``: the engine function's name (what the profiler shows).
    """
    checked = mode.recording and not hooks.traced_write(target, value)
    if checked:
        check_write(target)
    eng = current_engine()
    dev = target._chunk.dev
    view = target._xp()
    if isinstance(value, NDArray):
        if value.__class__ is not NDArray and value.stype != "default":
            value = value.tostype("default")  # x[:] = sparse: its dense values
        if not _assignable(value._shape, target._shape):
            raise ValueError(f"cannot assign an NDArray of shape {value._shape} to a part of "
                             f"shape {target._shape}")
        if value is target:
            return
        if checked:
            check_copy_from(value)
        if value._chunk.dev is not dev:
            value = value.copyto(dev.ctx)
        source = value._xp()
        overlap = value._chunk is target._chunk

        def write_array(run_ctx: Any) -> None:
            with stream_scope(run_ctx):
                view[...] = source.copy() if overlap else source

        eng.push_sync(write_array, dev.ctx, [value._chunk.var], [target._chunk.var], _NORMAL, 0,
                      name)
        return
    host = _host_value(value, target._dtype, target._shape, "assignment", owned)

    def write(run_ctx: Any) -> None:
        with stream_scope(run_ctx):
            if dev.numpy or np.ndim(host) == 0:
                view[...] = host
            else:
                view[...] = dev.backend.from_host(host, dev.ctx.device_id,
                                                  run_ctx.stream if run_ctx else None)

    eng.push_sync(write, dev.ctx, (), [target._chunk.var], _NORMAL, 0, name)


def _index_arrays(key: Any) -> tuple:
    """An advanced index with NDArrays replaced by host integer arrays (waits for them)."""
    items = key if isinstance(key, tuple) else (key,)
    converted = []
    for item in items:
        if isinstance(item, NDArray):
            values = item.asnumpy()
            converted.append(values if values.dtype.kind in "iu" else values.astype(np.int64))
        elif isinstance(item, list):
            converted.append(np.asarray(item))
        else:
            converted.append(item)
    return tuple(converted)


def _device_key(key: tuple, dev: Any) -> tuple:
    if dev.numpy:
        return key
    return tuple(dev.backend.from_host(k, dev.ctx.device_id) if isinstance(k, np.ndarray) else k
                 for k in key)


def gather(source: NDArray, key: Any) -> NDArray:
    """``source[key]`` for an advanced (array) index, into a new array."""
    host_key = _index_arrays(key)
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), source._shape,
                                            (0,) * source.ndim)
    shape = probe[host_key].shape  # raises IndexError as numpy would, before any push
    dev = source._chunk.dev
    eng = current_engine()
    result = new_array(shape, source._dtype, dev, eng)
    sview, rview = source._xp(), result._data

    def take(run_ctx: Any) -> None:
        with stream_scope(run_ctx):
            rview[...] = sview[_device_key(host_key, dev)]

    eng.push_sync(take, dev.ctx, [source._chunk.var], [result._chunk.var], _NORMAL, 0, "_take")
    return result


def scatter(target: NDArray, key: Any, value: Any) -> None:
    """``target[key] = value`` for an advanced (array) index, through the engine."""
    checked = mode.recording and not hooks.traced_write(target, None)
    if checked:
        check_write(target)
    host_key = _index_arrays(key)
    probe = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), target._shape,
                                            (0,) * target.ndim)
    part = probe[host_key].shape
    dev = target._chunk.dev
    eng = current_engine()
    view = target._xp()
    reads = []
    if isinstance(value, NDArray):
        if not _assignable(value._shape, part):
            raise ValueError(f"cannot assign an NDArray of shape {value._shape} to a part of "
                             f"shape {part}")
        if checked:
            check_copy_from(value)
        if value._chunk.dev is not dev:
            value = value.copyto(dev.ctx)
        source, overlap = value._xp(), value._chunk is target._chunk
        reads = [value._chunk.var]
    else:
        source, overlap = _host_value(value, target._dtype, part, "assignment"), False

    def put(run_ctx: Any) -> None:
        with stream_scope(run_ctx):
            values = source
            if isinstance(values, np.ndarray) and not dev.numpy:
                values = dev.backend.from_host(values, dev.ctx.device_id)
            elif overlap:
                values = values.copy()
            view[_device_key(host_key, dev)] = values

    eng.push_sync(put, dev.ctx, reads, [target._chunk.var], _NORMAL, 0, "_scatter_set")

