"""``get_symbol``: the recorded computation behind an array, as a Symbol."""

from __future__ import annotations

import json
from typing import Any

from ..ndarray import NDArray
from ..runtime import Variable
from ..symbol import Symbol, load_json
from ._errors import AutogradArgumentError

__all__ = ["get_symbol"]


def get_symbol(x: NDArray) -> Symbol:
    """The recorded graph that computed ``x`` as a Symbol: one node per recorded
    operator call (with its parameters), one variable per leaf (``var0``, ``var1`` ...,
    in the order the graph reaches them) and per input that was not recorded
    (``input0`` ...).  ``x`` must be the result of a recorded computation."""
    if not isinstance(x, NDArray):
        raise AutogradArgumentError(f"get_symbol: expected an NDArray, got {type(x).__name__}")
    entry = x.__dict__.get("_ag")
    if entry is None:
        raise AutogradArgumentError(
            "get_symbol: the array was not computed while recording; compute it inside "
            "autograd.record() from arrays with attach_grad()")
    nodes: list[dict[str, Any]] = []
    index_of: dict[int, int] = {}
    counts = {"var": 0, "input": 0}

    def variable(kind: str) -> int:
        nodes.append({"op": "null", "name": f"{kind}{counts[kind]}", "inputs": []})
        counts[kind] += 1
        return len(nodes) - 1

    def visit(node: Any) -> int:
        # iterative post-order: a deep graph must not exhaust Python's recursion
        stack = [(node, False)]
        while stack:
            current, expanded = stack.pop()
            if id(current) in index_of:
                continue
            if isinstance(current, Variable):
                index_of[id(current)] = variable("var")
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
            inputs = [[index_of[id(parent[0])], parent[1], 0] if parent is not None
                      else [variable("input"), 0, 0] for parent in current.parents]
            call = current.call
            nodes.append({"op": call.op.name, "name": f"{call.op.name.lower()}{len(nodes)}",
                          "attrs": call.attrs.to_strings(), "inputs": inputs})
            index_of[id(current)] = len(nodes) - 1
        return index_of[id(node)]

    head = visit(entry[0])
    graph = {"nodes": nodes,
             "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
             "heads": [[head, entry[1], 0]],
             "attrs": {"mxnet_version": ["int", 10901]}}
    return load_json(json.dumps(graph))
