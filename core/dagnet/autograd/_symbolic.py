"""``get_symbol``: the recorded computation behind an array, as a Symbol."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..operator import Op
from ..runtime import Variable
from ..symbol import Node, Symbol
from ._errors import AutogradArgumentError
from ._function import FunctionCall

__all__ = ["get_symbol"]


def get_symbol(x: NDArray) -> Symbol:
    """The recorded graph that computed ``x`` as a Symbol: one node per recorded
    operator call (with its parameters), one variable per leaf (``var0``, ``var1`` ...,
    in the order the graph reaches them) and per input that was not recorded
    (``input0`` ...).  ``x`` must be the result of a recorded computation.

    A call of an :class:`autograd.Function` is one node of an operator named as in
    MXNet (``_CustomFunction``; ``_CachedOp`` for a hybridized Gluon block): it shows
    the call's place in the graph, but a symbol holding one cannot be run, as the
    function is Python code outside every symbol."""
    if not isinstance(x, NDArray):
        raise AutogradArgumentError(f"get_symbol: expected an NDArray, got {type(x).__name__}")
    entry = x.__dict__.get("_ag")
    if entry is None:
        raise AutogradArgumentError(
            "get_symbol: the array was not computed while recording; compute it inside "
            "autograd.record() from arrays with attach_grad()")
    built: dict[int, Node] = {}
    counts = {"var": 0, "input": 0, "node": 0}

    def variable(kind: str) -> Node:
        node = Node(None, f"{kind}{counts[kind]}")
        counts[kind] += 1
        return node

    def visit(start: Any) -> Node:
        # iterative post-order: a deep graph must not exhaust Python's recursion
        stack = [(start, False)]
        while stack:
            current, expanded = stack.pop()
            if id(current) in built:
                continue
            if isinstance(current, Variable):
                built[id(current)] = variable("var")
                continue
            if not current.live:
                raise AutogradArgumentError(
                    "get_symbol: part of the graph was freed by a backward pass; record "
                    "again, or call backward with retain_graph=True")
            if not expanded:
                stack.append((current, True))
                stack.extend((parent[0], False) for parent in reversed(current.parents)
                             if parent is not None)
                continue
            inputs = [(built[id(parent[0])], parent[1]) if parent is not None
                      else (variable("input"), 0) for parent in current.parents]
            built[id(current)] = _call_node(current, inputs, counts)
        return built[id(start)]

    return Symbol([(visit(entry[0]), entry[1])])


def _call_node(recorded: Any, inputs: list[tuple[Node, int]], counts: dict[str, int]) -> Node:
    """The symbol node of one recorded call."""
    call = recorded.call
    index = counts["node"]
    counts["node"] += 1
    if isinstance(call, FunctionCall):
        op = _function_op(type(call.function).graph_op_name, len(inputs),
                          len(recorded.out_meta))
        attrs = op.parse_params({})
        return Node(op, f"{op.name.lower()}{index}", {}, attrs, inputs)
    return Node(call.op, f"{call.op.name.lower()}{index}", call.attrs.to_strings(),
                call.attrs, inputs)


def _function_op(name: str, num_inputs: int, num_outputs: int) -> Op:
    """The record standing for a Function call of this many inputs and outputs."""
    return Op(name=name, num_inputs=num_inputs, num_outputs=num_outputs,
              description=f"a recorded call of Python code ({name}); a graph node only, "
                          f"with no kernel")
