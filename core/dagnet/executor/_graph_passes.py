"""Graph passes: rewrites of a symbol that plugins register, run when an executor is bound.

A pass (``dagnet_register_graph_passes``, MXNet's subgraph backends) sees the graph as
MXNet's symbol JSON with every node's output shapes and dtypes and the device, and returns
a rewritten JSON or None.  What it returns must keep the graph's interface: the same
arguments and auxiliary states in the same order and the same outputs with the same
shapes and dtypes; the executor then plans and runs the rewritten graph
(``Executor.get_optimized_symbol`` shows it) while its arrays, outputs and names stay
those of the bound symbol.  Passes run in name order while config ``graph_passes`` is on,
except those config ``disabled_graph_passes`` names.

A pass may serve subgraph backends (MXNet's names for sets of rewrites, ``MKLDNN``,
``default``): :func:`dagnet.executor.optimize_for` (``Symbol.optimize_for``) runs the passes
of the backend it is given, and a bind runs those of config ``subgraph_backend``
(``MXNET_SUBGRAPH_BACKEND``) instead of the every-bind passes -- except binds made while a
kernel runs (an operator running its subgraph: that graph is the node's, partitioned or not
by the user already).  Backend options reach a pass as ``BoundGraph.options``:
``optimize_for``'s keyword arguments over the defaults :func:`set_backend_options` keeps.

A graph bound for inference (``BoundGraph.for_training`` false: no argument has a
gradient, and the executor runs it with ``is_train=False``) may be rewritten in ways that
only hold there (BatchNorm folded into a convolution, Dropout dropped); the executor runs
the graph the passes give for training whenever it is asked for a training-mode pass.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from .. import config, engine, plugins
from .._errors import PluginError
from ..context import Context

__all__ = ["BoundGraph", "GraphPassError", "backend_options", "clear_backend_options",
           "disabled_graph_passes", "run_graph_passes", "set_backend_options"]

_NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


class BoundGraph(NamedTuple):
    """What a graph pass sees of a graph being bound.

    ``json``: the symbol as MXNet 1.x symbol JSON (a dict: ``nodes`` in graph order,
    ``arg_nodes``, ``heads``); ``shapes`` and ``dtypes``: per node of ``json["nodes"]``, the
    shape (a tuple) and numpy dtype of each of its outputs, hidden ones included (None
    where unknown: ``optimize_for`` without the arrays); ``ctx``: the device the executor
    binds to; ``options``: the backend options (``optimize_for``'s keyword arguments),
    empty for the every-bind passes; ``for_training``: whether the graph may run in
    training mode or be differentiated (false only for a graph bound for inference, or
    one ``optimize_for`` rewrites).
    """

    json: dict
    shapes: list[list[tuple[int, ...] | None]]
    dtypes: list[list[Any]]
    ctx: Context
    options: Mapping[str, Any] = _NO_OPTIONS
    for_training: bool = True


class GraphPassError(PluginError):
    """A graph pass failed, or returned a graph that does not keep the bound one's
    interface."""


_OFF = "turn graph passes off with dagnet.config.set(graph_passes=False) or DAGNET_GRAPH_PASSES=0"


# backend -> default options, for optimize_for (MXNet's subgraph property attributes) and,
# apart, for binds that run the backend (MXNet's SubgraphPropertyOpNameSet)
_options: dict[tuple[str, bool], dict[str, Any]] = {}
_options_lock = threading.Lock()


def set_backend_options(backend: str, *, at_bind: bool = False, **options: Any) -> None:
    """Default options for the passes of ``backend``: those :func:`optimize_for` hands
    them under its own keyword arguments, or, with ``at_bind``, those a bind running the
    backend (config ``subgraph_backend``) hands them.  MXNet's test C API sets the
    ``default`` backend's ``op_names`` this way."""
    with _options_lock:
        _options.setdefault((backend, at_bind), {}).update(options)


def clear_backend_options(backend: str, *names: str, at_bind: bool = False) -> None:
    """Forget the defaults :func:`set_backend_options` gave ``backend``: those ``names``,
    or all of them."""
    with _options_lock:
        if not names:
            _options.pop((backend, at_bind), None)
        for name in names:
            _options.get((backend, at_bind), {}).pop(name, None)


def backend_options(backend: str, *, at_bind: bool = False) -> dict[str, Any]:
    """The defaults :func:`set_backend_options` gave ``backend`` (a copy)."""
    with _options_lock:
        return dict(_options.get((backend, at_bind), {}))


_NO_BACKEND = "NONE"  # MXNET_SUBGRAPH_BACKEND=NONE: no subgraph backend, no pass


def disabled_graph_passes() -> frozenset[str]:
    """The names config ``disabled_graph_passes`` (``DAGNET_DISABLED_GRAPH_PASSES``) lists."""
    text = config.get("disabled_graph_passes")
    return frozenset(name.strip() for name in text.split(",") if name.strip())


def run_graph_passes(symbol: Any, shapes: dict, dtypes: dict, ctx: Context,
                     infer: Callable[[Any], tuple[dict, dict]], *, backend: str | None = None,
                     options: Mapping[str, Any] | None = None, for_training: bool = True,
                     fix: str = _OFF) -> tuple[Any, dict, dict]:
    """``(symbol, shapes, dtypes)`` after the passes a bind runs, or, given ``backend``
    (``optimize_for``), after that backend's passes with ``options``: entry shapes and
    dtypes keyed as ``symbol._infer_shape_entries`` keys them (None where unknown),
    ``infer(symbol)`` giving them for a rewritten symbol; ``for_training`` as
    :class:`BoundGraph` says; ``fix`` says, in errors, how to do without the passes.
    Passes config ``disabled_graph_passes`` names are left out either way."""
    if backend is None:  # a bind
        if not config.get("graph_passes"):
            return symbol, shapes, dtypes
        backend = "" if engine.inline_active() else config.get("subgraph_backend")
        if backend == _NO_BACKEND:
            return symbol, shapes, dtypes
        options = backend_options(backend, at_bind=True) if backend else {}
    registry = plugins.graph_passes()
    chosen = registry.for_backend(backend) if backend else registry.on_bind()
    disabled = disabled_graph_passes()
    options = MappingProxyType(dict(options or {}))
    text = text_of = None  # the symbol's JSON, written again only once a pass changed it
    for registration in chosen:
        name = registration.name
        if name in disabled:
            continue
        if text_of is not symbol:
            text, text_of = symbol.tojson(), symbol
        nodes = symbol._nodes()
        graph = BoundGraph(
            json.loads(text),
            [[_known(shapes.get((n, k))) for k in range(n.num_outputs())] for n in nodes],
            [[dtypes.get((n, k)) for k in range(n.num_outputs())] for n in nodes], ctx,
            options, for_training)
        where = f"graph pass {name!r} from {registration.provider}"
        try:
            rewritten_json = registration.value(graph)
        except Exception as error:
            raise GraphPassError(f"{where} failed: {type(error).__name__}: {error}; {fix}"
                                 ) from error
        if rewritten_json is None:
            continue
        rewritten = _load(rewritten_json, where, fix)
        _check_inputs(symbol, rewritten, where, fix)
        try:
            new_shapes, new_dtypes = infer(rewritten)
        except Exception as error:
            raise GraphPassError(f"{where} returned a graph whose shapes or dtypes do not "
                                 f"follow: {error}; {fix}") from error
        _check_outputs(symbol, shapes, dtypes, rewritten, new_shapes, new_dtypes, where, fix)
        symbol, shapes, dtypes = rewritten, new_shapes, new_dtypes
    return symbol, shapes, dtypes


def _known(shape: Any) -> tuple[int, ...] | None:
    return None if shape is None else tuple(shape)


def _load(graph_json: Any, where: str, fix: str) -> Any:
    from ..symbol import load_json

    try:
        return load_json(json.dumps(graph_json))
    except Exception as error:
        raise GraphPassError(f"{where} returned a graph that does not load: {error}; {fix}"
                             ) from error


def _check_inputs(before: Any, after: Any, where: str, fix: str) -> None:
    for what in ("list_arguments", "list_auxiliary_states"):
        old, new = getattr(before, what)(), getattr(after, what)()
        if old != new:
            raise GraphPassError(f"{where} changed the graph's {what}() from {old} to {new}; "
                                 f"{fix}")


def _check_outputs(before: Any, shapes: dict, dtypes: dict, after: Any, new_shapes: dict,
                   new_dtypes: dict, where: str, fix: str) -> None:
    old_heads, new_heads = before._outputs, after._outputs
    if len(old_heads) != len(new_heads):
        raise GraphPassError(f"{where} changed the number of outputs from {len(old_heads)} to "
                             f"{len(new_heads)}; {fix}")
    for position, (old, new) in enumerate(zip(old_heads, new_heads)):
        was = (_known(shapes.get(old)), dtypes.get(old))
        now = (_known(new_shapes.get(new)), new_dtypes.get(new))
        # what optimize_for did not know before, it cannot hold the pass to
        if any(known is not None and known != value for known, value in zip(was, now)):
            raise GraphPassError(f"{where} changed output {position} from shape {was[0]} "
                                 f"{was[1]} to {now[0]} {now[1]}; {fix}")
