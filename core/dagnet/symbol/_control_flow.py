"""MXNet's symbolic control flow (``mx.sym.contrib.foreach``, ``while_loop``, ``cond``): the
user's Python function is traced once on placeholder symbols into a *subgraph*, which one
operator node (``_foreach``, ``_while_loop``, ``_cond``) runs as often as its inputs say.

Tracing marks every node it makes with the attribute ``__subgraph_name__``.  What the
traced graph reaches that was made outside the function -- a variable (a parameter) or an
operator's output (a value of the enclosing graph) -- is *cut*: it becomes a variable of the
subgraph and an input of the node, so the subgraph holds the step's computation only.  The
subgraphs travel in the node's ``subgraphs`` parameter, a JSON list of graphs (where MXNet's
symbol files keep them), and ``num_args`` counts them with the node's inputs, as MXNet's.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .. import attribute as _attribute
from .._errors import DagnetError
from ._node import Entry, Node
from ._symbol import Symbol, var

__all__ = ["ControlFlowError", "cond", "flatten", "foreach", "regroup", "while_loop"]

_MARK = "__subgraph_name__"


class ControlFlowError(DagnetError, ValueError):
    """A control-flow function got something it cannot loop over: a body that returns the
    wrong structure, non-symbol data, an input the body never uses."""


# -- nested lists of symbols ----------------------------------------------------------------
def flatten(items: Any, what: str) -> tuple[list[Symbol], Any]:
    """The symbols in ``items`` (a Symbol or nested lists of them) in order, and the format
    :func:`regroup` rebuilds the nesting from (a symbol is ``0``, a list a list of formats)."""
    if isinstance(items, Symbol):
        return [items], 0
    if not isinstance(items, (list, tuple)):
        raise ControlFlowError(f"{what} must be a Symbol or (nested) lists of Symbols, got "
                               f"{type(items).__name__}")
    flat: list[Symbol] = []
    formats = []
    for item in items:
        symbols, fmt = flatten(item, what)
        flat.extend(symbols)
        formats.append(fmt)
    return flat, formats


def regroup(flat: Sequence[Any], fmt: Any) -> Any:
    """``flat`` nested again as :func:`flatten`'s ``fmt`` says."""
    result, rest = _regroup(list(flat), fmt)
    return result


def _regroup(flat: list[Any], fmt: Any) -> tuple[Any, list[Any]]:
    if fmt == 0:
        return flat[0], flat[1:]
    items = []
    for sub in fmt:
        item, flat = _regroup(flat, sub)
        items.append(item)
    return items, flat


# -- tracing a function into a subgraph -------------------------------------------------------
_counter = itertools.count()
_counter_lock = threading.Lock()


def _unique_name(kind: str) -> str:
    with _counter_lock:
        number = next(_counter)
    outer = _attribute.current().get(None).get(_MARK)
    return f"{outer}${kind}{number}" if outer else f"{kind}{number}"


class Traced:
    """A function traced into a subgraph: ``subgraph`` (a Symbol whose outputs are the
    function's flat outputs), ``inputs`` (the entries of the enclosing graph feeding each
    variable of ``subgraph.list_inputs()``, None for the placeholders), ``formats`` of the
    function's outputs."""

    def __init__(self, subgraph: Symbol, outer: list[Entry | None], names: list[str]):
        self.subgraph = subgraph
        self.outer = outer
        self.names = names

    def locations(self, placeholders: Sequence[str], what: str) -> list[int]:
        """Where each placeholder sits among the subgraph's inputs; every one must be used
        (``what`` names them in the error)."""
        unused = [i for i, name in enumerate(placeholders) if name not in self.names]
        if unused:
            raise ControlFlowError(f"{what} {unused} (counted flat) are never used by the "
                                   f"function; every one given must be used")
        return [self.names.index(name) for name in placeholders]

    def remaining(self, placeholders: set[str]) -> tuple[list[int], list[Symbol]]:
        """The subgraph inputs that are not placeholders: their locations, and the symbols
        of the enclosing graph that feed them."""
        locs, symbols = [], []
        for i, (name, entry) in enumerate(zip(self.names, self.outer)):
            if name in placeholders:
                continue
            locs.append(i)
            symbols.append(Symbol([entry]))
        return locs, symbols


def placeholders(name: str, role: str, count: int) -> tuple[list[str], list[Symbol]]:
    """``count`` new variables of subgraph ``name`` for one role (``data``, ``state``)."""
    names = [f"{name}_{role}{i}" for i in range(count)]
    with _attribute.AttrScope(**{_MARK: name}):
        return names, [var(n) for n in names]


def cut(name: str, outputs: Sequence[Symbol]) -> Traced:
    """The subgraph of ``outputs`` (traced under subgraph ``name``) with what was made
    outside cut off: variables stay (the enclosing graph feeds them by the same node), the
    outputs of outside operators become new variables.  An output that is a variable, or
    repeats another, gets an ``identity`` so every output is a node of its own (as MXNet)."""
    from ._frontend import function as _function

    clones: dict[int, Node] = {}
    cut_vars: dict[tuple[int, int], Node] = {}
    outer_of: dict[int, Entry] = {}  # variable node id -> entry of the enclosing graph

    def entry_of(entry: Entry) -> Entry:
        node, index = entry
        if node.op is None:  # placeholders, parameters, variables of the enclosing graph
            outer_of.setdefault(id(node), entry)
            return entry
        if node.attr.get(_MARK) != name:  # an outside operator's output: cut here
            key = (id(node), index)
            if key not in cut_vars:
                cut_vars[key] = Node(None, f"{name}_cut{len(cut_vars)}", attr={_MARK: name})
                outer_of[id(cut_vars[key])] = entry
            return (cut_vars[key], 0)
        return (clone(node), index)

    def clone(node: Node) -> Node:
        made = clones.get(id(node))
        if made is None:
            made = Node(node.op, node.name, node.params, node.attrs,
                        [entry_of(e) for e in node.inputs], node.attr)
            clones[id(node)] = made
        return made

    heads: list[Entry] = []
    for symbol in outputs:
        entry = entry_of(_one(symbol))
        if entry[0].op is None or entry in heads:
            with _attribute.AttrScope(**{_MARK: name}):
                entry = _one(_function("identity")(Symbol([entry])))
        heads.append(entry)
    subgraph = Symbol(heads)
    nodes = [n for n in subgraph._nodes() if n.op is None]
    return Traced(subgraph, [outer_of.get(id(n)) for n in nodes], [n.name for n in nodes])


def _one(symbol: Symbol) -> Entry:
    if len(symbol._outputs) != 1:
        raise ControlFlowError(f"a control-flow function returned a grouped symbol "
                               f"({', '.join(symbol.list_outputs())}); return a list of "
                               f"single-output symbols instead")
    return symbol._outputs[0]


def _subgraphs(*graphs: Traced) -> str:
    """The ``subgraphs`` parameter of a node running ``graphs``."""
    return json.dumps([json.loads(g.subgraph.tojson()) for g in graphs])


# -- foreach ----------------------------------------------------------------------------------
def foreach(body: Callable[[Any, Any], tuple[Any, Any]], data: Any, init_states: Any,
            name: str = "foreach") -> tuple[Any, Any]:
    """Run ``body`` over the slices of ``data`` along axis 0 (MXNet's symbolic
    ``foreach``): ``out, states = body(data_slice, states)`` for each slice, starting from
    ``init_states``; returns the outputs stacked along a new axis 0 and the last states.

    ``data`` and ``init_states`` are Symbols or nested lists of them, and ``body`` returns
    ``(outputs, states)`` with ``states`` shaped as ``init_states``.  ``body`` is traced
    once; the loop runs as one ``_foreach`` node, so the number of steps is the length of
    ``data`` when the graph runs."""
    from ._frontend import function as _function

    flat_data, data_fmt = flatten(data, "foreach: data")
    flat_states, state_fmt = flatten(init_states, "foreach: init_states")
    subgraph_name = _unique_name(name)
    data_names, data_vars = placeholders(subgraph_name, "data", len(flat_data))
    state_names, state_vars = placeholders(subgraph_name, "state", len(flat_states))
    with _attribute.AttrScope(**{_MARK: subgraph_name}):
        result = body(regroup(data_vars, data_fmt), regroup(state_vars, state_fmt))
    if not isinstance(result, (list, tuple)) or len(result) != 2:
        raise ControlFlowError("foreach: body must return (outputs, states)")
    outs, out_fmt = flatten(result[0], "foreach: the body's outputs")
    new_states, new_state_fmt = flatten(result[1], "foreach: the body's states")
    if new_state_fmt != state_fmt:
        raise ControlFlowError(f"foreach: the body returned states shaped {new_state_fmt}, "
                               f"but init_states are shaped {state_fmt}; return as many "
                               f"states, nested the same way")
    traced = cut(subgraph_name, outs + new_states)
    in_data_locs = traced.locations(data_names, "foreach: data")
    in_state_locs = traced.locations(state_names, "foreach: states")
    remain_locs, remain = traced.remaining(set(data_names) | set(state_names))
    inputs = flat_data + flat_states + remain
    node = _function("_foreach")(
        *inputs, subgraphs=_subgraphs(traced), num_args=len(inputs) + 1,
        num_outputs=len(outs) + len(new_states), num_out_data=len(outs),
        in_data_locs=tuple(in_data_locs), in_state_locs=tuple(in_state_locs),
        remain_locs=tuple(remain_locs))
    outputs = [node[i] for i in range(len(outs))]
    states = [node[len(outs) + i] for i in range(len(new_states))]
    return regroup(outputs, out_fmt), regroup(states, state_fmt)


def _union(graphs: Sequence[Traced], feeds: dict[str, Entry]
           ) -> tuple[list[Symbol], list[list[int]]]:
    """The node inputs several subgraphs share, each once, and where each subgraph's inputs
    sit among them; a placeholder named in ``feeds`` is fed by that entry."""
    inputs: list[Entry] = []
    locs: list[list[int]] = []
    for graph in graphs:
        graph_locs: list[int] = []
        for name, entry in zip(graph.names, graph.outer):
            entry = feeds.get(name, entry)
            # one node input feeds at most one variable of each subgraph
            position = next((i for i, e in enumerate(inputs)
                             if e[0] is entry[0] and e[1] == entry[1] and i not in graph_locs),
                            None)
            if position is None:
                position = len(inputs)
                inputs.append(entry)
            graph_locs.append(position)
        locs.append(graph_locs)
    return [Symbol([e]) for e in inputs], locs


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


# -- while_loop -------------------------------------------------------------------------------
def while_loop(cond: Callable[..., Symbol], func: Callable[..., tuple[Any, Any]],
               loop_vars: Any, max_iterations: int | None = None, name: str = "while_loop"
               ) -> tuple[Any, Any]:
    """MXNet's symbolic ``while_loop``: while ``cond(*loop_vars)`` (a one-element symbol)
    is true, and at most ``max_iterations`` times, ``outputs, loop_vars = func(*loop_vars)``.
    Returns each step output stacked along a new axis 0 with ``max_iterations`` rows (the
    rows after the last step are zeros) and the last loop variables.  One ``_while_loop``
    node runs it; the number of steps is decided when it runs."""
    from ._frontend import function as _function

    if max_iterations is None:
        raise ControlFlowError("while_loop: max_iterations should be specified")
    max_iterations = int(max_iterations)
    flat_vars, var_fmt = flatten(loop_vars, "while_loop: loop_vars")
    if not flat_vars:
        raise ControlFlowError("while_loop: loop_vars should contain at least one element")
    loop_name = _unique_name(name)
    var_names = [f"{loop_name}_var{i}" for i in range(len(flat_vars))]

    def traced(kind: str, function: Callable[[list[Symbol]], list[Symbol]]) -> Traced:
        graph_name = f"{loop_name}_{kind}"
        with _attribute.AttrScope(**{_MARK: graph_name}):
            placeholders_ = [var(n) for n in var_names]
            outputs = function(regroup(placeholders_, var_fmt))
        return cut(graph_name, outputs)

    def run_cond(graph_vars: Any) -> list[Symbol]:
        result = cond(*_as_list(graph_vars))
        if not isinstance(result, Symbol):
            raise ControlFlowError(f"while_loop: cond must return a Symbol, got "
                                   f"{type(result).__name__}")
        return [result]

    shapes: dict[str, Any] = {}

    def run_func(graph_vars: Any) -> list[Symbol]:
        step_output, new_vars = func(*_as_list(graph_vars))
        outs, shapes["out"] = flatten(_as_list(step_output), "while_loop: the step's outputs")
        new_flat, _ = flatten(_as_list(new_vars), "while_loop: the new loop_vars")
        if len(new_flat) != len(flat_vars):
            raise ControlFlowError(f"while_loop: func returned {len(new_flat)} loop_vars for "
                                   f"{len(flat_vars)}; the number of loop_vars should be "
                                   f"consistent during the loop")
        shapes["n_out"] = len(outs)
        return outs + new_flat

    cond_graph = traced("cond", run_cond)
    func_graph = traced("func", run_func)
    feeds = {n: _one(v) for n, v in zip(var_names, flat_vars)}
    inputs, (cond_locs, func_locs) = _union([cond_graph, func_graph], feeds)
    unused = [i + 1 for i, n in enumerate(var_names) if n not in func_graph.names]
    if unused:
        raise ControlFlowError(f"while_loop: loop_vars {unused} (counted from 1) are not used "
                               f"by func; every loop_var must take part in the computation")
    func_var_locs = [func_graph.names.index(n) for n in var_names]
    n_out = shapes["n_out"]
    node = _function("_while_loop")(
        *inputs, subgraphs=_subgraphs(cond_graph, func_graph), num_args=len(inputs) + 2,
        max_iterations=max_iterations,
        cond_input_locs=tuple(cond_locs), func_input_locs=tuple(func_locs),
        func_var_locs=tuple(func_var_locs), num_out_data=n_out,
        num_outputs=n_out + len(flat_vars))
    outputs = regroup([node[i] for i in range(n_out)], shapes["out"])
    final = regroup([node[n_out + i] for i in range(len(flat_vars))], var_fmt)
    return outputs, final


# -- cond -------------------------------------------------------------------------------------
def cond(pred: Symbol, then_func: Callable[[], Any], else_func: Callable[[], Any],
         name: str = "cond") -> Any:
    """MXNet's symbolic ``cond``: ``then_func()`` where ``pred`` (a one-element symbol) is
    true when the graph runs, else ``else_func()``; both return the same number of symbols
    with the same shapes.  One ``_cond`` node runs the branch the value picks."""
    from ._frontend import function as _function

    cond_name = _unique_name(name)
    formats: list[Any] = []

    def traced(kind: str, function: Callable[[], Any]) -> Traced:
        graph_name = f"{cond_name}_{kind}"
        with _attribute.AttrScope(**{_MARK: graph_name}):
            outputs, fmt = flatten(function(), f"cond: the {kind} outputs")
        formats.append(fmt)
        return cut(graph_name, outputs)

    pred_graph = traced("pred", lambda: pred)
    if len(pred_graph.subgraph.list_outputs()) != 1:
        raise ControlFlowError("cond: pred should always be a single output")
    then_graph = traced("then", then_func)
    else_graph = traced("else", else_func)
    count = len(then_graph.subgraph.list_outputs())
    if count != len(else_graph.subgraph.list_outputs()):
        raise ControlFlowError(f"cond: the then-branch gives {count} outputs and the else-branch "
                               f"{len(else_graph.subgraph.list_outputs())}; they must give as "
                               f"many")
    inputs, (pred_locs, then_locs, else_locs) = _union([pred_graph, then_graph, else_graph], {})
    node = _function("_cond")(
        *inputs, subgraphs=_subgraphs(pred_graph, then_graph, else_graph),
        num_args=len(inputs) + 3,
        cond_input_locs=tuple(pred_locs), then_input_locs=tuple(then_locs),
        else_input_locs=tuple(else_locs), num_outputs=count)
    return regroup([node[i] for i in range(count)], formats[1])
