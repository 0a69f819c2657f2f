"""Symbol JSON in MXNet 1.x's format, so networks exported from MXNet load here and
the reverse.

The format: ``nodes`` in graph order, each ``{"op", "name", "attrs", "inputs"}``
with ``"op": "null"`` for variables and inputs as ``[node, output, version]``;
``arg_nodes`` (the variables), ``node_row_ptr`` (where each node's outputs
start, hidden outputs counted), ``heads`` (the symbol's outputs) and
``attrs.mxnet_version``.  Files written before MXNet 1.0 keep parameters
under ``param`` and attributes under ``attr``; both load.

A node of an operator that holds subgraphs (MXNet's fused ``_sg_*`` operators) lists
them under ``subgraphs``, each a graph in this format; such an operator declares a
``subgraphs`` parameter, which holds that list as JSON text.
"""

from __future__ import annotations

import json
from typing import Any

from .._errors import DagnetError, UnknownNameError
from ..attribute import stored_key
from ..operator import get_op
from ._infer import parse_shape_attr
from ._node import Node, is_hidden_attr, topo_order

__all__ = ["to_json", "load_json", "load", "FORMAT_VERSION", "SUBGRAPHS", "SymbolFormatError"]

FORMAT_VERSION = 10901  # the MXNet release whose JSON this writes: 1.9.1
_NEWEST_MAJOR = 1
#: the node key, and the parameter of an operator that holds subgraphs, keeping them
SUBGRAPHS = "subgraphs"


class SymbolFormatError(DagnetError, ValueError):
    """Symbol JSON that cannot be read: malformed, from a newer format, or naming an
    operator that no installed plugin provides."""


def to_json(symbol: Any) -> str:
    """``symbol`` as MXNet 1.x symbol JSON text, laid out as MXNet writes it."""
    nodes = topo_order(symbol._outputs)
    index = {id(n): i for i, n in enumerate(nodes)}
    rows, row_ptr = [], [0]
    mutations: dict[int, int] = {}
    for node in nodes:
        row: dict[str, Any] = {"op": "null" if node.op is None else node.op.name,
                               "name": node.name}
        attrs = node.all_attrs()
        subgraphs = attrs.pop(SUBGRAPHS, None) if _holds_subgraphs(node.op) else None
        if attrs:
            row["attrs"] = dict(sorted(attrs.items()))  # nnvm keeps them in a sorted map
        # an input's third number is nnvm's version of a variable: how many operators
        # have mutated it so far (auxiliary states such as BatchNorm's moving_mean)
        aux = node.aux_inputs()
        inputs = []
        for position, (child, output) in enumerate(node.inputs):
            version = 0
            if position in aux and child.op is None:
                version = mutations[id(child)] = mutations.get(id(child), 0) + 1
            inputs.append([index[id(child)], output, version])
        row["inputs"] = inputs
        if subgraphs is not None:
            row[SUBGRAPHS] = json.loads(subgraphs)
        rows.append(_Block(row))
        row_ptr.append(row_ptr[-1] + node.num_outputs())
    graph = _Block({
        "nodes": _Block(rows),
        "arg_nodes": [i for i, n in enumerate(nodes) if n.op is None],
        "node_row_ptr": row_ptr,
        "heads": [[index[id(n)], i, 0] for n, i in symbol._outputs],
        "attrs": _graph_attrs(),
    })
    return _write(graph, 0)


def _holds_subgraphs(op: Any) -> bool:
    return op is not None and SUBGRAPHS in op.params.fields()


def _graph_attrs() -> dict:
    """The graph's attributes: the format version and, as MXNet 1.6+ writes it, whether
    the graph was made with NumPy shape semantics (0 a real size, -1 unknown)."""
    from ..util import is_np_shape

    attrs: dict[str, Any] = {"mxnet_version": ["int", FORMAT_VERSION]}
    if is_np_shape():
        attrs["is_np_shape"] = ["int", 1]
    return attrs


def _to_numpy_shapes(nodes: list[Node]) -> None:
    """A graph saved without NumPy shape semantics, loaded with them on: its variables'
    ``__shape__`` 0s (legacy "unknown") become -1, and an empty shape is dropped."""
    for node in nodes:
        text = node.attr.get("__shape__") if node.op is None else None
        if text is None:
            continue
        shape = parse_shape_attr(text)
        if not shape:
            del node.attr["__shape__"]
        else:
            node.attr["__shape__"] = str(tuple(-1 if d == 0 else d for d in shape))


class _Block:
    """A JSON object or array that is always written one item a line (the graph, its node
    list and each node), where dmlc's writer would otherwise decide by size."""

    def __init__(self, value: dict | list):
        self.value = value


def _write(value: Any, depth: int) -> str:
    """JSON text in the layout of dmlc's JSONWriter, which MXNet saves symbols with:
    objects of more than one key and arrays of more than ten items one item a line,
    items separated by ``", "`` (a trailing space before the line break), two-space
    indents; smaller containers on one line."""
    multi_line = isinstance(value, _Block)
    if multi_line:
        value = value.value
    if isinstance(value, dict):
        items = [f"{_scalar(k)}: {_write(v, depth + 1)}" for k, v in value.items()]
        return _join(items, "{", "}", multi_line or len(items) > 1, depth)
    if isinstance(value, list):
        items = [_write(v, depth + 1) for v in value]
        return _join(items, "[", "]", multi_line or len(items) > 10, depth)
    return _scalar(value)


_quoted = json.encoder.encode_basestring_ascii  # what json.dumps writes a str with


def _scalar(value: Any) -> str:
    """``json.dumps(value)``, without its per-call setup for the strings and ints a graph
    is mostly made of (a large network's JSON has a few hundred thousand)."""
    kind = type(value)
    if kind is str:
        return _quoted(value)
    if kind is int:
        return str(value)
    return json.dumps(value)


def _join(items: list[str], open_: str, close: str, multi_line: bool, depth: int) -> str:
    if not multi_line:
        return open_ + ", ".join(items) + close
    inner = "\n" + "  " * (depth + 1)
    return open_ + inner + f", {inner}".join(items) + "\n" + "  " * depth + close


def load_json(text: str) -> Any:
    """The symbol described by MXNet 1.x symbol JSON ``text``."""
    from ._symbol import Symbol

    try:
        graph = json.loads(text)
    except (TypeError, json.JSONDecodeError) as error:
        raise SymbolFormatError(f"symbol JSON could not be parsed: {error}") from None
    if not isinstance(graph, dict) or "nodes" not in graph or "heads" not in graph:
        raise SymbolFormatError("symbol JSON must be an object with 'nodes' and 'heads' "
                                "(as written by Symbol.tojson or MXNet's Symbol.save)")
    _check_version(graph)
    nodes: list[Node] = []
    for position, row in enumerate(graph["nodes"]):
        nodes.append(_node(row, position, nodes, len(graph["nodes"])))
    from ..util import is_np_shape

    saved = graph.get("attrs", {}).get("is_np_shape")
    if is_np_shape() and not (isinstance(saved, list) and len(saved) == 2 and int(saved[1])):
        _to_numpy_shapes(nodes)
    heads = [_entry(nodes, head, len(nodes), "heads") for head in graph["heads"]]
    if not heads:
        raise SymbolFormatError("symbol JSON has no heads: a symbol needs at least one output")
    return Symbol(heads)


def load(fname: str) -> Any:
    """The symbol saved in the JSON file ``fname`` (by dagnet or MXNet 1.x)."""
    with open(fname) as handle:
        return load_json(handle.read())


def _check_version(graph: dict) -> None:
    version = graph.get("attrs", {}).get("mxnet_version")
    if version is None:
        return  # files from before versions were recorded
    try:
        number = int(version[1] if isinstance(version, list) else version)
    except (TypeError, ValueError, IndexError):
        raise SymbolFormatError(f"symbol JSON has an unreadable mxnet_version {version!r}"
                                ) from None
    if number // 10000 > _NEWEST_MAJOR:
        raise SymbolFormatError(
            f"symbol JSON was written by MXNet {number // 10000}.{number // 100 % 100}."
            f"{number % 100}, a newer format than dagnet reads (MXNet 1.x, up to "
            f"{FORMAT_VERSION}); export the model from MXNet 1.x")


def _entry(nodes: list[Node], entry: Any, total: int, where: str) -> tuple[Node, int]:
    """The ``[node, output(, version)]`` entry ``entry`` as (node, output index), from the
    ``nodes`` read so far (an input must refer to an earlier node) of ``total``."""
    try:
        position, output = int(entry[0]), int(entry[1])
    except (IndexError, ValueError, TypeError, KeyError):
        raise SymbolFormatError(f"symbol JSON: {where} has the entry {entry!r}; entries are "
                                f"[node, output, version] lists of ints") from None
    if not 0 <= position < len(nodes):
        reason = "does not come before it" if 0 <= position < total else "does not exist"
        raise SymbolFormatError(f"symbol JSON: {where} refers to node {position}, which "
                                f"{reason} (nodes are listed inputs first)")
    node = nodes[position]
    if not 0 <= output < node.num_outputs():
        raise SymbolFormatError(f"symbol JSON: {where} refers to output {output} of node "
                                f"{node.name!r}, which has {node.num_outputs()} output(s)")
    return node, output


def _node(row: dict, position: int, nodes: list[Node], total: int) -> Node:
    if not isinstance(row, dict):
        raise SymbolFormatError(f"symbol JSON: node {position} is {row!r:.60}; nodes are "
                                f"objects with 'op', 'name' and 'inputs'")
    name = row.get("name", f"node{position}")
    attrs = dict(row.get("attrs") or {})
    attrs.update(row.get("param") or {})  # before MXNet 0.9
    # old files store hidden keys plainly (``ctx_group``); MXNet renames them on load
    attrs.update({stored_key(k): v for k, v in (row.get("attr") or {}).items()})
    attrs = {k: str(v) for k, v in attrs.items()}
    op_name = row.get("op", "null")
    inputs = [_entry(nodes, entry, total, f"node {name!r}") for entry in row.get("inputs", [])]
    if op_name == "null":
        return Node(None, name, attr=attrs)
    try:
        op = get_op(op_name)
    except UnknownNameError as error:
        raise SymbolFormatError(f"symbol JSON node {name!r} uses operator {op_name!r}, which "
                                f"is not registered: {error}") from None
    fields = op.params.fields()
    # an operator taking any keyword (Custom: its property's arguments) gets every plain key
    open_keywords = getattr(op.params, "takes_any_keyword", False)
    params = {k: v for k, v in attrs.items()
              if (k in fields or open_keywords) and not is_hidden_attr(k)}
    extra = {k: v for k, v in attrs.items() if k not in params}
    subgraphs = row.get(SUBGRAPHS)
    if subgraphs is not None:
        if not _holds_subgraphs(op) or not isinstance(subgraphs, list):
            raise SymbolFormatError(
                f"symbol JSON node {name!r} has 'subgraphs', but operator {op.name!r} holds "
                f"none (or they are not a list of graphs)")
        params[SUBGRAPHS] = json.dumps(subgraphs)
    try:
        parsed = op.parse_params(params)
    except DagnetError as error:
        raise SymbolFormatError(f"symbol JSON node {name!r}: {error}") from None
    node = Node(op, name, params, parsed, inputs, extra)
    expected = op.n_inputs(parsed)
    if len(inputs) != expected:
        raise SymbolFormatError(f"symbol JSON node {name!r} (operator {op.name!r}) has "
                                f"{len(inputs)} inputs; the operator takes {expected} "
                                f"({', '.join(op.list_inputs(parsed))})")
    return node
