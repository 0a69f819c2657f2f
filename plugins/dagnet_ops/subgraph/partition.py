"""Partitioning a graph into subgraph nodes, the way MXNet's ``BuildSubgraph`` pass does,
so that a graph partitioned here has the nodes, names and input order MXNet gives it.

Regions: in graph order, each node a selector accepts and no region holds yet seeds one,
grown across inputs and consumers the selector accepts.  A region whose outside both feeds
it and reads it -- directly, or through a path that leaves it and comes back -- would make
a cycle once collapsed; the region is grown again without its latest node on that path
(the highest in graph order), until none is left, or else the seed stands alone.

Collapsing: each region in turn becomes one node holding the region as a subgraph.  The
region's inputs are the entries it reads from outside, ordered by where they are reached
in a depth-first walk of the whole graph (MXNet's topological order of entries); each
becomes a variable named after the entry's output name and a count, one per use (one per
entry with ``dedup``).  Its outputs are, in that order too, every use of one of its
entries outside it and among the graph's heads (equal neighbouring uses merged with
``dedup``).  The node's inputs follow its subgraph's ``list_inputs`` order, which a
subgraph node feeds by.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from dagnet import symbol as sym
from dagnet.operator import get_op

__all__ = ["partition"]


class _Node:
    """A node while the graph is rewritten: its JSON row without inputs, its inputs as
    ``[node, output]`` pairs, and its position in the original graph (None: made here)."""

    __slots__ = ("row", "inputs", "position", "_names")

    def __init__(self, row: dict, inputs: list[list[Any]], position: int | None):
        self.row = row
        self.inputs = inputs
        self.position = position
        self._names: list[str] | None = None

    @property
    def is_variable(self) -> bool:
        return self.row["op"] == "null"

    def output_name(self, index: int) -> str:
        """MXNet's name of output ``index`` (``<node>_<output>``; a variable's own name)."""
        if self._names is None:
            self._names = _output_names(self.row)
        return self._names[index]


def _output_names(row: dict) -> list[str]:
    if row["op"] == "null":
        return [row["name"]]
    op = get_op(row["op"])
    fields = op.params.fields()
    any_keyword = getattr(op.params, "takes_any_keyword", False)
    params = {k: v for k, v in (row.get("attrs") or {}).items()
              if k in fields or (any_keyword and not (k.startswith("__") and k.endswith("__")))}
    if "subgraphs" in row:
        params["subgraphs"] = json.dumps(row["subgraphs"])
    return [f"{row['name']}_{name}" for name in op.list_outputs(op.parse_params(params))]


def partition(graph: dict, select: Callable[[dict], bool],
              make_node: Callable[[dict, int], dict], dedup: bool = False) -> dict | None:
    """``graph`` (symbol JSON) with each region of nodes ``select(row)`` accepts replaced by
    the node ``make_node(subgraph JSON, region number)`` returns (a row without inputs, the
    subgraph kept in it); None when no node is selected."""
    rows = graph["nodes"]
    nodes = [_Node({k: v for k, v in row.items() if k != "inputs"}, [], i)
             for i, row in enumerate(rows)]
    for node, row in zip(nodes, rows):
        node.inputs = [[nodes[source], output] for source, output, *_ in row.get("inputs", [])]
    heads = [[nodes[source], output] for source, output, *_ in graph["heads"]]
    selectable = [not n.is_variable and bool(select(n.row)) for n in nodes]
    regions = _Regions(nodes, selectable).find()
    if not regions:
        return None
    order = _entry_order(heads)
    live = list(nodes)
    for number, region in enumerate(regions):
        live = _collapse([nodes[i] for i in region], number, live, heads, order, make_node,
                         dedup)
    return _emit(heads, graph.get("attrs"))


class _Regions:
    """MXNet's region search: labels per node, grown breadth first, cut where a cycle
    would close."""

    def __init__(self, nodes: list[_Node], selectable: list[bool]):
        self.nodes = nodes
        self.selectable = selectable
        self.label = [-1] * len(nodes)
        self.inputs = [[source.position for source, _ in n.inputs] for n in nodes]
        self.consumers: list[list[int]] = [[] for _ in nodes]
        for position, sources in enumerate(self.inputs):
            for source in dict.fromkeys(sources):
                self.consumers[source].append(position)

    def find(self) -> list[list[int]]:
        regions: list[list[int]] = []
        for seed in range(len(self.nodes)):
            if self.label[seed] == -1 and self.selectable[seed]:
                regions.append(self._grow(seed, len(regions)))
        return regions

    def _grow(self, seed: int, label: int) -> list[int]:
        excluded: set[int] = set()
        for _ in range(len(self.nodes) ** 2):
            members, cut = self._label(seed, label, excluded)
            if cut is None:
                return members
            if cut in excluded:  # no progress: no region but the seed's own
                break
            excluded.add(cut)
        self.label[seed] = label
        return [seed]

    def _label(self, seed: int, label: int, excluded: set[int]
               ) -> tuple[list[int], int | None]:
        """The region grown from ``seed`` (sorted), or the node to exclude to break a cycle
        (the region's labels undone)."""
        self.label[seed] = label
        queue, members = [seed], []
        feeds: dict[int, list[int]] = {}  # outside node -> region nodes reading it
        reads: dict[int, list[int]] = {}  # outside node -> region nodes it reads
        while queue:
            current = queue.pop(0)
            members.append(current)
            for neighbours, touching in ((self.inputs[current], feeds),
                                         (self.consumers[current], reads)):
                for other in neighbours:
                    if self.label[other] != -1:
                        continue
                    if other not in excluded and self.selectable[other]:
                        self.label[other] = label
                        queue.append(other)
                    else:
                        touching.setdefault(other, []).append(current)
        cut = -1
        outside = sorted({*feeds, *reads})
        inside = set(members)
        for i, node in enumerate(outside):
            fed, read = feeds.get(node), reads.get(node)
            if fed and read:  # the node both feeds the region and reads it
                cut = max(cut, *fed, *read)
            elif read:  # the node reads the region: does it lead to one that feeds it?
                for later in outside[i + 1:]:
                    if feeds.get(later) and self._leads_to(node, later, inside):
                        cut = max(cut, *read, *feeds[later])
        if cut == -1:
            return sorted(members), None
        for member in members:
            self.label[member] = -1
        return [], cut

    def _leads_to(self, ancestor: int, node: int, inside: set[int]) -> bool:
        """Whether ``ancestor`` reaches ``node`` along a path outside the region."""
        stack, seen = [node], {node}
        while stack:
            current = stack.pop()
            if current == ancestor:
                return True
            for source in self.inputs[current]:
                # graph order: nothing before the ancestor can lead from it
                if source not in seen and source not in inside and source >= ancestor:
                    seen.add(source)
                    stack.append(source)
        return False


_Slot = tuple  # (id of the consuming node, input position), or ("head", position)


def _entry_order(heads: list[list[Any]]) -> dict[_Slot, int]:
    """Every use of an entry (an input slot, a head), numbered as a depth-first walk from
    the heads finishes it: a slot through which a node is first reached when that node is
    done, any other when it is met."""
    order: dict[_Slot, int] = {}
    visited: set[int] = set()
    for position, (head, _) in enumerate(heads):
        if id(head) in visited:
            order[("head", position)] = len(order)
            continue
        visited.add(id(head))
        stack: list[tuple[_Node, int, _Slot]] = [(head, 0, ("head", position))]
        while stack:
            node, next_input, slot = stack[-1]
            if next_input == len(node.inputs):
                order[slot] = len(order)
                stack.pop()
                continue
            stack[-1] = (node, next_input + 1, slot)
            source = node.inputs[next_input][0]
            if id(source) in visited:
                order[(id(node), next_input)] = len(order)
            else:
                visited.add(id(source))
                stack.append((source, 0, (id(node), next_input)))
    return order


def _collapse(region: list[_Node], number: int, live: list[_Node], heads: list[list[Any]],
              order: dict[_Slot, int], make_node: Callable[[dict, int], dict],
              dedup: bool) -> list[_Node]:
    """Replace ``region`` by its subgraph node in the graph; the nodes still live after."""
    inside = {id(n) for n in region}
    # the region's reads from outside, as (slot, reading node, position)
    reads = [((id(n), p), n, p) for n in region for p, (source, _) in enumerate(n.inputs)
             if id(source) not in inside]
    reads.sort(key=lambda read: order[read[0]])
    feeds: list[tuple[_Slot, list[Any]]] = []  # uses of the region's entries outside it
    for node in live:
        if id(node) not in inside:
            feeds.extend(((id(node), p), entry) for p, entry in enumerate(node.inputs)
                         if id(entry[0]) in inside)
    feeds.extend((("head", p), entry) for p, entry in enumerate(heads)
                 if id(entry[0]) in inside)
    feeds.sort(key=lambda feed: order[feed[0]])

    # cut the reads: a variable per use (per entry with dedup), named <output name><count>
    outer: dict[str, tuple[list[Any], _Slot]] = {}  # variable name -> outer entry, its slot
    counts: dict[str, int] = {}  # output name -> variables named after it
    shared: dict[tuple[int, int], _Node] = {}  # with dedup: entry -> its variable
    for slot, node, position in reads:
        source, output = node.inputs[position]
        variable = shared.get((id(source), output)) if dedup else None
        if variable is None:
            base = source.output_name(output)
            counts[base] = counts.get(base, -1) + 1
            name = _fresh(f"{base}{counts[base]}", outer)
            variable = shared[(id(source), output)] = _Node({"op": "null", "name": name}, [],
                                                            None)
            outer[name] = ([source, output], slot)
        node.inputs[position] = [variable, 0]

    outputs: list[list[Any]] = []  # the subgraph's heads
    position_of_feed = []
    for _, entry in feeds:
        if not (dedup and outputs and outputs[-1][0] is entry[0] and outputs[-1][1] == entry[1]):
            outputs.append([entry[0], entry[1]])
        position_of_feed.append(len(outputs) - 1)

    loaded = sym.load_json(json.dumps(_emit(outputs, None)))
    inputs = loaded.list_inputs()
    made_node = _Node(make_node(json.loads(loaded.tojson()), number),
                      [outer[name][0] for name in inputs], None)
    for i, name in enumerate(inputs):
        order[(id(made_node), i)] = order[outer[name][1]]
    by_id = {id(n): n for n in live}
    for (slot, _), index in zip(feeds, position_of_feed):
        if slot[0] == "head":
            heads[slot[1]] = [made_node, index]
        else:
            by_id[slot[0]].inputs[slot[1]] = [made_node, index]
    return [n for n in live if id(n) not in inside] + [made_node]


def _fresh(name: str, taken: dict[str, Any]) -> str:
    """``name``, or with underscores appended until no other variable has it."""
    while name in taken:
        name += "_"
    return name


def _emit(heads: list[list[Any]], attrs: dict | None) -> dict:
    """Symbol JSON of the graph under ``heads``, nodes in depth-first order."""
    nodes: list[_Node] = []
    index: dict[int, int] = {}
    for head, _ in heads:
        if id(head) in index:
            continue
        stack = [(head, 0)]
        index[id(head)] = -1
        while stack:
            node, next_input = stack[-1]
            if next_input < len(node.inputs):
                stack[-1] = (node, next_input + 1)
                source = node.inputs[next_input][0]
                if id(source) not in index:
                    index[id(source)] = -1
                    stack.append((source, 0))
            else:
                stack.pop()
                index[id(node)] = len(nodes)
                nodes.append(node)
    rows = [{**n.row, "inputs": [[index[id(s)], o, 0] for s, o in n.inputs]} for n in nodes]
    graph = {"nodes": rows, "arg_nodes": [i for i, n in enumerate(nodes) if n.is_variable],
             "heads": [[index[id(h)], o, 0] for h, o in heads]}
    if attrs is not None:
        graph["attrs"] = attrs
    return graph
