"""The symbolic graph's data structure: a :class:`Node` per operator call or
variable, and an *entry* ``(node, index)`` per output.

A symbol is a list of entries.  Graph walks visit nodes in nnvm's order
(depth-first, inputs left to right, each node after its inputs), which fixes
the order of ``list_arguments`` and of the nodes in symbol JSON.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..operator import Op, Params

__all__ = ["Node", "Entry", "topo_order", "copy_graph", "is_hidden_attr"]


class Node:
    """One graph node: an operator with parsed parameters and input entries, or a
    variable (``op is None``).

    ``params`` holds the parameters as the strings symbol JSON stores (only
    the ones given); ``attrs`` the parsed parameter set; ``attr`` the user
    attributes (``__shape__``, ``__lr_mult__``, ``__ctx_group__``, ...).
    """

    __slots__ = ("op", "name", "params", "attrs", "inputs", "attr", "__weakref__")

    def __init__(self, op: Op | None, name: str, params: dict[str, str] | None = None,
                 attrs: Params | None = None, inputs: Sequence[Entry] = (),
                 attr: dict[str, str] | None = None):
        self.op = op
        self.name = name
        self.params = dict(params or {})
        self.attrs = attrs
        self.inputs: list[Entry] = list(inputs)
        self.attr = dict(attr or {})

    @property
    def is_variable(self) -> bool:
        return self.op is None

    def num_outputs(self) -> int:
        """Every output, hidden ones included (1 for a variable)."""
        return 1 if self.op is None else self.op.n_outputs(self.attrs)

    def num_visible_outputs(self) -> int:
        return 1 if self.op is None else self.op.n_visible_outputs(self.attrs)

    def output_names(self) -> list[str]:
        """MXNet's output names: ``<node>_<output>``, or the variable's own name."""
        if self.op is None:
            return [self.name]
        return [f"{self.name}_{out}" for out in self.op.list_outputs(self.attrs)]

    def input_names(self) -> list[str]:
        return [] if self.op is None else self.op.list_inputs(self.attrs)

    def aux_inputs(self) -> set[int]:
        """Indices of the inputs the operator mutates (auxiliary states)."""
        return set() if self.op is None else set(self.op.mutated_inputs(self.attrs))

    def all_attrs(self) -> dict[str, str]:
        """Parameters and attributes together, as symbol JSON stores them."""
        return {**self.params, **self.attr}

    def __repr__(self) -> str:
        kind = "variable" if self.op is None else self.op.name
        return f"<Node {self.name!r} {kind}>"


Entry = tuple  # (Node, output index)


def topo_order(entries: Iterable[Entry]) -> list[Node]:
    """Every node the entries depend on, each after its inputs (nnvm's DFS post-order)."""
    order: list[Node] = []
    seen: set[int] = set()
    for head, _ in entries:
        if id(head) in seen:
            continue
        stack: list[tuple[Node, int]] = [(head, 0)]
        seen.add(id(head))
        while stack:
            node, next_input = stack[-1]
            if next_input < len(node.inputs):
                stack[-1] = (node, next_input + 1)
                child = node.inputs[next_input][0]
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                stack.pop()
                order.append(node)
    return order


def is_hidden_attr(key: str) -> bool:
    """Whether ``key`` is a ``__dunder__`` attribute rather than an operator parameter."""
    return key.startswith("__") and key.endswith("__") and len(key) > 4


def copy_graph(entries: Sequence[Entry], replace: dict[int, Entry] | None = None) -> list[Entry]:
    """A deep copy of the graph under ``entries``; ``replace`` maps a variable node's id
    to the entry that takes its place (composition)."""
    replace = replace or {}
    mapping: dict[int, Any] = {}
    for node in topo_order(entries):
        if node.op is None and id(node) in replace:
            mapping[id(node)] = replace[id(node)]
            continue
        clone = Node(node.op, node.name, node.params, node.attrs,
                     [_mapped(mapping, e) for e in node.inputs], node.attr)
        mapping[id(node)] = (clone, None)
    return [_mapped(mapping, e) for e in entries]


def _mapped(mapping: dict[int, Any], entry: Entry) -> Entry:
    node, index = entry
    target, target_index = mapping[id(node)]
    # a replaced variable maps to a whole entry; a cloned node keeps the output index
    return (target, index if target_index is None else target_index)
