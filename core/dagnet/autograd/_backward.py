"""The backward pass: the registered gradient rules run over the recorded graph.

Each node's backward operator (``Gradient.backward``) is pushed through the
imperative path like any call, so it runs asynchronously on the engine and
device of the forward call.  It receives, in order, what ``Gradient.uses``
names (head gradients of the visible outputs, the inputs, the outputs) with
the forward call's parsed parameters, and writes one gradient per input that
is not an auxiliary state.  Gradients reaching one entry along several paths
are summed; only nodes on a path to a wanted variable run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..engine import FnProperty
from ..ndarray import NDArray, PreparedCall, assign, new_array
from ..operator import Gradient, NoGradient, OpReqType, ZeroGradient, get_op
from ..runtime import current_engine, stream_scope
from ._errors import (
    AutogradArgumentError,
    AutogradError,
    HigherOrderGradientError,
    NotDifferentiableError,
)
from ._function import FunctionCall
from ._graph import Node, Variable, entry_of
from ._mode import set_recording, set_training

__all__ = ["backward", "grad"]

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
        if direct.get(var):
            continue  # its one gradient was written (or added) straight into var.grad
        if parts:
            _write_sum(var.grad, parts, add=var.req == "add")
        elif var.req == "write":
            assign(var.grad, 0)
    if not retain_graph:
        _free(order)


def grad(heads: NDArray | Sequence[NDArray], variables: NDArray | Sequence[NDArray],
         head_grads: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
         train_mode: bool = True) -> list[NDArray]:
    """The gradients of ``heads`` with respect to ``variables`` as new arrays (``.grad``
    buffers are left alone).  ``retain_graph`` defaults to ``create_graph``.

    ``create_graph=True`` (recording the backward pass for higher-order gradients) is not
    available: dagnet's backward operators declare no gradients of their own.
    """
    if create_graph:
        raise HigherOrderGradientError(
            "autograd.grad(create_graph=True): higher-order gradients are not available in "
            "dagnet (backward operators have no gradient rules of their own); call grad() "
            "with create_graph=False, or differentiate numerically "
            "(dagnet.test_utils.check_numeric_gradient)")
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
    totals = _run(order, entries, seeds, chosen.__contains__, train_mode)
    results = []
    for array, var in zip(variables, wanted):
        parts = totals.get(var)
        if not parts:
            result = new_array(array._shape, array._dtype, array._chunk.dev)
            assign(result, 0)
        elif len(parts) == 1:
            result = parts[0]
        else:
            result = new_array(array._shape, array._dtype, array._chunk.dev)
            _write_sum(result, parts, add=False)
        results.append(result)
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
def _run(order: list[Node], entries: list[tuple], seeds: list, wanted: Callable[[Any], bool],
         train_mode: bool, direct: dict[Variable, bool] | None = None
         ) -> dict[Variable, list[NDArray]]:
    """Push every needed backward operator; returns the gradient parts per reached variable.

    With ``direct`` (for :func:`backward`), a variable that gets exactly one gradient from
    one backward operator has it written (or, for ``grad_req='add'``, added) by that
    operator straight into ``.grad``, saving a buffer and a copy; ``direct[var]`` is set
    True once that happened."""
    needs = _needed(order, wanted)
    if direct is not None:
        direct.update(_single_contributions(order, needs, entries, wanted))
    grads: dict[tuple, list[NDArray]] = {}
    reached: dict[Variable, None] = {}
    for entry, seed in zip(entries, seeds):
        obj, index = entry
        if obj.__class__ is Variable:
            if wanted(obj):
                reached[obj] = None
                grads.setdefault(entry, []).append(
                    seed if seed is not None else _ones(obj.grad._shape, obj.grad._dtype,
                                                        obj.grad._chunk.dev))
        elif obj in needs and _uses_out_grad(obj):
            shape, dtype = obj.out_meta[index]
            grads.setdefault(entry, []).append(
                seed if seed is not None else _ones(shape, dtype, obj.dev))
    recording = set_recording(False)
    training = set_training(train_mode)
    try:
        for node in reversed(order):
            if node in needs:
                _backward_node(node, grads, needs, wanted, reached, direct)
    finally:
        set_recording(recording)
        set_training(training)
    return {var: grads.get((var, 0), []) for var in reached}


def _needed(order: list[Node], wanted: Callable[[Any], bool]) -> set[Node]:
    """The nodes on a path to a wanted variable (``order`` lists parents first)."""
    needs: set[Node] = set()
    for node in order:
        for parent in node.parents:
            if parent is None:
                continue
            obj = parent[0]
            if obj in needs or (obj.__class__ is Variable and wanted(obj)):
                needs.add(node)
                break
    return needs


def _uses_out_grad(node: Node) -> bool:
    rule = node.call.op.gradient
    return isinstance(rule, Gradient) and "out_grad" in rule.uses


def _single_contributions(order: list[Node], needs: set[Node], entries: list[tuple],
                          wanted: Callable[[Any], bool]) -> dict[Variable, bool]:
    """The wanted variables that exactly one input of one needed node reads (and no head
    is: a head's seed is a part of its own), mapped to False (not written yet)."""
    heads = {obj for obj, _ in entries if obj.__class__ is Variable}
    count: dict[Variable, int] = {}
    for node in order:
        if node not in needs:
            continue
        for i, parent in enumerate(node.parents):
            if parent is not None and parent[0].__class__ is Variable and \
                    i not in node.call.mutated and wanted(parent[0]):
                count[parent[0]] = count.get(parent[0], 0) + 1
    return {var: False for var, n in count.items()
            if n == 1 and var not in heads and var.req in ("write", "add")}


def _backward_node(node: Node, grads: dict, needs: set[Node], wanted: Callable[[Any], bool],
                   reached: dict, direct: dict[Variable, bool] | None = None) -> None:
    call = node.call
    rule = call.op.gradient
    parts = [grads.pop((node, i), None) for i in range(len(node.out_meta))]
    if isinstance(rule, ZeroGradient):
        for parent in node.parents:
            if parent is not None and parent[0].__class__ is Variable and wanted(parent[0]):
                reached[parent[0]] = None
        return
    if not isinstance(rule, Gradient):
        why = (f"it is not differentiable: {rule.reason}" if isinstance(rule, NoGradient)
               else "it declares no gradient rule")
        raise NotDifferentiableError(
            f"cannot differentiate through operator {call.name!r}: {why}. Compute it outside "
            f"record() (or under autograd.pause()), or detach() its inputs, if no gradient "
            f"should flow through it")
    sources = {"out_grad": (), "in_data": node.inputs, "out_data": node.outputs}
    if "out_grad" in rule.uses:
        sources["out_grad"] = [_total(parts[i], *node.out_meta[i], node.dev)
                               for i in range(call.n_visible)]
    if call.__class__ is FunctionCall:
        _function_gradients(node, sources["out_grad"], grads, needs, wanted, reached, direct)
        return
    inputs = [array for use in rule.uses for array in sources[use]]
    targets = [i for i in range(len(node.parents)) if i not in call.mutated]
    # where each gradient goes: a variable whose only gradient this is (written straight
    # into its .grad), the entry whose parts it joins, or nowhere (not needed)
    outs, reqs, routes = [], [], []
    read = {id(array._chunk) for array in inputs} if direct else ()
    for i in targets:
        shape, dtype = node.in_meta[i]
        parent = node.parents[i]
        var = parent[0] if parent is not None else None
        if direct and var in direct and id(var.grad._chunk) not in read \
                and var.grad._shape == shape and var.grad._dtype == dtype \
                and var.grad._chunk.dev is node.dev:
            outs.append(var.grad)
            reqs.append(OpReqType.ADD if var.req == "add" else OpReqType.WRITE)
            routes.append(var)
            continue
        outs.append(new_array(shape, dtype, node.dev))
        takes = parent is not None and (
            var in needs or (var.__class__ is Variable and wanted(var)))
        reqs.append(OpReqType.WRITE if takes else OpReqType.NULL)
        routes.append(parent if takes else None)
    _gradient_call(call).run_into(inputs, outs, reqs)
    for out, route in zip(outs, routes):
        if route.__class__ is Variable:
            direct[route] = True
            reached[route] = None
        elif route is not None:
            grads.setdefault(route, []).append(out)
            if route[0].__class__ is Variable:
                reached[route[0]] = None


def _function_gradients(node: Node, head_grads: list[NDArray], grads: dict, needs: set[Node],
                        wanted: Callable[[Any], bool], reached: dict,
                        direct: dict[Variable, bool] | None) -> None:
    """An ``autograd.Function`` node: its ``backward`` gives the inputs' gradients."""
    results = node.call.function.gradients(node, head_grads)
    for parent, result in zip(node.parents, results):
        if parent is None:
            continue
        var = parent[0]
        if var.__class__ is Variable:
            if not wanted(var):
                continue
            reached[var] = None
            if direct and var in direct:  # its only gradient: into .grad now
                _write_sum(var.grad, [result], add=var.req == "add")
                direct[var] = True
                continue
        elif var not in needs:
            continue
        grads.setdefault(parent, []).append(result)


def _gradient_call(call: Any) -> Any:
    """The backward operator prepared with the forward call's parameters (kept on the call)."""
    backward_call = call.gradient_call
    if backward_call is None:
        backward_call = call.gradient_call = PreparedCall(
            get_op(call.op.gradient.backward), call.attrs)
    return backward_call


def _total(parts: list[NDArray] | None, shape: tuple, dtype: Any, dev: Any) -> NDArray:
    """The sum of ``parts`` (zeros when none reached this entry)."""
    if not parts:
        array = new_array(shape, dtype, dev)
        assign(array, 0)
        return array
    if len(parts) == 1:
        return parts[0]
    array = new_array(shape, dtype, dev)
    _write_sum(array, parts, add=False)
    return array


def _write_sum(target: NDArray, parts: Sequence[NDArray], add: bool) -> None:
    """Push ``target = sum(parts)`` (``add``: ``target += sum(parts)``)."""
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

    current_engine().push_sync(write, dev.ctx, [p._chunk.var for p in parts],
                               [target._chunk.var], FnProperty.NORMAL, 0, "_grad_add")
