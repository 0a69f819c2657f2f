"""Looking at a network (MXNet's ``mx.visualization``, short name ``mx.viz``):
:func:`print_summary` prints a table of layers with output shapes and parameter
counts; :func:`plot_network` draws the graph with the ``graphviz`` package
(``pip install dagnet[viz]``).

Both read the symbol's JSON form, so they see exactly what ``Symbol.tojson``
would save: operator nodes, their parameters as strings, and variables.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from ._errors import DagnetError
from .symbol import Symbol

__all__ = ["print_summary", "plot_network", "VisualizationError"]


class VisualizationError(DagnetError, ImportError):
    """:func:`plot_network` needs the ``graphviz`` Python package, which is not installed."""


def _numbers(text: str) -> list[str]:
    """The integers written in a shape string such as ``'(3, 3)'``."""
    return re.findall(r"\d+", text)


def _check_symbol(symbol: Any, function: str) -> None:
    if not isinstance(symbol, Symbol):
        raise TypeError(f"{function}: symbol must be a dagnet Symbol, got "
                        f"{type(symbol).__name__}")


def _output_shapes(symbol: Symbol, shape: Mapping[str, Any], function: str) -> dict[str, tuple]:
    """The shape of every internal output (``fc1_output``, ``data``...) given input shapes."""
    internals = symbol.get_internals()
    _, out_shapes, _ = internals.infer_shape(**shape)
    if out_shapes is None:
        raise ValueError(f"{function}: the input shapes {dict(shape)} are not enough to infer "
                         f"every shape; give the shapes of all inputs ({symbol.list_arguments()})")
    return dict(zip(internals.list_outputs(), out_shapes, strict=True))


def _entry_key(node: dict, index: int = 0, num_outputs: int = 1) -> str:
    """The name :meth:`Symbol.get_internals` gives output ``index`` of ``node``."""
    if node["op"] == "null":
        return node["name"]
    return f"{node['name']}_output" if num_outputs == 1 else f"{node['name']}_output{index}"


def _param_count(node: dict, input_channels: int, out_shape: Sequence[int] | None) -> int:
    """Learnable parameters of the layers whose count is known from attributes and shapes."""
    op, attrs = node["op"], node.get("attrs", {})
    has_bias = attrs.get("no_bias", "False") not in ("True", "true", "1")
    if op == "Convolution":
        filters = int(attrs["num_filter"])
        count = input_channels * filters // int(attrs.get("num_group", "1"))
        for k in _numbers(attrs["kernel"]):
            count *= int(k)
        return count + (filters if has_bias else 0)
    if op == "FullyConnected":
        return (input_channels + (1 if has_bias else 0)) * int(attrs["num_hidden"])
    if op == "BatchNorm":
        # gamma and beta: the moving statistics are not learned
        return 2 * int(out_shape[0]) if out_shape else 0
    if op == "Embedding":
        return int(attrs["input_dim"]) * int(attrs["output_dim"])
    return 0


def print_summary(symbol: Symbol, shape: Mapping[str, Any] | None = None,
                  line_length: int = 120,
                  positions: Sequence[float] = (.44, .64, .74, 1.)) -> None:
    """Print one row per layer of ``symbol``: name and operator, output shape (when
    ``shape`` gives the input shapes), parameter count, and the layers it reads.

    ``positions`` are where the four columns end, as fractions of
    ``line_length`` (or characters, when the last is above 1).  The count covers
    Convolution, FullyConnected, BatchNorm (needs ``shape``) and Embedding;
    ``Total params`` is their sum.  The batch dimension is left out of shapes.
    """
    _check_symbol(symbol, "print_summary")
    shapes = _output_shapes(symbol, shape, "print_summary") if shape is not None else None
    graph = json.loads(symbol.tojson())
    nodes = graph["nodes"]
    # rows for variables: the first node (the data, as MXNet prints it) and outputs
    layers = {0} | {head[0] for head in graph["heads"]}
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    def row(fields: Sequence[Any]) -> None:
        line = ""
        for text, end in zip(fields, positions, strict=True):
            line = (line + str(text))[:end]
            line = line.ljust(end)
        print(line)

    def shape_of(index: int) -> tuple:
        # as MXNet's table: a layer's shape is that of its single output (none shown for a
        # layer with several, and they add no input channels to the layers reading them)
        if shapes is None:
            return ()
        return tuple(shapes.get(_entry_key(nodes[index]), ())[1:])

    print("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    total = 0
    shown = [i for i, node in enumerate(nodes) if node["op"] != "null" or i == 0]
    for position, index in enumerate(shown):
        node = nodes[index]
        previous, channels = [], 0
        for source, *_ in node.get("inputs", []):
            if nodes[source]["op"] == "null" and source not in layers:
                continue  # weights and data are not layers
            previous.append(nodes[source]["name"])
            in_shape = shape_of(source)
            if in_shape:
                channels += int(in_shape[0])
        out_shape = shape_of(index) if (node["op"] != "null" or index in layers) else ()
        params = _param_count(node, channels, out_shape)
        total += params
        row([f"{node['name']}({node['op']})", "x".join(str(d) for d in out_shape), params,
             previous[0] if previous else ""])
        for name in previous[1:]:
            row(["", "", "", name])
        print(("=" if position == len(shown) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)


def _outputs_per_node(symbol: Symbol, nodes: list[dict]) -> list[int]:
    """How many visible outputs each JSON node has (from the internals' output names)."""
    counts = [1] * len(nodes)
    names = {node["name"]: i for i, node in enumerate(nodes) if node["op"] != "null"}
    for output in symbol.get_internals().list_outputs():
        match = re.fullmatch(r"(.*)_output(\d+)", output)
        if match and match.group(1) in names:
            index = names[match.group(1)]
            counts[index] = max(counts[index], int(match.group(2)) + 1)
    return counts


_WEIGHT_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean",
                    "_running_var", "_running_mean")
_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69",
           "#fccde5")


def _label_and_color(node: dict) -> tuple[str, str]:
    """What a box says and its fill colour, by operator (MXNet's choices)."""
    op, attrs = node["op"], node.get("attrs", {})

    def dims(key: str, default: str) -> str:
        return "x".join(_numbers(attrs[key])) if key in attrs else default

    if op == "Convolution":
        return (f"Convolution\n{dims('kernel', '')}/{dims('stride', '1')}, "
                f"{attrs['num_filter']}", _COLORS[1])
    if op == "FullyConnected":
        return f"FullyConnected\n{attrs['num_hidden']}", _COLORS[1]
    if op == "BatchNorm":
        return node["name"], _COLORS[3]
    if op == "Activation":
        return f"Activation\n{attrs['act_type']}", _COLORS[2]
    if op == "LeakyReLU":
        return f"LeakyReLU\n{attrs.get('act_type', 'Leaky')}", _COLORS[2]
    if op == "Pooling":
        return (f"Pooling\n{attrs.get('pool_type', 'max')}, {dims('kernel', '[]')}/"
                f"{dims('stride', '1')}", _COLORS[4])
    if op in ("Concat", "Flatten", "Reshape"):
        return node["name"], _COLORS[5]
    if op == "Softmax":
        return node["name"], _COLORS[6]
    if op == "Custom":
        return attrs.get("op_type", node["name"]), _COLORS[7]
    return node["name"], _COLORS[7]


def plot_network(symbol: Symbol, title: str = "plot", save_format: str = "pdf",
                 shape: Mapping[str, Any] | None = None, dtype: Mapping[str, Any] | None = None,
                 node_attrs: Mapping[str, str] | None = None, hide_weights: bool = True) -> Any:
    """A ``graphviz.Digraph`` of the graph computing ``symbol``.

    Variables are ovals, operators boxes coloured by kind; edges point from
    each input to its consumer and are labelled with the tensor's shape
    (without the batch dimension) when ``shape`` gives input shapes, and
    with its dtype when ``dtype`` gives input dtypes.  ``node_attrs`` adds
    Graphviz node attributes; ``hide_weights`` leaves out variables named
    like parameters (``*_weight``, ``*_bias``, ...).  Two nodes with one
    name draw as one and may make a cycle: a ``RuntimeWarning`` names them.
    """
    try:
        from graphviz import Digraph
    except ImportError as missing:
        raise VisualizationError(
            f"plot_network needs the graphviz Python package ({missing}); install it with "
            f"`pip install graphviz` or `pip install dagnet[viz]` (rendering to a file also "
            f"needs Graphviz's `dot` program)") from missing
    _check_symbol(symbol, "plot_network")
    shapes = _output_shapes(symbol, shape, "plot_network") if shape is not None else None
    types = None
    if dtype is not None:
        internals = symbol.get_internals()
        _, out_types, _ = internals.infer_type(**dtype)
        if out_types is None:
            raise ValueError(f"plot_network: the input dtypes {dict(dtype)} are not enough to "
                             f"infer every dtype")
        types = dict(zip(internals.list_outputs(), out_types, strict=True))
    nodes = json.loads(symbol.tojson())["nodes"]
    names = [node["name"] for node in nodes]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        warnings.warn(
            "There are multiple variables with the same name in your graph, this may result "
            f"in cyclic graph. Repeated names: {','.join(repeated)}", RuntimeWarning,
            stacklevel=2)
    style = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
             "style": "filled", **dict(node_attrs or {})}
    dot = Digraph(name=title, format=save_format)
    hidden = set()
    for node in nodes:
        attrs = dict(style)
        if node["op"] == "null":
            if node["name"].endswith(_WEIGHT_SUFFIXES):
                if hide_weights:
                    hidden.add(node["name"])
                continue
            attrs.update(shape="oval", fillcolor=_COLORS[0])
            label = node["name"]
        else:
            label, attrs["fillcolor"] = _label_and_color(node)
        dot.node(name=node["name"], label=label, **attrs)
    outputs_of = _outputs_per_node(symbol, nodes)
    for node in nodes:
        if node["op"] == "null":
            continue
        inputs = node["inputs"][:1] if node["op"] == "_contrib_BilinearResize2D" \
            else node["inputs"]
        for source, output, *_ in inputs:
            parent = nodes[source]
            if parent["name"] in hidden:
                continue
            key = _entry_key(parent, output, outputs_of[source])
            label = ""  # MXNet's: the shape, then the dtype in brackets ("3x8x8(float32)")
            if shapes is not None and key in shapes:
                label = "x".join(str(d) for d in shapes[key][1:])
            if types is not None and key in types:
                label += f"({getattr(types[key], '__name__', str(types[key]))})"
            dot.edge(tail_name=node["name"], head_name=parent["name"], dir="back",
                     arrowtail="open", label=label)
    return dot
