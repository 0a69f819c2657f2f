"""A bound graph's symbol JSON under rewrite: what the inference passes share.

:class:`GraphEdit` copies a :class:`dagnet.executor.BoundGraph`'s JSON, answers what a
pass asks of it (a node's registered operator, parameters, shapes, who reads an output)
and takes the edits (a node replaced in its place, one dropped, the readers of an output
moved to another entry), keeping who-reads-what current; :meth:`GraphEdit.to_json` gives
the rewritten JSON with the dropped nodes gone.  A node that takes the place of several
(a fused one) goes where the last of them was, after everything it reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dagnet.operator import get_op

__all__ = ["GraphEdit", "Entry", "for_inference"]

Entry = tuple[int, int]  # (node id, output index)


def for_inference(graph: Any) -> GraphEdit | None:
    """A :class:`GraphEdit` of ``graph`` (a BoundGraph) when it is bound for inference; None
    when it is bound for training (the inference passes leave it)."""
    return None if graph.for_training else GraphEdit(graph)


class GraphEdit:
    """The JSON of ``graph`` (a BoundGraph), to rewrite."""

    def __init__(self, graph: Any):
        self.graph = graph
        self.nodes: list[dict] = [dict(node, inputs=[list(e) for e in node.get("inputs", [])])
                                  for node in graph.json["nodes"]]
        self.heads: list[list[int]] = [list(e) for e in graph.json["heads"]]
        self.dropped: set[int] = set()
        self._ops: dict[int, str | None] = {}
        self._readers: dict[Entry, list[int]] = {}
        for nid, node in enumerate(self.nodes):
            for source, index, _ in node["inputs"]:
                self._readers.setdefault((source, index), []).append(nid)
        self.changed = False

    # -- questions ----------------------------------------------------------------------
    def nodes_of(self, *ops: str) -> Iterator[int]:
        """The ids of the nodes (not dropped, checked as the walk reaches them) whose
        operator is one of ``ops`` (registered names), in graph order."""
        for nid in range(len(self.nodes)):
            if nid not in self.dropped and self.op(nid) in ops:
                yield nid

    def op(self, nid: int) -> str | None:
        """The registered name of node ``nid``'s operator (aliases resolved), None for a
        variable."""
        if nid not in self._ops:
            name = self.nodes[nid]["op"]
            self._ops[nid] = None if name == "null" else get_op(name).name
        return self._ops[nid]

    def params(self, nid: int) -> dict[str, str]:
        """Node ``nid``'s operator parameters (its attributes but the ``__dunder__`` ones)."""
        attrs = self.nodes[nid].get("attrs") or {}
        return {k: v for k, v in attrs.items() if not (k.startswith("__") and k.endswith("__"))}

    def shape(self, nid: int, index: int = 0) -> tuple[int, ...] | None:
        """The shape of output ``index`` of node ``nid``; None where the pass is not told
        (a graph rewritten before it is bound)."""
        shape = self.graph.shapes[nid][index]
        return None if shape is None else tuple(shape)

    def dtype(self, nid: int, index: int = 0) -> Any:
        return self.graph.dtypes[nid][index]

    def readers(self, nid: int, index: int = 0) -> list[int]:
        """The nodes that read output ``index`` of node ``nid``, once per input slot."""
        return list(self._readers.get((nid, index), ()))

    def is_head(self, nid: int, index: int = 0) -> bool:
        return any(h[0] == nid and h[1] == index for h in self.heads)

    def sole_reader(self, nid: int) -> int | None:
        """The node that alone reads node ``nid``: the only reader, in one input slot, of its
        first output, when no other output is read and none is a graph output; else None."""
        readers = self.readers(nid)
        if len(readers) != 1 or self.is_head(nid):
            return None
        for index in range(1, len(self.graph.shapes[nid])):
            if self.readers(nid, index) or self.is_head(nid, index):
                return None
        return readers[0]

    def variable_order(self) -> list[str]:
        """The names of the variables in the order the graph lists its inputs (a
        depth-first walk from the outputs, each node after its inputs), as loading the
        rewritten JSON would give them."""
        order, seen = [], set()
        for head in self.heads:
            if head[0] in seen:
                continue
            seen.add(head[0])
            stack = [(head[0], 0)]
            while stack:
                nid, next_input = stack[-1]
                inputs = self.nodes[nid]["inputs"]
                if next_input < len(inputs):
                    stack[-1] = (nid, next_input + 1)
                    child = inputs[next_input][0]
                    if child not in seen:
                        seen.add(child)
                        stack.append((child, 0))
                else:
                    stack.pop()
                    if self.nodes[nid]["op"] == "null":
                        order.append(self.nodes[nid]["name"])
        return order

    # -- edits --------------------------------------------------------------------------
    def replace(self, nid: int, row: dict) -> None:
        """Put ``row`` (a node: op, name, attrs, inputs, maybe subgraphs) in node ``nid``'s
        place: what read ``nid`` reads the new node."""
        self._unread(nid)
        self.nodes[nid] = dict(row, inputs=[list(e) for e in row["inputs"]])
        self._ops.pop(nid, None)
        for source, index, _ in self.nodes[nid]["inputs"]:
            self._readers.setdefault((source, index), []).append(nid)
        self.changed = True

    def drop(self, nid: int) -> None:
        """Remove node ``nid`` (nothing may read it any more)."""
        self._unread(nid)
        self.dropped.add(nid)
        self.changed = True

    def move_readers(self, old: Entry, new: list[int]) -> None:
        """Have every reader of entry ``old`` (and the graph outputs that are it) read the
        entry ``new`` (``[node, output, version]``) instead."""
        for reader in set(self._readers.pop(old, ())):
            for entry in self.nodes[reader]["inputs"]:
                if (entry[0], entry[1]) == old:
                    entry[:] = new
                    self._readers.setdefault((new[0], new[1]), []).append(reader)
        for head in self.heads:
            if (head[0], head[1]) == old:
                head[:] = new
        self.changed = True

    def snapshot(self) -> tuple:
        """The edits so far, to go back to (:meth:`restore`) if a tentative one fails.

        The copy is as deep as the edits reach -- the node list, each node's input
        entries (:meth:`move_readers` rewrites them in place), the readers' lists -- not
        the nodes' attributes or subgraphs, which no edit changes: a deep copy of a
        resnet-152 per residual sum took seven seconds of its bind."""
        return (self._copied_nodes(), [list(h) for h in self.heads], set(self.dropped),
                {entry: list(readers) for entry, readers in self._readers.items()},
                self.changed)

    def restore(self, snapshot: tuple) -> None:
        """Go back to ``snapshot`` (taken by :meth:`snapshot`, used once)."""
        self.nodes, self.heads, self.dropped, self._readers, self.changed = snapshot
        self._ops.clear()

    def _copied_nodes(self) -> list[dict]:
        return [dict(node, inputs=[list(e) for e in node["inputs"]]) for node in self.nodes]

    def _unread(self, nid: int) -> None:
        for source, index, _ in self.nodes[nid]["inputs"]:
            readers = self._readers.get((source, index))
            if readers and nid in readers:
                readers.remove(nid)

    # -- result -------------------------------------------------------------------------
    def to_json(self) -> dict | None:
        """The rewritten graph's JSON, or None when nothing changed."""
        if not self.changed:
            return None
        where: dict[int, int] = {}
        nodes = []
        for nid, node in enumerate(self.nodes):
            if nid in self.dropped:
                continue
            inputs = [[where[s], i, v] for s, i, v in node["inputs"]]
            nodes.append(dict(node, inputs=inputs))
            where[nid] = len(nodes) - 1
        rewritten = {k: v for k, v in self.graph.json.items()
                     if k not in ("nodes", "node_row_ptr", "heads", "arg_nodes")}
        rewritten.update(nodes=nodes, heads=[[where[s], i, v] for s, i, v in self.heads],
                         arg_nodes=[i for i, n in enumerate(nodes) if n["op"] == "null"])
        return rewritten
