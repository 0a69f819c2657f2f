"""What the control-flow operators share: the subgraph of a node, executors bound for a
graph built from it, and running them inside an operator's kernel.

A kernel builds the graph its call needs (the loop unrolled for the number of steps its
inputs give, or one branch), binds an executor for it once per signature (shapes, dtypes,
device, with or without gradients) and runs it inline: the operator calls the executor
makes run on the kernel's own thread (``dagnet.engine.run_inline``), which may be the only
worker.  An executor that ran a training-mode forward pass is *kept* under a token the
operator writes to a hidden output, so that the backward operator runs the backward pass
of that very executor -- dropout masks and all -- as MXNet keeps each iteration's state.
Kept executors are bounded (:data:`KEPT`): a token whose executor was dropped, or a forward
pass outside training mode, makes the backward operator run the forward pass again first.
"""

from __future__ import annotations

import functools
import itertools
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dagnet import ParamError, engine, runtime
from dagnet import ndarray as nd
from dagnet import symbol as sym
from dagnet.context import cpu
from dagnet.operator import (
    XP,
    Domain,
    Gradient,
    Op,
    OpBuilder,
    OpReqType,
    Params,
    assign,
    merge_dtype,
    merge_shape,
)

__all__ = ["KEPT", "TOKEN_DTYPE", "Runner", "backward_runner", "control_flow_ops", "feeds",
           "grad_dtype", "graph_shapes", "graph_types", "host", "infer_rules", "inline",
           "parse_subgraphs", "run_backward", "runner", "subgraphs_of", "write",
           "write_gradients"]

TOKEN_DTYPE = np.dtype(np.int64)  # the hidden last output: the key of the kept executors
KEPT = 64  # executors kept for a backward pass, across all control-flow calls
_POOL_PER_KEY = 16  # free executors kept per signature (a loop's steps each hold one)


@functools.lru_cache(maxsize=256)
def parse_subgraphs(subgraphs: str) -> tuple[Any, ...]:
    """The symbols of a ``subgraphs`` parameter (a JSON list of symbol graphs), parsed once."""
    graphs = json.loads(subgraphs)
    if not isinstance(graphs, list):
        raise ParamError("subgraphs must be a JSON list of symbol graphs")
    return tuple(sym.load_json(json.dumps(graph)) for graph in graphs)


def subgraphs_of(attrs: Any, count: int, what: str) -> tuple[Any, ...]:
    """The ``count`` subgraph symbols of a node's ``subgraphs`` parameter (a JSON list of
    symbol graphs, as MXNet's symbol files keep them under the node), parsed once."""
    graphs = parse_subgraphs(attrs.subgraphs)
    if len(graphs) != count:
        raise ParamError(f"{what}: subgraphs holds {len(graphs)} graph(s); the operator runs "
                         f"{count}")
    if attrs.num_args < count:
        raise ParamError(f"{what}: num_args={attrs.num_args} counts the {count} subgraph(s) "
                         f"and the node's inputs, so it is at least {count}")
    return graphs


def feeds(graph: Any, locs: Sequence[int], num_args: int, what: str) -> list[str | None]:
    """For each node input, the name of the ``graph`` input it feeds (None: none), from
    ``locs`` (the node input feeding each graph input, in ``list_inputs`` order)."""
    names = graph.list_inputs()
    if len(locs) != len(names) or any(not 0 <= loc < num_args for loc in locs) or \
            len(set(locs)) != len(locs):
        raise ParamError(f"{what}: the input locations {tuple(locs)} must name a different "
                         f"node input (of {num_args}) for each of the subgraph's "
                         f"{len(names)} inputs")
    fed: list[str | None] = [None] * num_args
    for name, loc in zip(names, locs):
        fed[loc] = name
    return fed


def _known(shape: Any) -> bool:
    return shape is not None and len(shape) > 0


def graph_shapes(graph: Any, fed: Sequence[str | None], shapes: Sequence[Any],
                 out_shapes: Sequence[Any] = ()) -> tuple[dict[str, Any], list[Any]]:
    """Shape inference of ``graph`` from the shapes of the node inputs feeding it (and of
    its outputs, ``out_shapes``, where known): the shapes of its inputs by name and of its
    outputs (None where unknown)."""
    given = {name: tuple(shape) for name, shape in zip(graph.list_outputs(), out_shapes)
             if _known(shape)}
    given.update({name: tuple(shape) for name, shape in zip(fed, shapes)
                  if name is not None and _known(shape)})
    args, outs, aux = graph.infer_shape_partial(**given)
    inferred = dict(zip(graph.list_arguments(), args))
    inferred.update(zip(graph.list_auxiliary_states(), aux))
    return ({k: tuple(v) for k, v in inferred.items() if _known(v)},
            [tuple(o) if _known(o) else None for o in outs])


def graph_types(graph: Any, fed: Sequence[str | None], dtypes: Sequence[Any],
                out_dtypes: Sequence[Any] = ()) -> tuple[dict[str, Any], list[Any]]:
    """Type inference of ``graph`` from the dtypes of the node inputs feeding it (and of
    its outputs, ``out_dtypes``, where known)."""
    given = {name: t for name, t in zip(graph.list_outputs(), out_dtypes) if t is not None}
    given.update({name: t for name, t in zip(fed, dtypes) if name is not None and t is not None})
    args, outs, aux = graph.infer_type_partial(**given)
    inferred = dict(zip(graph.list_arguments(), args))
    inferred.update(zip(graph.list_auxiliary_states(), aux))
    return ({k: v for k, v in inferred.items() if v is not None}, list(outs))


def infer_rules(infer: Callable, visible: Callable[[Any], int]) -> tuple[Callable, Callable]:
    """An operator's shape and type rules from ``infer(attrs, ins, outs, graph_infer, merge,
    token)``, which infers through its subgraphs with :func:`graph_shapes` or
    :func:`graph_types`; the hidden token output after the ``visible(attrs)`` ones is one
    :data:`TOKEN_DTYPE` number."""

    def infer_shape(attrs: Any, ins: list, outs: list) -> tuple[list, list]:
        return infer(attrs, ins, outs, graph_shapes, merge_shape, (1,))

    def infer_type(attrs: Any, ins: list, outs: list) -> tuple[list, list]:
        outs = list(outs)
        if len(outs) == visible(attrs):
            outs.append(None)
        return infer(attrs, ins, outs, graph_types, merge_dtype, TOKEN_DTYPE)

    return infer_shape, infer_type


def grad_dtype(dtype: Any) -> bool:
    """Whether arrays of ``dtype`` take a gradient."""
    return np.issubdtype(np.dtype(dtype), np.floating)


def host(array: Any) -> np.ndarray:
    """A kernel array as a numpy array (cupy's copied to the host)."""
    return array if isinstance(array, np.ndarray) else array.get()


def write(xp: Any, out: Any, req: OpReqType, value: Any) -> None:
    """``out (req) value`` where ``value`` is an NDArray, a numpy array or None (zeros)."""
    if req is OpReqType.NULL:
        return
    if value is None:
        value = xp.zeros(out.shape, out.dtype)
    elif isinstance(value, nd.NDArray):
        value = value.asnumpy()
    assign(out, req, xp.asarray(value, dtype=out.dtype).reshape(out.shape))


class inline:  # noqa: N801 - used as a context manager, as engine.run_inline is
    """Run a kernel's executor calls on this thread, outside autograd recording."""

    def __enter__(self) -> inline:
        self._recording = runtime.set_recording(False)
        self._inline = engine.run_inline()
        self._inline.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._inline.__exit__(*exc)
        finally:
            runtime.set_recording(self._recording)


class Runner:
    """An executor bound for one graph and signature, with its argument names in the
    operator's input order (``None`` where the graph does not read that input)."""

    def __init__(self, key: tuple, executor: Any, inputs: list[str | None],
                 aux: set[str]):
        self.key = key
        self.executor = executor
        self.inputs = inputs
        self.aux = aux

    def load(self, arrays: Sequence[Any]) -> None:
        """Copy the operator's input arrays into the executor's."""
        ex = self.executor
        for name, array in zip(self.inputs, arrays):
            if name is None:
                continue
            target = ex.aux_dict[name] if name in self.aux else ex.arg_dict[name]
            target[:] = host(array)

    def store_aux(self, xp: Any, arrays: Sequence[Any]) -> None:
        """Write the executor's auxiliary states back into the operator's (mutated) inputs."""
        for name, array in zip(self.inputs, arrays):
            if name is not None and name in self.aux:
                array[...] = xp.asarray(self.executor.aux_dict[name].asnumpy())

    def gradient(self, index: int) -> Any:
        """The gradient the backward pass left for operator input ``index`` (None: zero)."""
        name = self.inputs[index]
        if name is None or name in self.aux:
            return None
        return self.executor.grad_dict.get(name)


_lock = threading.Lock()
_free: dict[tuple, list[Runner]] = {}
_kept: OrderedDict[int, Runner] = OrderedDict()
_tokens = itertools.count(1)


def runner(key: tuple, build: Callable[[], tuple[Any, list[str | None]]], device: Any,
           shapes: Sequence[tuple[int, ...]], dtypes: Sequence[Any], with_grad: bool
           ) -> Runner:
    """A free executor for ``key`` (the graph and signature), bound on first use from
    ``build()`` -> ``(symbol, argument name of each operator input or None)``."""
    full_key = (key, device, tuple(shapes), tuple(np.dtype(d).str for d in dtypes), with_grad)
    with _lock:
        free = _free.get(full_key)
        if free:
            return free.pop()
    graph, names = build()
    given_shapes = {n: s for n, s in zip(names, shapes) if n is not None}
    given_types = {n: np.dtype(d) for n, d in zip(names, dtypes) if n is not None}
    aux = set(graph.list_auxiliary_states())
    if with_grad:
        grad_req = {n: ("write" if grad_dtype(given_types[n]) else "null")
                    for n in graph.list_arguments()}
    else:
        grad_req = "null"
    executor = graph.simple_bind(device, grad_req=grad_req, type_dict=given_types,
                                 **given_shapes)
    return Runner(full_key, executor, list(names), aux)


def release(run: Runner) -> None:
    """Give an executor back for later calls with its signature."""
    with _lock:
        free = _free.setdefault(run.key, [])
        if len(free) < _POOL_PER_KEY:
            free.append(run)


def keep(run: Any) -> int:
    """Keep ``run`` (what a call's backward pass needs: executors that ran its forward
    pass) for the backward pass of that call; returns its token."""
    with _lock:
        token = next(_tokens)
        _kept[token] = run
        while len(_kept) > KEPT:
            _kept.popitem(last=False)
    return token


def take_kept(token: int) -> Any:
    """The executor kept under ``token`` (None when there is none any more)."""
    with _lock:
        return _kept.pop(token, None)


def backward_runner(token: int, make: Callable[[], Runner], data: Sequence[Any]) -> Runner:
    """For a backward operator: the runner whose forward pass the call with ``token`` kept,
    or, when none was kept, ``make()``'s after it ran that forward pass again on ``data``
    (in training mode unless the token, -1, says the call was not)."""
    run = take_kept(token) if token > 0 else None
    if run is None:
        run = make()
        run.load(data)
        run.executor.forward(is_train=token != -1)
    return run


def run_backward(run: Runner, head: Sequence[Any], ctx: Any) -> None:
    """The backward pass of ``run``'s executor from the head gradients ``head``."""
    device = device_of(ctx)
    run.executor.backward([nd.array(host(h), ctx=device, dtype=h.dtype) for h in head])


def write_gradients(xp: Any, run: Runner, count: int, aux_inputs: Sequence[int],
                    req: Sequence[OpReqType], outputs: Sequence[Any]) -> None:
    """The gradients of the operator's ``count`` inputs but its ``aux_inputs`` (which
    take none), in order, into the backward operator's ``outputs``."""
    taking = [j for j in range(count) if j not in aux_inputs]
    for position, j in enumerate(taking):
        write(xp, outputs[position], req[position], run.gradient(j))


def device_of(ctx: Any) -> Any:
    """The device a kernel runs on."""
    return ctx.ctx if ctx.ctx is not None else cpu()


def control_flow_ops(name: str, subgraph_count: int, params: type[Params], description: str,
                     layout: Callable[[Any], Any], infer_shape: Callable, infer_type: Callable,
                     forward: Callable, backward: Callable, domain: Domain) -> list[Op]:
    """A control-flow operator and its backward: ``subgraph_count`` subgraphs counted in
    ``num_args`` before the node's inputs, ``num_outputs`` visible outputs and the hidden
    token of the executors kept for the backward pass, the aux inputs ``layout`` names
    mutated in place."""
    op = (
        OpBuilder(name)
        .describe(description)
        .set_params(params)
        .set_num_inputs(lambda a: a.num_args - subgraph_count)
        .set_num_outputs(lambda a: a.num_outputs + 1)
        .set_num_visible_outputs(lambda a: a.num_outputs)
        .set_input_names(lambda a: [f"data{j}" for j in range(a.num_args - subgraph_count)])
        .set_output_names(lambda a: [f"output{i}" for i in range(a.num_outputs)] + ["token"])
        .set_mutate_inputs(lambda a: layout(a).aux_inputs)
        .set_key_var_num_args("num_args")
        .set_infer_shape(infer_shape)
        .set_infer_type(infer_type)
        .set_compute(forward, device=XP)
        .set_gradient(Gradient(f"_backward{name}", ("out_grad", "in_data", "out_data")))
        .set_domain(domain)
        .build()
    )
    return [op, OpBuilder.backward_for(op).set_compute(backward, device=XP).build()]
