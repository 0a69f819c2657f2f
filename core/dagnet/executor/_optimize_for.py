"""``Symbol.optimize_for(backend, ...)``: a symbol rewritten by the graph passes that serve a
subgraph backend (MXNet's ``MXOptimizeForBackend``), without binding it.

Given the arrays (``args``, ``aux``) or ``shape_dict``/``type_dict``, the passes see the
graph's inferred shapes and dtypes, as at a bind; without them every shape and dtype is
unknown (None), as MXNet partitions then.  The passes keep the graph's interface (see
:mod:`._graph_passes`), so the arrays bound to the symbol fit the rewritten one too.

As in MXNet, whose ``MKLDNN`` backend folds BatchNorm and fuses layers without a gradient,
the passes rewrite for inference (``BoundGraph.for_training`` false).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .. import plugins
from .._argcheck import ArgumentTypeError
from ..context import Context, current_context
from ._graph_passes import backend_options, run_graph_passes

__all__ = ["optimize_for"]


def optimize_for(symbol: Any, backend: str, args: Mapping[str, Any] | None = None,
                 aux: Mapping[str, Any] | None = None, ctx: Context | None = None,
                 shape_dict: Mapping[str, Any] | None = None,
                 type_dict: Mapping[str, Any] | None = None, skip_infer: bool = False,
                 **options: Any) -> Any:
    """``symbol`` after the graph passes serving ``backend``, run in name order; each sees
    ``options`` over the backend's defaults (``set_backend_options``).  ``args``/``aux``
    (name -> NDArray) and ``shape_dict``/``type_dict`` (for inputs without an array) give
    the passes shapes and dtypes unless ``skip_infer``."""
    if not isinstance(backend, str):
        raise ArgumentTypeError(f"optimize_for: backend must be a subgraph backend's name, a "
                                f"str, got {type(backend).__name__} {backend!r}")
    for what, value in (("args", args), ("aux", aux), ("shape_dict", shape_dict),
                        ("type_dict", type_dict)):
        if value is not None and not isinstance(value, Mapping):
            raise ArgumentTypeError(f"optimize_for: {what} must be a dict by input name (or "
                                    f"None), got {type(value).__name__}")
    chosen = plugins.graph_passes().for_backend(backend)
    ctx = current_context() if ctx is None else ctx
    if not isinstance(ctx, Context):
        raise ArgumentTypeError(f"optimize_for: ctx must be a device context such as "
                                f"mx.cpu(), got {type(ctx).__name__} {ctx!r}")
    shapes: dict[str, Any] = {}
    dtypes: dict[str, Any] = {}
    if not skip_infer:
        inputs = set(symbol.list_inputs())
        for given in (args, aux):
            for name, array in (given or {}).items():
                if name in inputs and array is not None:
                    shapes[name], dtypes[name] = tuple(array.shape), array.dtype
        for name, shape in (shape_dict or {}).items():
            if name in inputs:
                shapes.setdefault(name, tuple(shape))
        for name, dtype in (type_dict or {}).items():
            if name in inputs:
                dtypes.setdefault(name, dtype)

    def infer(graph: Any) -> tuple[dict, dict]:
        if not shapes and not dtypes:  # nothing given: nothing is known, as in MXNet
            return {}, {}
        return graph._infer_shape_entries(**shapes)[0], graph._infer_type_entries(**dtypes)[0]

    entry_shapes, entry_dtypes = infer(symbol)
    fix = (f"optimize_for ran the graph passes of subgraph backend {backend!r} "
           f"({', '.join(r.name for r in chosen)}); bind the symbol without optimize_for, or "
           f"report the error to the author of the plugin")
    optimized = run_graph_passes(symbol, entry_shapes, entry_dtypes, ctx, infer,
                                 backend=backend, options={**backend_options(backend),
                                                           **options},
                                 for_training=False, fix=fix)[0]
    # a new symbol either way, as MXNet's: composing it later leaves ``symbol`` alone
    return copy.copy(optimized) if optimized is symbol else optimized
