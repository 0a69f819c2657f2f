"""The backward pass: the registered gradient rules run over the recorded graph.

Which backward operators run, what each reads and where its results go is the
gradient builder's plan (:func:`dagnet.operator.plan_backward`, the same one
the executor's backward graph comes from).  Each node's backward operator
(``Gradient.backward``) is pushed through the imperative path like any call,
so it runs asynchronously on the engine and device of the forward call.  It
receives, in order, what ``Gradient.uses`` names (head gradients of the
visible outputs, the inputs, the outputs) with the forward call's parsed
parameters, and writes one gradient per input that is not an auxiliary
state.  Gradients reaching one entry along several paths are summed; only
nodes on a path to a wanted variable run.

With ``create_graph=True`` the backward pass is itself recorded: each backward
operator call joins the graph, reading the forward arrays through their graph
entries, and backward operators carry gradient rules of their own
(:class:`~dagnet.operator.ComposedGradient`: the gradient written as operator
calls), so a gradient can be differentiated again, to any order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import config
from ..engine import bulk_state, set_bulk_size
from ..ndarray import NDArray, PreparedCall, assign, invoke, new_array, sparse
from ..operator import ComposedGradient, NodeFacts, OpReqType, get_op, plan_backward
from ..runtime import bulk_or_push, pushing_engine, stream_scope
from ._composed import OPS, entry_view
from ._errors import (
    AutogradArgumentError,
    AutogradError,
    HigherOrderGradientError,
    NotDifferentiableError,
)
from ._function import FunctionCall, Unrecorded, unrecorded_gradient
from ._graph import Node, Variable, entry_of, record_call
from ._mode import is_recording, set_recording, set_training

__all__ = ["backward", "grad"]

_WRITE, _ADD, _NULL = OpReqType.WRITE, OpReqType.ADD, OpReqType.NULL

_NOT_IN_GRAPH = (
    "cannot differentiate head {index} (shape {shape}): it is not in a computational graph. "
    "Compute it inside autograd.record() from arrays that called attach_grad() (or "
    "autograd.mark_variables); if you differentiate the same graph twice, pass "
    "retain_graph=True to the first backward")


def backward(heads: NDArray | Sequence[NDArray], head_grads: Any = None,
             retain_graph: bool = False, train_mode: bool = True) -> None:
    """Compute the gradients of ``heads`` with respect to every variable of their graph and
    write them into the variables' ``.grad`` according to each ``grad_req``.

    ``head_grads`` (one per head, None entries allowed) default to ones; loss operators
    (``SoftmaxOutput``, ``MakeLoss`` ...) supply their own.  The graph is freed unless
    ``retain_graph``; ``train_mode`` is the mode the backward operators run in.
    """
    heads, entries, seeds = _prepare_heads(heads, head_grads)
    order = _topological(entries)
    direct: dict[Variable, bool] = {}
    totals = _run(order, entries, seeds, lambda var: var.req != "null", train_mode, direct)
    if not totals:
        raise AutogradError("there are no variables in the computational graph that require "
                            "gradients: call attach_grad() (with grad_req 'write' or 'add') on "
                            "the arrays you differentiate with respect to, before record()")
    for var, parts in totals.items():
        var.fresh = True
        if direct.get(var):
            continue  # its one gradient was written (or added) straight into var.grad
        if parts:
            _write_sum(var.grad, parts, add=var.req == "add")
        elif var.req == "write":
            if var.grad.stype == "default":
                assign(var.grad, 0)
            else:  # a sparse buffer: no stored values
                sparse.zeros(var.grad.stype, var.grad.shape, var.grad.context,
                             var.grad.dtype).copyto(var.grad)
    _drop_null_buffers(order)
    if not retain_graph:
        _free(order)


def _drop_null_buffers(order: Sequence[Node]) -> None:
    """A variable with ``grad_req='null'`` that a backward pass reached has no gradient
    buffer afterwards (``.grad`` is None), as in MXNet."""
    for node in order:
        for parent in node.parents:
            if parent is not None and parent[0].__class__ is Variable and \
                    parent[0].req == "null":
                parent[0].grad = None


def grad(heads: NDArray | Sequence[NDArray], variables: NDArray | Sequence[NDArray],
         head_grads: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
         train_mode: bool = True) -> list[NDArray]:
    """The gradients of ``heads`` with respect to ``variables`` as new arrays (``.grad``
    buffers are left alone).  ``retain_graph`` defaults to ``create_graph``.

    ``create_graph=True`` records the backward pass (whether or not ``record()`` is on), so
    the gradients returned are in a graph and can be differentiated again (``grad`` of
    them, or their ``backward()``): higher-order gradients.
    """
    single = isinstance(variables, NDArray)
    variables = [variables] if single else list(variables)
    wanted = []
    for index, array in enumerate(variables):
        entry = entry_of(array) if isinstance(array, NDArray) else None
        if entry is None or not isinstance(entry[0], Variable):
            raise AutogradArgumentError(
                f"cannot differentiate with respect to variable {index}: it does not require "
                f"a gradient; call attach_grad() on it (or autograd.mark_variables) before "
                f"recording")
        wanted.append(entry[0])
    heads, entries, seeds = _prepare_heads(heads, head_grads)
    order = _topological(entries)
    chosen = set(wanted)
    totals = _run(order, entries, seeds, chosen.__contains__, train_mode, record=create_graph)
    results = []
    recording = set_recording(create_graph)  # the sums join the graph too
    try:
        for array, var in zip(variables, wanted):
            results.append(_total(totals.get(var), array._shape, array._dtype, array._chunk.dev))
    finally:
        set_recording(recording)
    if not (create_graph if retain_graph is None else retain_graph):
        _free(order)
    return results


# -- heads ------------------------------------------------------------------------------
def _prepare_heads(heads: Any, head_grads: Any) -> tuple[list, list, list]:
    """The heads, their graph entries and their head gradients (None: ones, when used)."""
    heads = [heads] if isinstance(heads, NDArray) else list(heads)
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif isinstance(head_grads, NDArray):
        head_grads = [head_grads]
    else:
        head_grads = list(head_grads)
    if len(head_grads) != len(heads):
        raise AutogradArgumentError(
            f"got {len(heads)} head(s) but {len(head_grads)} head gradient(s); give one head "
            f"gradient per head (None for ones) or none at all")
    entries, seeds = [], []
    for index, (head, given) in enumerate(zip(heads, head_grads)):
        if not isinstance(head, NDArray):
            raise TypeError(f"head {index} must be an NDArray, got {type(head).__name__}")
        entry = entry_of(head)
        if entry is None:
            raise AutogradError(_NOT_IN_GRAPH.format(index=index, shape=head._shape))
        entries.append(entry)
        seeds.append(_head_gradient(index, head, given))
    return heads, entries, seeds


def _head_gradient(index: int, head: NDArray, given: Any) -> NDArray | None:
    if given is None:
        return None
    if not isinstance(given, NDArray):
        raise TypeError(f"head gradient {index} must be an NDArray or None, got "
                        f"{type(given).__name__}")
    if given.stype != "default":  # the graph runs densely (sparse storage falls back)
        given = given.tostype("default")
    if given._shape != head._shape:
        raise AutogradArgumentError(
            f"head gradient {index} has shape {given._shape} but head {index} has shape "
            f"{head._shape}; pass a head gradient of the head's shape")
    if given._chunk.dev is not head._chunk.dev:
        given = given.as_in_context(head.context)
    if given._dtype != head._dtype:
        given = given.astype(head._dtype)
    return given


def _ones(shape: tuple, dtype: Any, dev: Any) -> NDArray:
    array = new_array(shape, dtype, dev)
    assign(array, 1)
    return array


# -- the graph --------------------------------------------------------------------------
def _topological(entries: Sequence[tuple]) -> list[Node]:
    """The live nodes the heads depend on, each after every node it reads (post-order)."""
    order: list[Node] = []
    seen: set[Node] = set()
    for start, _ in entries:
        if start.__class__ is Variable or start in seen:
            continue
        seen.add(start)
        stack = [(start, iter(start.parents))]
        while stack:
            node, parents = stack[-1]
            for parent in parents:
                if parent is None or parent[0].__class__ is Variable or parent[0] in seen:
                    continue
                child = parent[0]
                if not child.live:
                    raise AutogradError(
                        f"part of the graph (operator {child.call.name!r}) was freed by an "
                        f"earlier backward; pass retain_graph=True to backward when the same "
                        f"graph is differentiated more than once")
                seen.add(child)
                stack.append((child, iter(child.parents)))
                break
            else:
                stack.pop()
                order.append(node)
    return order


def _free(order: Sequence[Node]) -> None:
    for node in order:
        node.free()


# -- running the gradient rules -------------------------------------------------------
class _RecordedGraph:
    """How the gradient builder reads a recorded graph (:class:`dagnet.operator.GraphView`)."""

    @staticmethod
    def is_leaf(node: Any) -> bool:
        return node.__class__ is Variable

    @staticmethod
    def describe(node: Node) -> NodeFacts:
        call = node.call
        return NodeFacts(call.op.gradient, node.parents, call.mutated, call.n_visible,
                         len(node.out_meta))


def _run(order: list[Node], entries: list[tuple], seeds: list, wanted: Callable[[Any], bool],
         train_mode: bool, direct: dict[Variable, bool] | None = None, record: bool = False
         ) -> dict[Variable, list[NDArray]]:
    """Push the backward operators of the gradient builder's plan; returns the gradient
    parts per reached variable.  ``record``: record the backward calls (``create_graph``).

    With ``direct`` (for :func:`backward`), a variable that gets exactly one gradient from
    one backward operator has it written (or, for ``grad_req='add'``, added) by that
    operator straight into ``.grad``, saving a buffer and a copy; ``direct[var]`` is set
    True once that happened."""
    plan = plan_backward(_RecordedGraph, order, entries, wanted, composed=True)
    if plan.refused:
        node, reason = plan.refused[0]
        if node.call.__class__ is Unrecorded:
            raise HigherOrderGradientError(f"cannot differentiate the gradient computed by "
                                           f"{node.call.name!r} again: {reason}")
        if node.call.op.is_backward or node.call.name.startswith("_backward_"):
            raise HigherOrderGradientError(
                f"cannot differentiate the gradient computed by {node.call.name!r} again: "
                f"{reason}. Higher-order gradients are available for operators whose backward "
                f"operator declares a gradient rule of its own (a ComposedGradient); compute "
                f"this gradient with create_graph=False, or differentiate it numerically "
                f"(dagnet.test_utils.check_numeric_gradient)")
        raise NotDifferentiableError(
            f"cannot differentiate through operator {node.call.name!r}: it is not "
            f"differentiable: {reason}. Compute it outside record() (or under "
            f"autograd.pause()), or detach() its inputs, if no gradient should flow through it")
    reached = _reached(plan, entries, wanted)
    if direct is not None:
        heads = {obj for obj, _ in entries}
        direct.update((var, False) for var in reached
                      if plan.parts.get((var, 0)) == 1 and var not in heads
                      and var.req in ("write", "add") and var.grad.stype == "default")
    grads: dict[tuple, list[NDArray]] = {}
    for k in plan.seeded:
        obj, index = entries[k]
        if obj.__class__ is Variable:
            shape, dtype, dev = obj.grad._shape, obj.grad._dtype, obj.grad._chunk.dev
        else:
            (shape, dtype), dev = obj.out_meta[index], obj.dev
        seed = seeds[k] if seeds[k] is not None else _ones(shape, dtype, dev)
        if record and entry_of(seed) is None:
            # a recorded backward call may read nothing but head gradients (the gradient of
            # a linear op): they enter the graph as leaves that take no gradient, so that
            # the call is recorded, as MXNet does with create_graph
            seed = entry_view(seed, (Variable(None, "null"), 0))
        grads.setdefault(entries[k], []).append(seed)
    recording = set_recording(record)
    training = set_training(train_mode)
    # the backward operators go to the engine in bundles, as MXNet bulks its backward pass
    bulk = set_bulk_size(max(int(config.get("exec_bulk_size")), bulk_state.size))
    try:
        for step in plan.steps:
            _backward_step(step, grads, direct)
    finally:
        set_bulk_size(bulk)  # pushes what is bundled, unless the caller bulks too
        set_recording(recording)
        set_training(training)
    return {var: grads.get((var, 0), []) for var in reached}


def _reached(plan: Any, entries: list[tuple], wanted: Callable[[Any], bool]) -> dict:
    """The wanted variables some gradient reaches (zero gradients included), in order."""
    reached: dict[Variable, None] = {}
    for k in plan.seeded:
        if entries[k][0].__class__ is Variable:
            reached[entries[k][0]] = None
    for step in plan.steps:
        for _, entry in step.targets:
            if entry is not None and entry[0].__class__ is Variable:
                reached[entry[0]] = None
    for node in plan.zero:
        for parent in node.parents:
            if parent is not None and parent[0].__class__ is Variable and wanted(parent[0]):
                reached[parent[0]] = None
    return reached


def _backward_step(step: Any, grads: dict, direct: dict[Variable, bool] | None) -> None:
    """Push one node's backward; its results join the parts of the entries they feed."""
    node = step.node
    call, dev = node.call, node.dev
    head_grads = []
    if "out_grad" in step.rule.uses:
        for k in range(call.n_visible):
            shape, dtype = node.out_meta[k]
            head_grads.append(_total(grads.pop((node, k), None), shape, dtype, dev))
    if call.__class__ is FunctionCall:  # Python code: what it pushes follows the bundle
        if is_recording():  # create_graph: a result outside every graph cannot be differentiated
            results = call.function.gradients(node, head_grads)
            results = [r if entry_of(r) is not None else unrecorded_gradient(node, r)
                       for r in results]
        else:
            results = _function_into(step, head_grads, direct)
        _function_step(step, results, grads, direct)
        return
    recording = is_recording()
    in_data, out_data = node.inputs, node.outputs
    if recording:  # the backward call joins the graph: its inputs carry their entries
        in_data, out_data = _entry_views(node)
    if isinstance(step.rule, ComposedGradient):
        _composed_step(step, head_grads, in_data, out_data, grads, direct)
        return
    sources = {"out_grad": head_grads, "in_data": in_data, "out_data": out_data}
    inputs = [sources[use][index] for use, index in step.reads]
    # where each gradient goes: a variable whose only gradient this is (written straight
    # into its .grad), the entry whose parts it joins, or nowhere (not needed)
    outs, reqs, routes = [], [], []
    read = {id(array._chunk) for array in inputs} if direct else None
    for position, entry in step.targets:
        shape, dtype = node.in_meta[position]
        grad = _direct_target(entry, node.in_meta[position], dev, direct, read)
        if grad is not None:
            var = entry[0]
            outs.append(grad)
            reqs.append(_ADD if var.req == "add" else _WRITE)
            routes.append(var)
            continue
        outs.append(new_array(shape, dtype, dev))
        reqs.append(_NULL if entry is None else _WRITE)
        routes.append(entry)
    backward_call = _gradient_call(call)
    if recording:
        record_call(backward_call, inputs, outs, None)
    backward_call.run_into(inputs, outs, reqs)
    for out, route in zip(outs, routes):
        if route.__class__ is Variable:
            direct[route] = True
        elif route is not None:
            grads.setdefault(route, []).append(out)


def _direct_target(entry: tuple | None, meta: tuple, dev: Any,
                   direct: dict[Variable, bool] | None, read: set[int] | None
                   ) -> NDArray | None:
    """The ``.grad`` of the variable ``entry`` names when its only gradient may be written
    there straight away: the array matches the gradient (``meta``: shape and dtype) and
    device and is not among what the backward call reads (``read``: their chunks' ids)."""
    if not direct or entry is None or entry[0] not in direct:
        return None
    grad = entry[0].grad
    shape, dtype = meta
    if id(grad._chunk) in read or grad._shape != shape or grad._dtype != dtype \
            or grad._chunk.dev is not dev:
        return None
    return grad


def _function_into(step: Any, head_grads: list[NDArray],
                   direct: dict[Variable, bool] | None) -> list[NDArray | None]:
    """An ``autograd.Function`` node's gradients, the function offered to write each one
    that is its variable's only gradient straight into that ``.grad`` (see
    :meth:`Function.gradients_into`); a gradient written so is None in the result and
    marked done in ``direct``."""
    node = step.node
    targets: list[tuple[NDArray, str] | None] = [None] * len(node.in_meta)
    needed = [False] * len(node.in_meta)
    read = {id(array._chunk) for array in head_grads} if direct else None
    for position, entry in step.targets:
        needed[position] = entry is not None
        grad = _direct_target(entry, node.in_meta[position], node.dev, direct, read)
        if grad is not None:
            targets[position] = (grad, entry[0].req)
    results = node.call.function.gradients_into(node, head_grads, targets, needed)
    for position, entry in step.targets:
        if targets[position] is not None and results[position] is None:
            direct[entry[0]] = True
    return results


def _entry_views(node: Node) -> tuple[list | None, list | None]:
    """The node's kept inputs and outputs as views carrying their graph entries."""
    in_data = out_data = None
    if node.inputs is not None:
        in_data = [entry_view(a, e) for a, e in zip(node.inputs, node.parents)]
    if node.outputs is not None:
        out_data = [entry_view(a, (node, k)) for k, a in enumerate(node.outputs)]
    return in_data, out_data


def _composed_step(step: Any, head_grads: list[NDArray], in_data: list | None,
                   out_data: list | None, grads: dict, direct: dict[Variable, bool] | None
                   ) -> None:
    """A node whose rule is a :class:`ComposedGradient`: its operator calls run (recorded
    when the pass records); each result joins the parts of the entry it feeds."""
    node = step.node
    needed = [entry is not None for _, entry in step.targets]
    try:
        results = list(step.rule.compose(OPS, node.call.attrs, head_grads, in_data, out_data,
                                         needed))
    except NotImplementedError as error:  # the rule has no gradient for these parameters
        raise HigherOrderGradientError(
            f"cannot differentiate the gradient computed by {node.call.name!r} again: {error}"
        ) from None
    if len(results) != len(step.targets):
        raise AutogradError(
            f"the composed gradient rule of operator {node.call.name!r} returned "
            f"{len(results)} gradient(s); it must return one per input that takes a gradient "
            f"({len(step.targets)})")
    by_position = [None] * len(node.in_meta)
    for (position, entry), result in zip(step.targets, results):
        if result is None or entry is None:
            continue  # zero, or needed by nobody
        shape = node.in_meta[position][0]
        if not isinstance(result, NDArray) or result._shape != shape:
            got = result._shape if isinstance(result, NDArray) else type(result).__name__
            raise AutogradError(
                f"the composed gradient rule of operator {node.call.name!r} returned {got} "
                f"for input {position}; it must return an NDArray of that input's shape {shape}")
        by_position[position] = result
    _function_step(step, by_position, grads, direct)


def _function_step(step: Any, results: list[NDArray | None], grads: dict,
                   direct: dict[Variable, bool] | None) -> None:
    """An ``autograd.Function`` node: ``results`` (its ``backward``, one per input position;
    None: no gradient) go where the plan says."""
    for position, entry in step.targets:
        if entry is None or results[position] is None:
            continue
        var = entry[0]
        if direct and var in direct:  # its only gradient: into .grad now
            _write_sum(var.grad, [results[position]], add=var.req == "add")
            direct[var] = True
        else:
            grads.setdefault(entry, []).append(results[position])


def _gradient_call(call: Any) -> Any:
    """The backward operator prepared with the forward call's parameters (kept on the call)."""
    backward_call = call.gradient_call
    if backward_call is None:
        backward_call = call.gradient_call = PreparedCall(
            get_op(call.op.gradient.backward), call.attrs)
    return backward_call


def _total(parts: list[NDArray] | None, shape: tuple, dtype: Any, dev: Any) -> NDArray:
    """The sum of ``parts`` (zeros when none reached this entry); an operator call, which
    joins the graph, while the backward pass records."""
    if not parts:
        array = new_array(shape, dtype, dev)
        assign(array, 0)
        if is_recording():  # a leaf of the recorded backward pass, as a head gradient is
            array = entry_view(array, (Variable(None, "null"), 0))
        return array
    if len(parts) == 1:
        return parts[0]
    if is_recording():
        return invoke("add_n", parts)
    array = new_array(shape, dtype, dev)
    _write_sum(array, parts, add=False)
    return array


def _write_sum(target: NDArray, parts: Sequence[NDArray], add: bool) -> None:
    """Push ``target = sum(parts)`` (``add``: ``target += sum(parts)``), bundled with the
    operator calls around it when the thread bulks.  A sparse ``target`` receives the
    sum cast to its storage type."""
    if target.stype != "default":
        total = parts[0] if len(parts) == 1 else invoke("add_n", list(parts))
        sparse.write_gradient(target, sparse.to_dense_array(total), add)
        return
    dev = target._chunk.dev
    views = [p._xp() for p in parts]
    out = target._xp()

    def write(run_ctx: Any) -> None:
        with stream_scope(run_ctx):
            total = views[0]
            for view in views[1:]:
                total = total + view
            if add:
                out[...] += total
            else:
                out[...] = total

    bulk_or_push(pushing_engine(), write, dev.ctx, [p._chunk.var for p in parts],
                 [target._chunk.var], "_grad_add", [*parts, target])
