"""Graph passes: rewrites of a symbol that plugins register, run when an executor is bound.

A pass (``dagnet_register_graph_passes``, MXNet's subgraph backends) sees the graph as
MXNet's symbol JSON with every node's output shapes and dtypes and the device, and returns
a rewritten JSON or None.  What it returns must keep the graph's interface: the same
arguments and auxiliary states in the same order and the same outputs with the same
shapes and dtypes; the executor then plans and runs the rewritten graph
(``Executor.get_optimized_symbol`` shows it) while its arrays, outputs and names stay
those of the bound symbol.  Passes run in name order while config ``graph_passes`` is on,
except those config ``disabled_graph_passes`` names.

A graph bound for inference (``BoundGraph.for_training`` false: no argument has a
gradient, and the executor runs it with ``is_train=False``) may be rewritten in ways that
only hold there (BatchNorm folded into a convolution, Dropout dropped); the executor runs
the graph the passes give for training whenever it is asked for a training-mode pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from .. import config, plugins
from .._errors import PluginError
from ..context import Context

__all__ = ["BoundGraph", "GraphPassError", "run_graph_passes", "disabled_graph_passes"]


class BoundGraph(NamedTuple):
    """What a graph pass sees of a graph being bound.

    ``json``: the symbol as MXNet 1.x symbol JSON (a dict: ``nodes`` in graph order,
    ``arg_nodes``, ``heads``); ``shapes`` and ``dtypes``: per node of ``json["nodes"]``, the
    shape (a tuple) and numpy dtype of each of its outputs, hidden ones included;
    ``ctx``: the device the executor binds to; ``for_training``: whether the graph may run
    in training mode or be differentiated (false only for a graph bound for inference).
    """

    json: dict
    shapes: list[list[tuple[int, ...]]]
    dtypes: list[list[Any]]
    ctx: Context
    for_training: bool = True


class GraphPassError(PluginError):
    """A graph pass failed, or returned a graph that does not keep the bound one's
    interface."""


_OFF = "turn graph passes off with dagnet.config.set(graph_passes=False) or DAGNET_GRAPH_PASSES=0"


def disabled_graph_passes() -> frozenset[str]:
    """The names config ``disabled_graph_passes`` (``DAGNET_DISABLED_GRAPH_PASSES``) lists."""
    text = config.get("disabled_graph_passes")
    return frozenset(name.strip() for name in text.split(",") if name.strip())


def run_graph_passes(symbol: Any, shapes: dict, dtypes: dict, ctx: Context,
                     infer: Callable[[Any], tuple[dict, dict]], for_training: bool = True
                     ) -> tuple[Any, dict, dict]:
    """``(symbol, shapes, dtypes)`` after every registered pass: entry shapes and dtypes
    keyed as ``symbol._infer_shape_entries`` keys them, ``infer(symbol)`` giving them for
    a rewritten symbol; ``for_training`` as :class:`BoundGraph` says."""
    if not config.get("graph_passes"):
        return symbol, shapes, dtypes
    registry = plugins.graph_passes()
    disabled = disabled_graph_passes()
    for name in sorted(registry):
        if name in disabled:
            continue
        registration = registry.registration(name)
        nodes = symbol._nodes()
        graph = BoundGraph(
            json.loads(symbol.tojson()),
            [[tuple(shapes[(n, k)]) for k in range(n.num_outputs())] for n in nodes],
            [[dtypes[(n, k)] for k in range(n.num_outputs())] for n in nodes], ctx,
            for_training)
        where = f"graph pass {name!r} from {registration.provider}"
        try:
            rewritten_json = registration.value(graph)
        except Exception as error:
            raise GraphPassError(f"{where} failed: {type(error).__name__}: {error}; {_OFF}"
                                 ) from error
        if rewritten_json is None:
            continue
        rewritten = _load(rewritten_json, where)
        _check_inputs(symbol, rewritten, where)
        try:
            new_shapes, new_dtypes = infer(rewritten)
        except Exception as error:
            raise GraphPassError(f"{where} returned a graph whose shapes or dtypes do not "
                                 f"follow: {error}; {_OFF}") from error
        _check_outputs(symbol, shapes, dtypes, rewritten, new_shapes, new_dtypes, where)
        symbol, shapes, dtypes = rewritten, new_shapes, new_dtypes
    return symbol, shapes, dtypes


def _load(graph_json: Any, where: str) -> Any:
    from ..symbol import load_json

    try:
        return load_json(json.dumps(graph_json))
    except Exception as error:
        raise GraphPassError(f"{where} returned a graph that does not load: {error}; {_OFF}"
                             ) from error


def _check_inputs(before: Any, after: Any, where: str) -> None:
    for what in ("list_arguments", "list_auxiliary_states"):
        old, new = getattr(before, what)(), getattr(after, what)()
        if old != new:
            raise GraphPassError(f"{where} changed the graph's {what}() from {old} to {new}; "
                                 f"{_OFF}")


def _check_outputs(before: Any, shapes: dict, dtypes: dict, after: Any, new_shapes: dict,
                   new_dtypes: dict, where: str) -> None:
    old_heads, new_heads = before._outputs, after._outputs
    if len(old_heads) != len(new_heads):
        raise GraphPassError(f"{where} changed the number of outputs from {len(old_heads)} to "
                             f"{len(new_heads)}; {_OFF}")
    for position, (old, new) in enumerate(zip(old_heads, new_heads)):
        was = (tuple(shapes[old]), dtypes[old])
        now = (tuple(new_shapes[new]), new_dtypes[new])
        if was != now:
            raise GraphPassError(f"{where} changed output {position} from shape {was[0]} "
                                 f"{was[1]} to {now[0]} {now[1]}; {_OFF}")
