"""Common-subexpression elimination: the graph pass MXNet's executor runs at bind time
(``MXNET_ELIMINATE_COMMON_EXPR``, dagnet config key ``eliminate_common_expr``).

Two operator nodes with the same inputs (the same entries, in the same order), the
same operator and the same parameters and attributes compute the same values, so every
user of the later one can read the earlier one instead.  Merging may make two nodes
equal that were not (``(a+b)+c`` twice), so the pass repeats until nothing merges.
Nodes are never merged when their values might differ or they act on something: an
operator that writes an input (BatchNorm's moving statistics), one that asks for a
resource other than temporary space (a random generator: Dropout, the samplers), a
Python ``Custom`` operator, and variables.  When two outputs of the graph become one
entry, the later output reads a ``_copy`` of it (named ``<node>_<k>_copy``), so each
output keeps an array of its own.

The pass works on a copy of the operator nodes; variable nodes are shared with the
original symbol, so arguments, auxiliary states and their order stay those of the
symbol that was bound.
"""

from __future__ import annotations

from typing import Any

from ..operator import get_op
from ..resource import ResourceKind
from ..symbol import Node, Symbol

__all__ = ["eliminate_common_expr", "remap_entries"]

_STATEFUL_OPS = {"Custom"}


def _mergeable(node: Any) -> bool:
    op = node.op
    if op is None or op.name in _STATEFUL_OPS or op.mutated_inputs(node.attrs):
        return False
    return all(r.kind == ResourceKind.TEMP_SPACE for r in op.resource_requests(node.attrs))


def _signature(node: Any) -> tuple:
    attrs = tuple(sorted(node.all_attrs().items()))
    return (id(node.op), attrs)


def eliminate_common_expr(symbol: Symbol) -> tuple[Symbol, dict[tuple, tuple]]:
    """``symbol`` with common subexpressions merged, and where each entry of
    ``symbol``'s graph went: ``{(node, index): (new node, index)}`` (entries of merged
    nodes map to the entry that replaced them)."""
    clone: dict[int, Any] = {}  # id(original node) -> its node in the new graph
    originals: list[Any] = []
    for node in symbol._nodes():
        originals.append(node)
        if node.op is None:
            clone[id(node)] = node
            continue
        clone[id(node)] = Node(node.op, node.name, node.params, node.attrs,
                                     [(clone[id(n)], i) for n, i in node.inputs], node.attr)
    outputs = [(clone[id(n)], i) for n, i in symbol._outputs]
    replaced: dict[int, Any] = {}  # id(new node) -> the node it was merged into

    def final(node: Any) -> Any:
        while id(node) in replaced:
            node = replaced[id(node)]
        return node

    while True:
        groups: dict[tuple, list[Any]] = {}
        for node in Symbol(outputs)._nodes():
            if node.inputs:
                key = tuple((id(n), i) for n, i in node.inputs)
                groups.setdefault(key, []).append(node)
        merges: list[tuple[Any, Any]] = []
        for nodes in groups.values():
            taken: set[int] = set()
            for i, src in enumerate(nodes):
                if i in taken or not _mergeable(src):
                    continue
                for j in range(i + 1, len(nodes)):
                    if j not in taken and _signature(nodes[j]) == _signature(src):
                        taken.add(j)
                        merges.append((src, nodes[j]))
        if not merges:
            break
        for src, gone in merges:
            replaced[id(gone)] = final(src)
        for node in Symbol(outputs)._nodes():
            if node.op is not None:
                node.inputs = [(final(n), i) for n, i in node.inputs]
        outputs = [(final(n), i) for n, i in outputs]
    # an entry that is two outputs: the later ones read a copy of it
    copy_op = get_op("_copy")
    seen: dict[tuple, int] = {}
    for position, entry in enumerate(outputs):
        key = (id(entry[0]), entry[1])
        if key not in seen:
            seen[key] = 0
            continue
        name = f"{entry[0].name}_{seen[key]}_copy"
        seen[key] += 1
        outputs[position] = (Node(copy_op, name, {}, copy_op.parse_params({}), [entry]), 0)
    mapping = {}
    for node in originals:
        new = final(clone[id(node)])
        for index in range(node.num_outputs()):
            mapping[(node, index)] = (new, index)
    return Symbol(outputs), mapping


def remap_entries(values: dict, mapping: dict[tuple, tuple], optimized: Symbol) -> dict:
    """Per-entry values (shapes, dtypes) of the original graph as values of the
    optimized one's entries; an inserted ``_copy`` takes the value of what it copies."""
    result = {mapping[entry]: value for entry, value in values.items() if entry in mapping}
    for node in optimized._nodes():
        if (node, 0) not in result and node.op is not None and node.op.name == "_copy":
            source = node.inputs[0]
            if source in result:
                result[(node, 0)] = result[source]
    return result
