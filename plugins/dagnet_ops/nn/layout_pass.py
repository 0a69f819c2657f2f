"""The graph pass ``nchw16c_layout``: convolution networks keep their float32 CPU
activations in oneDNN's blocked layout (NCHW16c, see :mod:`.nchw16c`) from one layer to
the next.

Bound as written, every convolution changes its data from NCHW to oneDNN's layout and its
result back, in the forward pass and again in the backward pass (five layout changes per
layer).  This pass runs convolutions whose data oneDNN would take in NCHW16c as
``_Convolution_NCHW16c`` and the layers between them that can follow (BatchNorm over the
channels, activations, sums of such arrays) on that layout too, and changes the layout
only where the chain meets another layer or an output (``_NCHW_to_NCHW16c`` /
``_NCHW16c_to_NCHW``, which are each other's gradient).  The graph's arguments, outputs
and gradients stay as they were; ``DAGNET_GRAPH_PASSES=0`` runs the graph unchanged.

A convolution joins when it is 2-D and ungrouped, its channels and filters are multiples
of 16, the data float32 on the CPU, oneDNN is on and picks NCHW16c for it (AVX-512
machines), and either its data already is NCHW16c or a layer that can follow reads its
result: a convolution standing alone keeps its own kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, NamedTuple

import numpy as np

from dagnet.operator import get_op

from . import _onednn, batch_norm, convolution
from ._common import threads_for
from .nchw16c import BLOCK

__all__ = ["NAME", "rewrite", "LayoutChange", "with_layout_changes"]

NAME = "nchw16c_layout"

_CONV, _NORM, _ELEMENTWISE = "conv", "norm", "elementwise"
_BLOCKED_OP = {_CONV: "_Convolution_NCHW16c", _NORM: "_BatchNorm_NCHW16c"}
# element-wise on same-shaped arrays, whatever the order of their elements
_ELEMENTWISE_OPS = ("Activation", "elemwise_add", "add_n")


def rewrite(graph: Any) -> dict | None:
    """The pass: ``graph`` a :class:`dagnet.executor.BoundGraph`; the rewritten JSON, or
    None where nothing joins."""
    if graph.ctx.device_type != "cpu":
        return None
    lib = _onednn.library_for(np, np.zeros(0, np.float32))
    if lib is None:
        return None
    nodes = graph.json["nodes"]
    kinds = [_candidate(lib, node, graph) for node in nodes]
    consumers: dict[int, list[int]] = {}
    for nid, node in enumerate(nodes):
        for source, _, _ in node.get("inputs", []):
            consumers.setdefault(source, []).append(nid)
    blocked: set[int] = set()  # nodes whose first output is NCHW16c
    for nid, node in enumerate(nodes):
        kind = kinds[nid]
        inputs = [(source, index) for source, index, _ in node.get("inputs", [])]
        if kind == _CONV:
            joins = inputs[0][0] in blocked and inputs[0][1] == 0 or \
                any(kinds[c] is not None for c in consumers.get(nid, []))
        elif kind == _NORM:
            joins = inputs[0][0] in blocked and inputs[0][1] == 0
        elif kind == _ELEMENTWISE:
            joins = all(s in blocked and i == 0 for s, i in inputs)
        else:
            joins = False
        if joins:
            blocked.add(nid)
    if not any(kinds[nid] == _CONV for nid in blocked):
        return None
    return _emit(graph.json, kinds, blocked)


def _candidate(lib, node: dict, graph: Any) -> str | None:
    """What ``node`` could be on NCHW16c data, from its operator and shapes alone."""
    op = node["op"]
    if op == "null":
        return None
    shapes, dtypes = graph.shapes, graph.dtypes
    if any(dtypes[source][index] != np.float32 for source, index, _ in node["inputs"]):
        return None
    data = shapes[node["inputs"][0][0]][node["inputs"][0][1]] if node["inputs"] else None
    if data is None or len(data) != 4 or data[1] % BLOCK:
        return None
    name = get_op(op).name
    attrs = {k: v for k, v in node.get("attrs", {}).items() if not k.startswith("__")}
    if name == "Convolution":
        params = convolution.ConvolutionParam.parse("Convolution", attrs)
        if params.layout not in (None, "NCHW") or params.num_group != 1 or \
                len(params.kernel) != 2:
            return None
        _, stride, dilate, pad = convolution.conv_geometry("Convolution", params, 4)
        weight = shapes[node["inputs"][1][0]][node["inputs"][1][1]]
        return _CONV if _onednn.takes_blocked(lib, data, weight, stride, dilate, pad, 1,
                                              threads_for(np)) else None
    if name == "BatchNorm":
        params = batch_norm.BatchNormParam.parse("BatchNorm", attrs)
        return _NORM if params.axis in (1, -3) else None
    if name in _ELEMENTWISE_OPS:
        same = all(shapes[s][i] == data for s, i, _ in node["inputs"])
        return _ELEMENTWISE if same else None
    return None


def _emit(graph_json: dict, kinds: list, blocked: set[int]) -> dict:
    """The JSON with the ``blocked`` nodes on NCHW16c and the layout changes they need."""
    def rewrite(nid: int, node: dict) -> tuple[dict, range]:
        kind = kinds[nid]
        row = dict(node, op=_BLOCKED_OP[kind]) if kind in _BLOCKED_OP else dict(node)
        return row, _blocked_inputs(kind, len(node.get("inputs", ())))

    return with_layout_changes(graph_json, graph_json["nodes"], graph_json["heads"], blocked,
                               rewrite, LayoutChange("_NCHW_to_NCHW16c", "nchw16c"),
                               LayoutChange("_NCHW16c_to_NCHW", "nchw"))


class LayoutChange(NamedTuple):
    """A node that changes an array's layout: its operator, the suffix its name takes
    after its source's, and its attributes."""

    op: str
    suffix: str
    attrs: dict | None = None


def with_layout_changes(graph_json: dict, nodes: list[dict], heads: list, blocked: set[int],
                        rewrite: Callable[[int, dict], tuple[dict, Collection[int]]],
                        to_blocked: LayoutChange, to_plain: LayoutChange,
                        dropped: Collection[int] = ()) -> dict:
    """The JSON of ``graph_json``'s graph made of ``nodes`` and ``heads`` (symbol JSON node
    rows and head entries; those ``dropped`` left out) where the first output of each node
    in ``blocked`` is in another layout: ``rewrite(nid, node)`` gives such a node's new row
    and the input positions it takes in that layout; every other input, and every graph
    output, is in the plain one.  Where an entry and its reader differ, a ``to_blocked``
    or ``to_plain`` node goes between them, one per entry and direction."""
    names = {node["name"] for node in nodes}
    out: list[dict] = []
    where: dict[int, int] = {}  # old node id -> new
    changed: dict[tuple[int, int, bool], int] = {}  # (old id, output, to blocked) -> new id

    def entry(source: int, index: int, version: int, wants_blocked: bool) -> list:
        if wants_blocked == (source in blocked and index == 0):
            return [where[source], index, version]
        key = (source, index, wants_blocked)
        if key not in changed:
            change = to_blocked if wants_blocked else to_plain
            row = {"op": change.op,
                   "name": _unique(f"{nodes[source]['name']}_{change.suffix}", names),
                   "inputs": [[where[source], index, 0]]}
            if change.attrs:
                row["attrs"] = dict(change.attrs)
            out.append(row)
            changed[key] = len(out) - 1
        return [changed[key], 0, 0]

    for nid, node in enumerate(nodes):
        if nid in dropped:
            continue
        row, takes = rewrite(nid, node) if nid in blocked else (dict(node), ())
        if "inputs" in node:
            row["inputs"] = [entry(s, i, v, position in takes)
                             for position, (s, i, v) in enumerate(node["inputs"])]
        out.append(row)
        where[nid] = len(out) - 1
    rewritten = {k: v for k, v in graph_json.items()
                 if k not in ("nodes", "node_row_ptr", "heads", "arg_nodes")}
    rewritten.update(nodes=out, heads=[entry(s, i, v, False) for s, i, v in heads],
                     arg_nodes=[i for i, n in enumerate(out) if n["op"] == "null"])
    return rewritten


def _blocked_inputs(kind: str, count: int) -> range:
    """The input positions a node of ``kind`` on NCHW16c takes in that layout."""
    return range(count) if kind == _ELEMENTWISE else range(1)


def _unique(name: str, names: set[str]) -> str:
    candidate, n = name, 1
    while candidate in names:
        n += 1
        candidate = f"{name}{n}"
    names.add(candidate)
    return candidate
