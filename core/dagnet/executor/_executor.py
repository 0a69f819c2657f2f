"""The :class:`Executor`: a symbol bound to arrays on a device (MXNet's ``GraphExecutor``).

Everything a step needs is decided at bind time: the memory plan, the
device arrays of every buffer, the kernel, parameters, write modes and
resources of every node, and from those the engine operators of each pass
(``Engine.new_operator``).  ``forward()`` and ``backward()`` are then loops
of ``push``: each node reads its input variables and mutates its output
variables (and resource variables), so independent branches run at once on
the threaded engines and the naive engine gives the same results.  A chain
of nodes (each reading what the one before wrote) is pushed as one operator
of up to ``exec_bulk_size`` nodes, like MXNet's bulk execution.

With ``group2ctx`` the steps run on several devices: each is pushed to its own
device, a bulk never spans two, and the copies between devices are steps of
their own (see :mod:`._cross_device`); the memory plan keeps each device's
blocks apart.

Sparse arrays bound to the executor stay the user's (``arg_arrays``,
``grad_arrays``), with dense stand-ins in the buffers; where the bound storage
types make an operator's results sparse, its step runs the operator's sparse
implementation and the entry is a sparse array (see :mod:`._storage_types`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import autograd
from .. import config as _config
from .._errors import OperatorError, ShapeError, UnknownNameError
from ..engine import FnProperty
from ..ndarray import NDArray, PreparedCall, copy_function, new_array, push_copy, wrap_chunk
from ..ndarray.sparse import dispatch, is_sparse, new_sparse
from ..operator import NodeState, OpReqType
from ..runtime import (
    EngineFunction,
    bulk_function,
    current_engine,
    device_of,
    kernel_function,
    new_chunk,
    request_resources,
    stream_scope,
    unique_vars,
)
from ._graph import COPY, CROSS_COPY, INNER, OP, OUTPUT, ZERO, Graph
from ._plan import Plan, plan_memory
from ._replay import ReplayingChain
from ._storage_types import plan_storage

__all__ = ["Executor", "UnknownArgumentError", "UnknownParameterError"]

_NORMAL = FnProperty.NORMAL


class UnknownArgumentError(UnknownNameError, TypeError):
    """A name that is not an argument (or auxiliary state) of the bound symbol.

    A ``TypeError`` as in MXNet, and a ``KeyError`` as dagnet's other unknown names."""


class UnknownParameterError(UnknownNameError, ValueError):
    """A parameter value given for a name the bound symbol does not have
    (``copy_params_from``); a ``ValueError`` as in MXNet."""


class Executor:
    """A symbol bound to arrays on a device (or, with ``group2ctx``, on several); run
    it with :meth:`forward` and :meth:`backward`.  Make one with
    ``symbol.simple_bind`` or ``symbol.bind``."""

    def __init__(self, symbol: Any, dev: Any, graph: Graph, arg_arrays: list[NDArray],
                 grad_arrays: list[NDArray | None], aux_arrays: list[NDArray],
                 grad_reqs: list[str], shared_exec: Executor | None = None,
                 group2ctx: dict | None = None):
        self._symbol = symbol
        self._group2ctx = group2ctx
        self._dev = dev
        self._ctx = dev.ctx
        self._graph = graph
        self._grad_reqs = list(grad_reqs)
        self.arg_arrays = list(arg_arrays)
        self.grad_arrays = list(grad_arrays)
        self.aux_arrays = list(aux_arrays)
        self._arg_names = symbol.list_arguments()
        self._aux_names = symbol.list_auxiliary_states()
        self._monitor: tuple[Callable[[str, NDArray], None], bool] | None = None
        self._stypes = plan_storage(graph, [a.stype for a in self.arg_arrays],
                                    [a.stype for a in self.aux_arrays])
        # buffer -> the sparse array the user sees for it (a bound sparse array, or a sparse
        # entry's); the buffer itself holds a dense form
        self._sparse: dict[int, NDArray] = {}
        self._standins: dict[int, NDArray] = {}
        eng = current_engine()
        shared = shared_exec._storages if isinstance(shared_exec, Executor) else []
        self._plan: Plan = plan_memory(graph, bool(_config.get("memory_plan")),
                                       [(c.nbytes, c.dev.ctx) for c in shared])
        plan = self._plan
        self._storages = list(shared[:plan.num_shared]) + [
            new_chunk(max(size, 1), device_of(where), eng)
            for size, where in zip(plan.sizes[plan.num_shared:], plan.devices[plan.num_shared:])]
        self._arrays = self._buffer_arrays(
            eng, shared_exec.outputs if isinstance(shared_exec, Executor) else [])
        self.outputs = [self._visible(b) for b in graph.outputs]
        self._heads = [None if h is None else self._arrays[h] for h in graph.heads]
        self._operators: dict[tuple[bool, bool, int, int], list[Any]] = {}
        # the sets of gradient arrays backward passes wrote into, by version (see
        # set_grad_arrays); a backward program is built for one of them
        self._grad_sets: dict[int, list[NDArray | None]] = {0: self.grad_arrays}
        self._grad_version = 0
        # bound for inference: makes the executor of the graph for training-mode passes
        # (sharing this one's arrays and memory), built when one is first asked for
        self._for_training: Callable[[], Executor] | None = None
        self._training: Executor | None = None
        # the executor of the graph for training when its forward pass ran last (None:
        # this one; not a reference to itself, which only the cyclic collector would
        # free, with every buffer of the executor)
        self._ran: Executor | None = None

    # -- buffers ------------------------------------------------------------------
    def _buffer_arrays(self, eng: Any, shared_outputs: list[NDArray]) -> list[NDArray]:
        """An NDArray for every buffer: the user's arrays for external ones, views of
        the planned blocks for inner ones (one view per block, shape and dtype, so an
        output computed in place is the very array of its input).  An output fitting in
        the same output of the executor this one shares memory with views that output's
        memory, as MXNet's reshaped executors do."""
        graph = self._graph
        arrays: list[Any] = [None] * len(graph.buffers)
        for b, array in zip(graph.args, self.arg_arrays):
            self._bound(arrays, b, array)
        for b, array in zip(graph.aux, self.aux_arrays):
            self._bound(arrays, b, array)
        for b, array in zip(graph.grads, self.grad_arrays):
            if b is not None:
                self._bound(arrays, b, array)
        views: dict[tuple, NDArray] = {}
        for buffer in graph.buffers:
            stype = self._stypes.stypes.get(buffer.index)
            if stype is not None and buffer.index not in self._sparse:  # a sparse entry
                self._sparse[buffer.index] = new_sparse(stype, buffer.shape, buffer.dtype,
                                                        device_of(buffer.device))
            if arrays[buffer.index] is not None:
                continue
            if buffer.kind == INNER:
                st = self._plan.storage_of[buffer.index]
                key = (st, buffer.shape, buffer.dtype)
                if key not in views:
                    views[key] = wrap_chunk(self._storages[st], 0, buffer.shape, buffer.dtype)
                arrays[buffer.index] = views[key]
            elif buffer.kind == OUTPUT and _fits(buffer, shared_outputs):
                old = shared_outputs[buffer.position]
                arrays[buffer.index] = wrap_chunk(old._chunk, old._offset, buffer.shape,
                                                  buffer.dtype)
            else:  # outputs and head gradients: arrays of their own that outlive a call
                array = new_array(buffer.shape, buffer.dtype, device_of(buffer.device), eng)
                array._xp()[...] = 0
                arrays[buffer.index] = array
        return arrays

    def _bound(self, arrays: list[Any], b: int, array: NDArray) -> None:
        """Bind the user's ``array`` to buffer ``b``: a dense one is the buffer, a sparse
        one gets a dense stand-in (refreshed from it, or cast into it, around each pass)."""
        if not is_sparse(array):
            arrays[b] = array
            self._sparse.pop(b, None)
            return
        standin = self._standins.get(b)
        if standin is None:
            buffer = self._graph.buffers[b]
            standin = self._standins[b] = new_array(buffer.shape, buffer.dtype,
                                                    device_of(buffer.device))
            standin._xp()[...] = 0
        arrays[b] = standin
        self._sparse[b] = array

    def _visible(self, b: int) -> NDArray:
        """The array the user sees for buffer ``b``: its sparse array, if it has one."""
        return self._sparse.get(b, self._arrays[b])

    # -- the steps as engine operators ---------------------------------------------------
    def _program(self, backward: bool, is_train: bool, bulk: int | None = None) -> list[Any]:
        """The engine operators of one pass, built once per pass and mode.

        Steps that form a chain (each reads what the one before it wrote) are
        bulked into one operator of at most ``bulk`` steps (``exec_bulk_size``),
        as MXNet's bulk execution does: a chain cannot run in parallel anyway, and
        one push instead of many saves the engine's per-operation cost.  Steps off
        the chain, such as parallel branches, start a new operator, and so do steps
        on another device.  A forward pass outside training, ``bulk`` not given, is
        one operator per run of steps on one device (``exec_bulk_inference``, as MXNet
        bulks inference).
        Returns (operator, context to push it to) pairs; a step run
        by a sparse implementation is (function that pushes its work, None)."""
        whole = bulk is None and not (backward or is_train) and \
            _config.get("exec_bulk_inference")
        bulk = int(_config.get("exec_bulk_size")) if bulk is None else bulk
        key = (backward, is_train, bulk, whole, self._grad_version if backward else 0)
        program = self._operators.get(key)
        if program is None:
            graph = self._graph
            first = graph.num_forward if backward else 0
            last = len(graph.steps) if backward else graph.num_forward
            eng = current_engine()
            program = []
            pushables: list[_Pushable] = []
            for i in range(first, last + 1):
                if i < last and i not in self._stypes.sparse_steps:
                    pushables.append(self._step_function(i, graph.steps[i], is_train))
                    continue
                segments = _runs(pushables) if whole else _chains(pushables, bulk)
                program += [_bulked_operator(eng, segment) for segment in segments]
                pushables = []
                if i < last:
                    program.append((self._sparse_step(graph.steps[i], is_train), None))
            self._operators[key] = program
        return program

    def _step_function(self, index: int, step: Any, is_train: bool) -> _Pushable:
        arrays = self._arrays
        if step.kind == CROSS_COPY:
            source, target = arrays[step.inputs[0]], arrays[step.outputs[0]]
            fn, ctx, prop = copy_function(source, target)
            return _Pushable(EngineFunction(fn, [source._chunk.var], [target._chunk.var],
                                            step.name), ctx, prop, [source._chunk.var], None)
        dev = device_of(step.device)
        ins = [arrays[b]._xp() for b in step.inputs]
        outs = [arrays[b]._xp() for b in step.outputs]
        writes = [arrays[b]._chunk.var for b in step.outputs]
        writes += [arrays[b]._chunk.var for b in step.mutated]
        if step.kind == OP:
            requested = request_resources(dev.ctx, step.op.resource_requests(step.attrs), writes)
            reqs = [OpReqType.INPLACE if (index, p) in self._plan.inplace else req
                    for p, req in enumerate(step.reqs)]
            mutated = {arrays[b]._chunk.var for b in step.mutated}
            inputs = [arrays[b]._chunk.var for b in step.inputs]
            state = NodeState(inputs, [i for i, var in enumerate(inputs) if var in mutated])
            fn = kernel_function(step.op.kernel_for(dev.device_type), step.attrs, is_train,
                                 requested, dev.xp, ins, reqs, outs, state=state)
        else:
            fn, state = _helper_fn(step.kind, ins, outs), None
        writes = unique_vars(writes)
        written = {id(v) for v in writes}
        reads = [v for v in unique_vars([arrays[b]._chunk.var for b in step.inputs])
                 if id(v) not in written]
        return _Pushable(EngineFunction(fn, reads, writes, step.name), dev.ctx, _NORMAL,
                         [arrays[b]._chunk.var for b in step.inputs], state)

    def _sparse_step(self, step: Any, is_train: bool) -> Callable[[], None]:
        """A function running ``step``'s operator on the sparse arrays of its sparse
        entries (and the dense buffers of the others) by its sparse implementation,
        then filling the dense buffers of its sparse results that other steps read."""
        call = PreparedCall(step.op, step.attrs)
        inputs = [self._visible(b) for b in step.inputs]
        outputs = [self._visible(b) for b in step.outputs]
        out = outputs if len(outputs) > 1 else outputs[0]
        densify = [(self._sparse[b], self._arrays[b]) for b in step.outputs
                   if b in self._sparse and b in self._stypes.dense_reads]
        ctx = step.device

        def run() -> None:
            with autograd.pause(train_mode=is_train):
                dispatch(call, inputs, out, ctx)
            for values, dense in densify:
                values.copyto(dense)

        return run

    def _run(self, program: list[Any]) -> None:
        push = current_engine().push
        for opr, ctx in program:
            if ctx is None:
                opr()
            else:
                push(opr, ctx)

    # -- running -----------------------------------------------------------------------
    def forward(self, is_train: bool = False, **kwargs: Any) -> list[NDArray]:
        """Run the forward pass (``is_train``: training mode, as for Dropout and
        BatchNorm, whose moving statistics it updates).  ``kwargs`` are copied into
        the arguments of those names first.  Returns :attr:`outputs`.

        An executor bound without gradients runs the graph the passes rewrote for
        inference (:meth:`get_optimized_symbol`); a training-mode pass runs the graph as
        the passes leave it for training, bound the first time one is asked for, on the
        same arrays and memory."""
        if kwargs:
            self._copy_in(kwargs)
        runner = self._runner(bool(is_train))
        graph = runner._graph
        for b in graph.args + graph.aux:  # sparse arguments: their dense stand-ins
            if b in runner._sparse and b in runner._stypes.dense_reads:
                runner._sparse[b].copyto(runner._arrays[b])
        if runner._monitor is None:
            runner._run(runner._program(False, bool(is_train)))
        else:
            runner._monitored_forward(bool(is_train))
        self._ran = None if runner is self else runner
        if runner is not self:
            for theirs, mine in zip(runner.outputs, self.outputs):
                if theirs._chunk is not mine._chunk:  # an output the graphs do not share
                    push_copy(theirs, mine)
        return self.outputs

    def _runner(self, is_train: bool) -> Executor:
        """The executor that runs a forward pass in this mode: this one, or for a
        training-mode pass of an executor bound for inference, the one of the graph for
        training (made on first use)."""
        if not is_train or self._for_training is None:
            return self
        if self._training is None:
            self._training = self._for_training()
            self._training._monitor = self._monitor
        return self._training

    def _monitored_forward(self, is_train: bool) -> None:
        callback, monitor_all = self._monitor
        graph, arrays = self._graph, [self._visible(b) for b in range(len(self._arrays))]
        for step, item in zip(graph.steps, self._program(False, is_train, bulk=1)):
            node = step.node
            if monitor_all and node is not None:
                # before the node runs (its auxiliary states are still the old ones), as
                # MXNet: a variable input under its own name, then every input as
                # <node>_<input>
                for name, (source, _), b in zip(node.input_names(), node.inputs, step.inputs):
                    if source.is_variable:
                        callback(source.name, arrays[b])
                    callback(f"{node.name}_{name}", arrays[b])
            self._run([item])
            if node is None:  # a copy between devices
                continue
            for name, b in zip(node.output_names(), step.outputs):  # hidden ones too
                callback(name, arrays[b])

    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Run the backward pass of the last forward pass, writing (or adding, per
        ``grad_req``) the gradients into :attr:`grad_arrays`.

        ``out_grads`` are the head gradients: one per output (a list, a dict by
        output name, or one array for a single output); loss outputs
        (``SoftmaxOutput``, ``MakeLoss``, regression outputs) need none."""
        if self._ran is not None:  # after a training-mode pass of an inference executor
            self._ran.backward(out_grads, is_train)
            return
        graph = self._graph
        if graph.backward_error is not None:
            raise OperatorError(f"backward is not possible: {graph.backward_error}")
        self._copy_heads(out_grads)
        sparse_grads = [(self._sparse[b], self._arrays[b], req)
                        for b, req in zip(graph.grads, self._grad_reqs) if b in self._sparse]
        for values, dense, req in sparse_grads:  # grad_req 'add' adds to their values
            if req == "add":
                values.copyto(dense)
        if self._monitor is not None:
            self._monitored_backward(current_engine(), bool(is_train))
        else:
            self._run(self._program(True, bool(is_train)))
        for values, dense, _ in sparse_grads:
            dense.copyto(values)

    def _monitored_backward(self, eng: Any, is_train: bool) -> None:
        # each backward operator's results are named <node>_backward_<input>, as MXNet does
        callback = self._monitor[0]
        graph, arrays = self._graph, self._arrays
        steps = graph.steps[graph.num_forward:]
        for step, (opr, ctx) in zip(steps, self._program(True, is_train, bulk=1)):
            eng.push(opr, ctx)
            if step.kind == OP and step.node is not None:
                inputs = step.node.input_names()
                for position, b in zip(step.gradient_of, step.outputs):
                    callback(f"{step.node.name}_backward_{inputs[position]}", arrays[b])

    def set_grad_arrays(self, grad_arrays: Sequence[NDArray | None]) -> None:
        """Have later backward passes write the argument gradients into ``grad_arrays``
        (one per argument, in ``list_arguments()`` order) in place of :attr:`grad_arrays`.

        An argument bound without a gradient (``grad_req='null'``) takes None; the others
        an array of the gradient's shape, dtype and device.  The
        backward pass is prepared for each set of arrays once: switching back to a set
        used by one of the last two is free (what a cached graph does when its gradients
        go sometimes into the parameters' ``.grad``, sometimes elsewhere)."""
        grad_arrays = list(grad_arrays)
        if len(grad_arrays) == len(self.grad_arrays) and all(
                new is old for new, old in zip(grad_arrays, self.grad_arrays)):
            return  # the arrays in use (what a cached graph's every call passes)
        if len(grad_arrays) != len(self.grad_arrays):
            raise ValueError(f"set_grad_arrays: got {len(grad_arrays)} array(s) for "
                             f"{len(self.grad_arrays)} argument(s)")
        for name, old, new in zip(self._arg_names, self.grad_arrays, grad_arrays):
            if (old is None) != (new is None):
                raise ValueError(f"set_grad_arrays: argument {name!r} was bound "
                                 f"{'without' if old is None else 'with'} a gradient; pass "
                                 f"{'None' if old is None else 'an array'} for it")
            if new is not None and (new.shape != old.shape or new.dtype != old.dtype
                                    or new._chunk.dev is not old._chunk.dev):
                raise ShapeError(f"set_grad_arrays: the gradient of {name!r} must be a "
                                 f"{old.shape} {np.dtype(old.dtype).name} array on "
                                 f"{old.context}, got {new.shape} {np.dtype(new.dtype).name} "
                                 f"on {new.context}")
        version = next((v for v, arrays in self._grad_sets.items()
                        if all(a is b for a, b in zip(arrays, grad_arrays))), None)
        if version is None:
            version = max(self._grad_sets) + 1
            self._grad_sets[version] = grad_arrays
            for stale in sorted(self._grad_sets)[:-2]:  # keep the last two sets' programs
                del self._grad_sets[stale]
                for key in [k for k in self._operators if k[0] and k[3] == stale]:
                    del self._operators[key]
        self._grad_version = version
        self.grad_arrays = self._grad_sets[version]
        for b, array in zip(self._graph.grads, self.grad_arrays):
            if b is not None:
                self._bound(self._arrays, b, array)

    def _copy_heads(self, out_grads: Any) -> None:
        names = self._graph.output_names
        if out_grads is None:
            given: list[Any] = [None] * len(names)
        elif isinstance(out_grads, Mapping):
            unknown = [k for k in out_grads if k not in names]
            if unknown:
                raise UnknownNameError(f"backward: out_grads names {unknown[0]!r}, which is not "
                                       f"an output; the outputs are {', '.join(names)}")
            given = [out_grads.get(n) for n in names]
        elif isinstance(out_grads, (NDArray, np.ndarray)):
            given = [out_grads]
        else:
            given = list(out_grads)
        if len(given) < len(names):
            raise ValueError(f"backward: got {len(given)} head gradient(s) for "
                             f"{len(names)} output(s) ({', '.join(names)}); give one per "
                             f"output")
        # as MXNet, gradients past the last output are ignored (one list may serve graphs
        # with and without some outputs)
        given = given[:len(names)]
        for k, head in enumerate(self._heads):
            if head is None:
                continue
            value = given[k]
            if value is None:
                raise ValueError(
                    f"backward: output {names[k]!r} is not a loss, so it needs a head gradient; "
                    f"pass out_grads=[...] with one array per output (ones of the output's "
                    f"shape back-propagate its sum), or end the network in a loss operator "
                    f"such as SoftmaxOutput or MakeLoss")
            if tuple(value.shape) != head.shape:
                raise ShapeError(f"backward: the head gradient of output {names[k]!r} has shape "
                                 f"{tuple(value.shape)} but the output has shape {head.shape}")
        for k, head in enumerate(self._heads):
            if head is not None:
                _copy_into(given[k], head)

    def _copy_in(self, values: Mapping[str, Any]) -> None:
        """Copy values into the arguments of those names, after checking all of them."""
        arg_dict = self.arg_dict
        for name, value in values.items():
            if name not in arg_dict:
                raise UnknownArgumentError(
                    f"Unknown argument {name!r}: the arguments are {', '.join(self._arg_names)}")
            target = arg_dict[name]
            shape = tuple(getattr(value, "shape", np.shape(value)))
            if shape != target.shape:
                raise ShapeError(f"Shape not match! Argument {name}, need: {target.shape}, "
                                 f"received: {shape}")
        for name, value in values.items():
            _copy_into(value, arg_dict[name])

    # -- the arrays by name -------------------------------------------------------------
    @property
    def arg_dict(self) -> dict[str, NDArray]:
        """The argument arrays by name."""
        return dict(zip(self._arg_names, self.arg_arrays))

    @property
    def grad_dict(self) -> dict[str, NDArray | None]:
        """The gradient arrays by argument name (None where ``grad_req`` is ``null``)."""
        return dict(zip(self._arg_names, self.grad_arrays))

    @property
    def aux_dict(self) -> dict[str, NDArray]:
        """The auxiliary-state arrays by name."""
        return dict(zip(self._aux_names, self.aux_arrays))

    @property
    def output_dict(self) -> dict[str, NDArray]:
        """The output arrays by output name (``fc1_output``)."""
        return dict(zip(self._graph.output_names, self.outputs))

    def copy_params_from(self, arg_params: Mapping[str, Any],
                         aux_params: Mapping[str, Any] | None = None,
                         allow_extra_params: bool = False) -> None:
        """Copy parameter values (NDArrays or numpy arrays, converted to each array's
        dtype) into the arguments and auxiliary states of those names.  Names the
        symbol lacks raise unless ``allow_extra_params``."""
        for params, targets, what in ((arg_params, self.arg_dict, "argument"),
                                      (aux_params or {}, self.aux_dict, "auxiliary state")):
            for name in params:
                if name not in targets and not allow_extra_params:
                    raise UnknownParameterError(
                        f"copy_params_from: {name!r} is not an {what} of the symbol (they are "
                        f"{', '.join(targets) or 'none'}); pass allow_extra_params=True to skip "
                        f"names the symbol does not have")
                if name in targets and tuple(params[name].shape) != targets[name].shape:
                    raise ShapeError(f"copy_params_from: {what} {name!r} has shape "
                                     f"{targets[name].shape} but the value has shape "
                                     f"{tuple(params[name].shape)}")
            for name, value in params.items():
                if name in targets:
                    _copy_into(value, targets[name])

    def set_monitor_callback(self, callback: Callable[[str, NDArray], None],
                             monitor_all: bool = False) -> None:
        """Call ``callback(name, array)`` for every node output (and with
        ``monitor_all`` first every node input: a variable under its own name, then
        each input as ``<node>_<input>``) as the forward pass pushes it.  The array
        holds the value for work pushed from the callback (``array.norm()``) or read
        in it (``asnumpy()`` waits); a later forward pass may reuse its memory.  The
        nodes are those of :meth:`get_optimized_symbol`: where a graph pass changed a
        node, the callback sees what the changed node computes (``nchw16c_layout`` keeps
        a convolution's output as a 5-D NCHW16c array, the same values in another
        order)."""
        self._monitor = (callback, bool(monitor_all))
        if self._training is not None:
            self._training._monitor = self._monitor

    # -- shapes --------------------------------------------------------------------------
    def reshape(self, partial_shaping: bool = False, allow_up_sizing: bool = False,
                **kwargs: Any) -> Executor:
        """A new executor for new input shapes that shares this one's parameter
        arrays and memory.  Arrays whose shape does not change are shared; arrays
        named in ``kwargs`` (or any, with ``partial_shaping``) may change shape,
        viewing this executor's memory when they shrink and, only with
        ``allow_up_sizing``, getting new memory when they grow."""
        from ._bind import reshape

        return reshape(self, partial_shaping, allow_up_sizing, kwargs)

    # -- introspection -------------------------------------------------------------------
    def memory_stats(self) -> dict[str, Any]:
        """What the memory plan gave: ``planned`` (planning was on),
        ``intermediate_bytes`` (bytes of inner storage this executor allocated),
        ``shared_bytes`` (inner storage borrowed from a shared executor),
        ``blocks``, ``inner_buffers``, ``inplace`` (outputs computed in place) and
        ``live_peak_bytes`` (the most inner bytes alive at one step: the least any
        plan without in-place sharing could allocate)."""
        plan = self._plan
        return {
            "planned": plan.enabled,
            "intermediate_bytes": plan.allocated_bytes,
            "shared_bytes": sum(plan.sizes[:plan.num_shared]),
            "blocks": len(plan.sizes),
            "inner_buffers": len(plan.storage_of),
            "inplace": len(plan.inplace),
            "live_peak_bytes": plan.live_peak_bytes,
        }

    def get_optimized_symbol(self) -> Any:
        """The symbol this executor runs: the bound one after the graph passes made at
        bind time (common-subexpression elimination, unless the config key
        ``eliminate_common_expr`` or ``MXNET_ELIMINATE_COMMON_EXPR`` turns it off; then
        the passes plugins register, unless config ``graph_passes`` is off)."""
        from ..symbol import Symbol

        return Symbol(list(self._graph.symbol._outputs))

    def debug_str(self) -> str:
        """The bound graph as text: every step with its buffers (shape, dtype and, for
        inner buffers, the memory block), write modes, and the memory totals."""
        graph, plan = self._graph, self._plan

        def describe(b: int) -> str:
            buffer = graph.buffers[b]
            where = (f"block {plan.storage_of[b]}" if buffer.kind == INNER else buffer.kind)
            return f"{buffer.name} {buffer.shape} {buffer.dtype.name} [{where}, {buffer.device}]"

        lines = [f"Symbol outputs: {', '.join(graph.output_names)}"]
        for s, step in enumerate(graph.steps):
            kind = (step.op.name if step.kind == OP else
                    "_CrossDeviceCopy" if step.kind == CROSS_COPY else step.kind)
            phase = "backward" if s >= graph.num_forward else "forward"
            lines.append(f"Step {s} ({phase}) {kind}, Name={step.name}, Device={step.device}")
            for b in step.inputs:
                lines.append(f"  in:  {describe(b)}")
            for position, (b, req) in enumerate(zip(step.outputs, step.reqs)):
                mode = "inplace" if (s, position) in plan.inplace else req.value
                lines.append(f"  out: {describe(b)} req={mode}")
        stats = self.memory_stats()
        lines.append(f"Planned {stats['intermediate_bytes'] / 2**20:.3f} MiB for "
                     f"{stats['inner_buffers']} inner buffers in {stats['blocks']} blocks "
                     f"(memory_plan={'on' if plan.enabled else 'off'}, "
                     f"{stats['inplace']} in place; live peak "
                     f"{stats['live_peak_bytes'] / 2**20:.3f} MiB)")
        # MXNet's closing lines, which tools parse (Module reads the third line from the end)
        temp = sum(1 for step in graph.steps if step.kind == OP and any(
            r.kind.value == "temp_space" for r in step.op.resource_requests(step.attrs)))
        lines.append(f"Total {stats['intermediate_bytes'] >> 20} MB allocated")
        lines.append(f"Total {temp} TempSpace resource requested")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return (f"<Executor of {', '.join(self._graph.output_names)} on {self._ctx}: "
                f"{self._graph.num_forward} forward and "
                f"{len(self._graph.steps) - self._graph.num_forward} backward steps>")


class _Pushable(NamedTuple):
    """A step's engine function, the context it is pushed to, its property, the
    variables of its inputs (those it computes in place over included), and its node's
    state (None for a step that runs no operator's kernel)."""

    function: EngineFunction
    ctx: Any
    prop: FnProperty
    inputs: Sequence[Any]
    state: NodeState | None


def _chains(pushables: list[_Pushable], bulk: int) -> list[list[_Pushable]]:
    """Consecutive steps grouped into chains of at most ``bulk``: a step joins the
    current group when it depends on the group's last step (reads or, computing in
    place, writes a variable that step writes), so it could not run beside it, and
    that step feeds no other step (after a fork the branches get groups of their
    own, which the engine can run at the same time).  A group runs on one device
    as a normal operation: steps on another device, or in the engine's copy lanes,
    start their own."""
    fans = _fan_out(pushables)
    groups: list[list[_Pushable]] = []
    for index, pushable in enumerate(pushables):
        function = pushable.function
        if groups and len(groups[-1]) < bulk and fans[index - 1] <= 1:
            last = groups[-1][-1]
            written = {id(v) for v in last.function.writes}
            if (last.ctx == pushable.ctx and last.prop is _NORMAL and pushable.prop is _NORMAL
                    and any(id(v) in written for v in (*function.reads, *function.writes))):
                groups[-1].append(pushable)
                continue
        groups.append([pushable])
    return groups


def _runs(pushables: list[_Pushable]) -> list[list[_Pushable]]:
    """Consecutive steps grouped while they run on one device as normal operations."""
    groups: list[list[_Pushable]] = []
    for pushable in pushables:
        if groups and groups[-1][-1].ctx == pushable.ctx and pushable.prop is _NORMAL and \
                groups[-1][-1].prop is _NORMAL:
            groups[-1].append(pushable)
        else:
            groups.append([pushable])
    return groups


def _fan_out(pushables: list[_Pushable]) -> list[int]:
    """Per step, how many later steps read what it writes before that is written again
    (the most over its variables): more than one means the step forks the graph.  A step
    that overwrites a variable without reading it (a block the memory plan hands on)
    ends the count without adding to it."""
    fans = [0] * len(pushables)
    open_uses: dict[int, list[int]] = {}  # variable -> [its last writer, reads since]
    for index, pushable in enumerate(pushables):
        for var in {id(v) for v in pushable.inputs}:
            use = open_uses.get(var)
            if use is not None:
                use[1] += 1
        for var in {id(v) for v in pushable.function.writes}:
            use = open_uses.get(var)
            if use is not None:
                fans[use[0]] = max(fans[use[0]], use[1])
            open_uses[var] = [index, 0]
    for writer, uses in open_uses.values():
        fans[writer] = max(fans[writer], uses)
    return fans


def _fits(buffer: Any, shared_outputs: list[NDArray]) -> bool:
    """Whether output ``buffer`` can view the shared executor's output of its position:
    the same dtype and device, no more bytes, and that output contiguous."""
    if buffer.position >= len(shared_outputs) or is_sparse(shared_outputs[buffer.position]):
        return False
    old = shared_outputs[buffer.position]
    return (old._dtype == buffer.dtype and old._strides is None and old.context == buffer.device
            and buffer.nbytes <= old.size * old._dtype.itemsize)


def _bulked_operator(eng: Any, segment: list[_Pushable]) -> tuple[Any, Any]:
    """One engine operator running ``segment``'s steps in order (see
    :func:`dagnet.runtime.bulk_function`), or the calls their kernels offered (see
    :class:`ReplayingChain`), and the context to push it to."""
    steps = [p.function for p in segment]
    bulk = bulk_function(steps, "node")
    fn = bulk.fn
    if any(p.state is not None for p in segment):
        fn = ReplayingChain(fn, steps, [p.state for p in segment])
    first = segment[0]
    return eng.new_operator(fn, bulk.reads, bulk.writes, first.prop, bulk.name), first.ctx


def _helper_fn(kind: str, ins: list, outs: list) -> Callable[[Any], None]:
    out = outs[0]
    source = ins[0] if ins else None

    def run(run_ctx: Any) -> None:
        with stream_scope(run_ctx):
            if kind == ZERO:
                out[...] = 0
            elif kind == COPY:
                out[...] = source
            else:
                out[...] += source

    return run


def _copy_into(value: Any, target: NDArray) -> None:
    """Copy an NDArray (any device, converting dtype and storage type) or host values into
    ``target``."""
    if isinstance(value, NDArray):
        if value.stype != "default" or target.stype != "default":
            if value is not target:
                value.copyto(target)  # a cast into the target's storage type
        elif value is not target:
            push_copy(value, target)
    else:
        target[:] = value

