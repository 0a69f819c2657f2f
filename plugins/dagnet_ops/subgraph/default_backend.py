"""The subgraph backends ``default`` and ``default_v2`` (MXNet's built-in subgraph property,
its first and second selector interface): the connected regions of operators named in the
option ``op_names`` become ``_CachedOp`` nodes named ``_CachedOp<n>``, each running its
region as a subgraph (see :mod:`.partition`).

``op_names`` comes from ``optimize_for(..., op_names=[...])`` or from the backend's
defaults (``dagnet.executor.set_backend_options``, which MXNet's test C API
``MXSetSubgraphPropertyOpNames[V2]`` sets); an empty list partitions nothing.  A name is
matched as the operator it names, aliases included (``_Plus`` is ``elemwise_add``); names
of no registered operator match nothing.  ``dedup_subgraph=True`` gives an entry the region
reads or gives out twice one subgraph input or output.
"""

from __future__ import annotations

from typing import Any

from dagnet import UnknownNameError
from dagnet.operator import get_op

from .partition import partition

__all__ = ["BACKENDS", "NAME", "rewrite"]

NAME = "default_subgraph"
BACKENDS = ("default", "default_v2")
_TRUE = ("true", "1")


def rewrite(graph: Any) -> dict | None:
    """The pass: ``graph`` a :class:`dagnet.executor.BoundGraph`."""
    op_names = graph.options.get("op_names")
    if op_names is None:
        raise ValueError(
            "the default subgraph backends partition the operators named in the option "
            "op_names, and none were given: pass op_names=['exp', ...] to optimize_for (or "
            "hybridize(backend=..., op_names=[...])), or set them with "
            "dagnet.executor.set_backend_options(backend, op_names=[...]) (MXNet's "
            "MXSetSubgraphPropertyOpNamesV2)")
    if isinstance(op_names, str):
        op_names = [name.strip() for name in op_names.split(",") if name.strip()]
    selected = {_canonical(name) for name in op_names}
    if not selected:
        return None
    dedup = str(graph.options.get("dedup_subgraph", False)).strip().lower() in _TRUE
    return partition(graph.json, lambda row: row["op"] in selected, _cached_op, dedup)


def _canonical(name: str) -> str:
    try:
        return get_op(name).name
    except UnknownNameError:
        return name


def _cached_op(subgraph: dict, number: int) -> dict:
    return {"op": "_CachedOp", "name": f"_CachedOp{number}", "subgraphs": [subgraph]}
