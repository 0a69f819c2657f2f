"""Graph-only nodes replaced once shapes are known (an operator with ``expand``, such as
``_numpy_function`` of ``mx.sym.np``): :func:`expand_deferred` runs when an executor binds.

The replacement keeps the graph's interface: the same arguments and auxiliary states in
the same order, and the same number of outputs; only the inner nodes change.
"""

from __future__ import annotations

from typing import Any

from .._errors import ShapeError
from ._node import Entry, Node

__all__ = ["expand_deferred", "has_deferred"]


def has_deferred(symbol: Any) -> bool:
    """Whether ``symbol`` holds a node to expand."""
    return any(n.op is not None and n.op.expand is not None for n in symbol._nodes())


def expand_deferred(symbol: Any, shapes: dict[str, Any], dtypes: dict[str, Any]) -> Any:
    """``symbol`` with every graph-only node replaced by the graph its operator gives for the
    shapes and dtypes its inputs have, given the arguments' ``shapes`` and ``dtypes`` (by
    name); the symbol itself when it has none."""
    while True:
        nodes = symbol._nodes()
        target = next((n for n in nodes if n.op is not None and n.op.expand is not None), None)
        if target is None:
            return symbol
        entry_shapes, _ = symbol._infer_shape_entries(**shapes)
        entry_dtypes, _ = symbol._infer_type_entries(**dtypes)
        in_shapes = [entry_shapes.get(e) for e in target.inputs]
        in_dtypes = [entry_dtypes.get(e) for e in target.inputs]
        if any(s is None for s in in_shapes) or any(d is None for d in in_dtypes):
            raise ShapeError(f"node {target.name!r} ({target.op.name}) needs the shapes and "
                             f"dtypes of its inputs, but they are not all known from the "
                             f"arguments given: shapes {in_shapes}, dtypes {in_dtypes}")
        graph = target.op.expand(target.attrs, in_shapes, in_dtypes)
        symbol = _replace(symbol, nodes, target, graph)


def _replace(symbol: Any, nodes: list[Node], target: Node, graph: Any) -> Any:
    """A copy of ``symbol`` whose ``target`` node is ``graph``, fed with its inputs."""
    copies: dict[int, Node] = {}
    outputs: list[Entry] = []

    def entry(old: Entry) -> Entry:
        node, index = old
        return outputs[index] if node is target else (copies[id(node)], index)

    for node in nodes:
        if node is target:
            feeds = [entry(e) for e in target.inputs]
            outputs = _inline(graph, feeds, target.name)
            continue
        copies[id(node)] = Node(node.op, node.name, node.params, node.attrs,
                                [entry(e) for e in node.inputs], node.attr)
    return type(symbol)([entry(e) for e in symbol._outputs])


def _inline(graph: Any, feeds: list[Entry], prefix: str) -> list[Entry]:
    """``graph``'s outputs with its variables ``arg<i>`` read from ``feeds[i]`` and its
    nodes renamed under ``prefix``."""
    copies: dict[int, Any] = {}
    for node in graph._nodes():
        if node.op is None:
            copies[id(node)] = feeds[int(node.name[3:])]
            continue
        inputs = [_fed(copies, e) for e in node.inputs]
        copies[id(node)] = Node(node.op, f"{prefix}_{node.name}", node.params, node.attrs,
                                inputs, node.attr)
    return [_fed(copies, e) for e in graph._outputs]


def _fed(copies: dict[int, Any], old: Entry) -> Entry:
    node, index = old
    done = copies[id(node)]
    return done if node.op is None else (done, index)
