"""Binding: from a symbol and shapes (``simple_bind``) or arrays (``bind``) to an
:class:`Executor`, and ``Executor.reshape``.

Shapes and dtypes of every entry come from the symbol's inference; what
cannot be inferred, or contradicts itself, is reported before anything is
allocated: the arguments still unknown, or the node, operator, argument and
both shapes of an inconsistency.

``group2ctx`` (group name -> context) places the nodes of each ``ctx_group`` on
its device (see :mod:`._placement`); without it every array must be on the bound
context.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np

from .. import config as _config
from .._errors import ContextError, DagnetError, DTypeError, OperatorError, ShapeError
from ..context import Context
from ..ndarray import NDArray, wrap_chunk
from ..ndarray import zeros as _zeros
from ..ndarray.sparse import check_storage, is_sparse
from ..ndarray.sparse import zeros as _sparse_zeros
from ..operator import shape_is_known
from ..runtime import device_of
from ..symbol import expand_deferred, has_deferred
from ._cross_device import bridge_devices
from ._cse import eliminate_common_expr, remap_entries
from ._executor import Executor
from ._graph import GRAD_REQS, build_graph
from ._graph_passes import run_graph_passes
from ._placement import check_group2ctx, input_contexts, place_nodes
from ._shared_arrays import ArraySource
from ._storage_types import gradient_stypes

__all__ = ["simple_bind", "bind", "reshape"]


def simple_bind(symbol: Any, ctx: Context, grad_req: Any = "write", type_dict: dict | None = None,
                group2ctx: dict | None = None, shared_exec: Executor | None = None,
                shared_arg_names: Collection[str] | None = None,
                shared_buffer: dict[str, NDArray] | None = None, **shapes: Any) -> Executor:
    """Infer every shape from the argument shapes in ``shapes`` (and dtypes from
    ``type_dict``; arguments without one default to float32, as in MXNet),
    allocate zeroed arguments, gradients (per ``grad_req``) and auxiliary
    states on ``ctx`` -- or, for a variable whose ``ctx_group`` ``group2ctx``
    names, on that group's device -- and bind them.  ``shared_exec`` lends its
    inner memory; with ``shared_buffer`` it also lends the arrays of
    ``shared_arg_names`` and the other arguments come from the buffer (see
    :mod:`._shared_arrays`).  An argument whose gradient its operators declare sparse
    (``Embedding`` with ``sparse_grad``) gets a sparse gradient array, as in MXNet."""
    dev = _device(ctx)
    group2ctx = check_group2ctx(group2ctx)
    # as MXNet, keyword values that are not shapes (an op's axis=, mode= ...) are ignored
    shapes = {k: v for k, v in shapes.items() if isinstance(v, (tuple, list))}
    if has_deferred(symbol):
        symbol = expand_deferred(symbol, shapes, dict(type_dict or {}))
    entry_shapes = _complete_shapes(symbol, shapes, "simple_bind")
    arg_nodes, aux_nodes = symbol._variables()
    if type_dict is None:
        type_dict = {n.name: np.float32 for n in arg_nodes if "__dtype__" not in n.attr}
    entry_dtypes = _complete_dtypes(symbol, type_dict, "simple_bind")
    arg_ctxs, aux_ctxs = input_contexts(arg_nodes, aux_nodes, dev.ctx, group2ctx)
    reqs = _grad_reqs(symbol, grad_req)

    source = ArraySource(shared_exec, shared_arg_names, shared_buffer)
    sparse_grads = gradient_stypes(symbol, {})
    args, grads = [], []
    for node, where, req in zip(arg_nodes, arg_ctxs, reqs):
        shape, dtype = entry_shapes[(node, 0)], entry_dtypes[(node, 0)]
        arg, grad = source.argument(node.name, shape, dtype, where, req != "null")
        stype = sparse_grads.get(node.name)
        if grad is not None and stype is not None and grad.stype != stype:
            grad = _sparse_zeros(stype, shape, ctx=where, dtype=dtype)
        args.append(arg)
        grads.append(grad)
    aux = [source.auxiliary(n.name, entry_shapes[(n, 0)], entry_dtypes[(n, 0)], where)
           for n, where in zip(aux_nodes, aux_ctxs)]
    return _make(symbol, dev, entry_shapes, entry_dtypes, args, grads, aux, reqs, shared_exec,
                 group2ctx)


def bind(symbol: Any, ctx: Context, args: Any, args_grad: Any = None, grad_req: Any = "write",
         aux_states: Any = None, group2ctx: dict | None = None,
         shared_exec: Executor | None = None) -> Executor:
    """Bind ``symbol`` to given arrays: ``args`` (and ``args_grad``,
    ``aux_states``) as lists in ``list_arguments`` (``list_auxiliary_states``)
    order or dicts by name.  Arguments without a gradient array get none,
    whatever ``grad_req`` says (one with ``null`` keeps its array, untouched); without
    ``args_grad`` there is no backward pass.  Sparse arrays stay the executor's arrays
    (see :mod:`._storage_types`).  The arrays must be on ``ctx`` unless
    ``group2ctx`` is given; then each lives where it is, and the nodes that use it
    read a copy where they run on another device."""
    dev = _device(ctx)
    group2ctx = check_group2ctx(group2ctx)
    names, aux_names = symbol.list_arguments(), symbol.list_auxiliary_states()
    arg_arrays = _arrays(args, names, "args", "arguments", required=True)
    if has_deferred(symbol):
        given = [(n, a) for n, a in zip(names, arg_arrays) if a is not None]
        symbol = expand_deferred(symbol, {n: a.shape for n, a in given},
                                 {n: a.dtype for n, a in given})
    grad_arrays = ([None] * len(names) if args_grad is None else
                   _arrays(args_grad, names, "args_grad", "arguments", required=False))
    aux_arrays = _arrays(aux_states if aux_states is not None else [], aux_names, "aux_states",
                         "auxiliary states", required=True)
    for what, arrays in (("args", arg_arrays), ("args_grad", grad_arrays),
                         ("aux_states", aux_arrays)):
        for name, array in zip(aux_names if what == "aux_states" else names, arrays):
            if array is not None and array.context != dev.ctx and not group2ctx:
                raise ContextError(f"bind: {what} {name!r} is on {array.context} but the "
                                   f"executor binds to {dev.ctx}; move it with "
                                   f".as_in_context({dev.ctx}), or place the graph's nodes "
                                   f"on several devices with group2ctx")
    _check_storage(symbol, dict(zip(names + aux_names, arg_arrays + aux_arrays)))
    reqs = [r if g is not None else "null" for r, g in zip(_grad_reqs(symbol, grad_req),
                                                           grad_arrays)]
    given = {n: a.shape for n, a in zip(names + aux_names, arg_arrays + aux_arrays)}
    entry_shapes = _complete_shapes(symbol, given, "bind")
    for name, array, grad in zip(names, arg_arrays, grad_arrays):
        if grad is not None and grad.shape != array.shape:
            raise ShapeError(f"bind: the gradient array of argument {name!r} has shape "
                             f"{grad.shape} but the argument has shape {array.shape}")
    types = {n: a.dtype for n, a in zip(names + aux_names, arg_arrays + aux_arrays)}
    entry_dtypes = _complete_dtypes(symbol, types, "bind")
    return _make(symbol, dev, entry_shapes, entry_dtypes, arg_arrays, grad_arrays, aux_arrays,
                 reqs, shared_exec, group2ctx)


def reshape(executor: Executor, partial_shaping: bool, allow_up_sizing: bool,
            shapes: dict[str, Any]) -> Executor:
    """``executor.reshape(...)``: see :meth:`Executor.reshape`."""
    symbol = executor._symbol
    arg_nodes, aux_nodes = symbol._variables()
    values, _ = symbol._infer_shape_entries(**shapes)
    old = dict(zip([n.name for n in arg_nodes + aux_nodes],
                   executor.arg_arrays + executor.aux_arrays))
    hints = {n.name: old[n.name].shape for n in arg_nodes + aux_nodes
             if n.name not in shapes and not shape_is_known(values.get((n, 0)))}
    entry_shapes = _complete_shapes(symbol, {**hints, **shapes}, "reshape")

    def resized(name: str, array: NDArray | None, new_shape: tuple) -> NDArray | None:
        if array is None or array.shape == new_shape:
            return array
        if not (partial_shaping or name in shapes):
            raise ShapeError(
                f"reshape: the shape of {name!r} changes from {array.shape} to {new_shape} "
                f"though it was not given, so the new executor would not share it; check the "
                f"network, or pass partial_shaping=True if this is intended")
        if math.prod(new_shape) > math.prod(array.shape):
            if not allow_up_sizing:
                raise ShapeError(
                    f"reshape: the new shape {new_shape} of {name!r} is larger than the "
                    f"original {array.shape}; bind the largest shapes first and reshape down, "
                    f"or pass allow_up_sizing=True to allocate new arrays")
            return _zeros(new_shape, ctx=array.context, dtype=array.dtype,
                          stype=array.stype)
        if is_sparse(array):  # no memory to view: a new (empty) sparse array
            return _sparse_zeros(array.stype, new_shape, ctx=array.context, dtype=array.dtype)
        # a smaller array views the start of the original's memory, as MXNet's does
        return wrap_chunk(array._chunk, array._offset, tuple(new_shape), array._dtype)

    args = [resized(n.name, a, entry_shapes[(n, 0)])
            for n, a in zip(arg_nodes, executor.arg_arrays)]
    grads = [resized(n.name, g, entry_shapes[(n, 0)])
             for n, g in zip(arg_nodes, executor.grad_arrays)]
    aux = [resized(n.name, a, entry_shapes[(n, 0)])
           for n, a in zip(aux_nodes, executor.aux_arrays)]
    types = {n.name: a.dtype for n, a in zip(arg_nodes + aux_nodes, args + aux)}
    entry_dtypes = _complete_dtypes(symbol, types, "reshape")
    reshaped = _make(symbol, executor._dev, entry_shapes, entry_dtypes, args, grads, aux,
                     executor._grad_reqs, executor, executor._group2ctx)
    if executor._monitor is not None:  # the monitor goes on watching, as in MXNet
        reshaped.set_monitor_callback(*executor._monitor)
    return reshaped


# -- helpers -------------------------------------------------------------------------
def _make(symbol: Any, dev: Any, shapes: dict, dtypes: dict, args: list, grads: list, aux: list,
          reqs: list[str], shared_exec: Executor | None, group2ctx: dict[str, Context],
          for_training: bool | None = None) -> Executor:
    """The executor of ``symbol``.  Bound without any gradient (``for_training`` None
    decides so from ``reqs``), its graph is the one the passes give for inference, and the
    graph for training-mode passes is made when one is first asked for (see
    :meth:`Executor.forward`)."""
    inference = not group2ctx and (for_training is False or (  # passes run on one device
        for_training is None and all(r == "null" for r in reqs)))
    optimized, bound_shapes, bound_dtypes = symbol, shapes, dtypes
    if _config.get("eliminate_common_expr"):
        optimized, mapping = eliminate_common_expr(symbol)
        shapes = remap_entries(shapes, mapping, optimized)
        dtypes = remap_entries(dtypes, mapping, optimized)
    if not group2ctx:  # one device
        optimized, shapes, dtypes = run_graph_passes(optimized, shapes, dtypes, dev.ctx,
                                                     _inference_from(args, aux),
                                                     for_training=not inference)
    devices = place_nodes(optimized, dev.ctx, group2ctx, [a.context for a in args],
                          [a.context for a in aux])
    grad_devices = [None if g is None else g.context for g in grads]
    graph = build_graph(optimized, shapes, dtypes, reqs, devices, grad_devices)
    graph.output_names = symbol.list_outputs()  # an output CSE copied keeps its name
    executor = Executor(symbol, dev, bridge_devices(graph), args, grads, aux, reqs, shared_exec,
                        group2ctx)
    if inference:  # called by the executor itself: a weak reference keeps no cycle
        this = weakref.ref(executor)
        executor._for_training = lambda: _make(
            symbol, dev, bound_shapes, bound_dtypes, args, grads, aux, reqs, this(),
            group2ctx, for_training=True)
    return executor


def _inference_from(args: list, aux: list) -> Any:
    """``infer(symbol)`` for :func:`run_graph_passes`: a rewritten symbol's entry shapes
    and dtypes, from the bound arrays (the rewrite keeps the arguments and auxiliary
    states, in order; it is called only for a graph a pass rewrote)."""

    def infer(rewritten: Any) -> tuple[dict, dict]:
        arg_nodes, aux_nodes = rewritten._variables()
        bound = list(zip(arg_nodes + aux_nodes, args + aux))
        return (_complete_shapes(rewritten, {n.name: a.shape for n, a in bound}, "graph pass"),
                _complete_dtypes(rewritten, {n.name: a.dtype for n, a in bound}, "graph pass"))

    return infer


def _device(ctx: Any) -> Any:
    if not isinstance(ctx, Context):
        raise ContextError(f"bind: ctx must be a device context such as dagnet.cpu(), got "
                           f"{type(ctx).__name__} {ctx!r}")
    return device_of(ctx)


def _complete_shapes(symbol: Any, given: dict[str, Any], what: str) -> dict:
    """Every entry's shape, or an error naming what stays unknown."""
    values, deferred = symbol._infer_shape_entries(**given)
    arg_nodes, aux_nodes = symbol._variables()
    unknown = [n for n in arg_nodes + aux_nodes if not shape_is_known(values.get((n, 0)))]
    if unknown:
        known = ", ".join(f"{n.name} (inferred so far: {values.get((n, 0))})" for n in unknown)
        by_id = {id(n): n for n in symbol._nodes()}
        reasons = "; ".join(f"node {by_id[k].name!r} (operator {by_id[k].op.name!r}): {e}"
                            for k, e in deferred.items() if k in by_id)
        raise ShapeError(
            f"{what}: cannot infer the shapes of {known}"
            + (f"; inference stopped at {reasons}" if reasons else "")
            + f"; give them as keyword arguments, e.g. {unknown[0].name}=(...)")
    for node in symbol._nodes():
        for index in range(node.num_outputs()):
            if not symbol._shape_is_final(values, (node, index)):
                raise ShapeError(
                    f"{what}: cannot infer output {node.output_names()[index]!r} of node "
                    f"{node.name!r} (operator {node.op.name!r}) from the argument shapes "
                    f"(inferred so far: {values.get((node, index))})")
    return values


def _complete_dtypes(symbol: Any, given: dict[str, Any], what: str) -> dict:
    """Every entry's dtype; variables nothing decides default to float32 (MXNet's default)."""
    values, _ = symbol._infer_type_entries(**given)
    arg_nodes, aux_nodes = symbol._variables()
    open_names = [n.name for n in arg_nodes + aux_nodes if values.get((n, 0)) is None]
    if open_names:
        values, _ = symbol._infer_type_entries(
            **{**given, **{name: np.float32 for name in open_names}})
    for node in symbol._nodes():
        for index in range(node.num_outputs()):
            if values.get((node, index)) is None:
                raise DTypeError(f"{what}: cannot infer the dtype of output "
                                 f"{node.output_names()[index]!r} of node {node.name!r}; give "
                                 f"the argument dtypes (type_dict)")
    return values


def _grad_reqs(symbol: Any, grad_req: Any) -> list[str]:
    """One of write/add/null per argument from a str, a list or a dict (missing: null)."""
    names = symbol.list_arguments()
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(names)
    elif isinstance(grad_req, Mapping):
        # as MXNet, names that are not arguments are ignored: one grad_req dict may serve
        # variants of a network (Convolution with and without its bias)
        reqs = [grad_req.get(n, "null") for n in names]
    elif isinstance(grad_req, Sequence):
        reqs = list(grad_req)
        if len(reqs) != len(names):
            raise OperatorError(f"grad_req has {len(reqs)} entries for {len(names)} arguments "
                                f"({', '.join(names)}); give one per argument or a dict")
    else:
        raise TypeError(f"grad_req must be a str, a list or a dict, got "
                        f"{type(grad_req).__name__}")
    for name, req in zip(names, reqs):
        if req not in GRAD_REQS:
            raise OperatorError(f"grad_req {req!r} for argument {name!r} is not one of "
                                f"{', '.join(GRAD_REQS)}")
    return reqs


def _arrays(value: Any, names: list[str], what: str, kind: str, required: bool) -> list:
    """``value`` (a list in order, or a dict by name) as one entry per name."""
    extra: list[str] = []
    if isinstance(value, Mapping):
        # as MXNet, names the symbol lacks are ignored: one dict may serve several graphs
        # (a loop body that leaves a closed-over variable unused, a bias left out); they are
        # named below if a required array is missing, as a likely misspelling
        extra = [k for k, v in value.items() if k not in names and v is not None]
        arrays = [value.get(n) for n in names]
    elif isinstance(value, (list, tuple)):
        if len(value) != len(names):
            raise OperatorError(f"bind: {what} has {len(value)} arrays but the symbol has "
                                f"{len(names)} {kind} ({', '.join(names) or 'none'}); give one "
                                f"per name in order, or a dict")
        arrays = list(value)
    else:
        raise TypeError(f"bind: {what} must be a list or a dict of NDArrays, got "
                        f"{type(value).__name__}")
    missing = [n for n, a in zip(names, arrays) if a is None]
    if required and missing:
        hint = (f"; it names {', '.join(map(repr, extra))}, which the symbol lacks: is one "
                f"misspelt?" if extra else "")
        raise OperatorError(f"bind: {what} lacks {', '.join(map(repr, missing))}; the "
                            f"{kind} are {', '.join(names)}{hint}")
    for name, array in zip(names, arrays):
        if array is not None and not isinstance(array, NDArray):
            raise TypeError(f"bind: {what} {name!r} must be an NDArray, got "
                            f"{type(array).__name__} (convert with dagnet.nd.array)")
    return arrays


def _check_storage(symbol: Any, bound: dict[str, NDArray]) -> None:
    """Each operator that reads a bound sparse array directly may refuse that storage
    (MXNet's storage-type inference at bind)."""
    if all(a.stype == "default" for a in bound.values()):
        return
    for node in symbol._nodes():
        if node.op is None:
            continue
        stypes = [bound[head.name].stype if head.op is None and head.name in bound
                  else "default" for head, _ in node.inputs]
        try:
            check_storage(node.op.name, node.attrs, stypes)
        except DagnetError as error:
            raise type(error)(f"bind: operator {node.name!r} ({node.op.name}): {error}") \
                from None

