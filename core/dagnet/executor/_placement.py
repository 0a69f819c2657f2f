"""Model parallelism: which device each node of a bound symbol runs on (MXNet's
``PlaceDevice`` pass with ``group2ctx``).

A node built inside ``AttrScope(ctx_group='dev1')`` carries the attribute
``__ctx_group__``; ``bind(..., group2ctx={'dev1': mx.cpu(1)})`` runs it on that
group's device.  The rules, in MXNet's order:

1. a variable lives where its array is (``simple_bind`` allocates a grouped
   variable on its group's device, every other one on the bound context);
2. a node with a group runs on its group's device -- a group that ``group2ctx``
   does not name is an error;
3. a node without one runs where its first input lives;
4. a node with no inputs and no group (``zeros``, a sampler) runs where its first
   consumer does, and failing that on the bound context.

Without ``group2ctx`` groups mean nothing and every node runs on the bound
context.  Where an edge crosses devices the executor inserts a copy
(:mod:`._cross_device`); the backward step of a node runs on that node's device.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._errors import ContextError
from ..context import Context

__all__ = ["GROUP_ATTR", "check_group2ctx", "input_contexts", "place_nodes"]

GROUP_ATTR = "__ctx_group__"


def check_group2ctx(group2ctx: Any) -> dict[str, Context]:
    """``group2ctx`` as a dict of group name -> Context (empty for None), or an error
    naming the entry that is not a context."""
    if group2ctx is None:
        return {}
    if not isinstance(group2ctx, Mapping):
        raise ContextError(f"group2ctx must be a dict of group name -> context such as "
                           f"{{'dev1': mx.cpu(1)}}, got {type(group2ctx).__name__}")
    for group, ctx in group2ctx.items():
        if not isinstance(ctx, Context):
            raise ContextError(f"group2ctx[{group!r}] must be one context such as mx.cpu(1), "
                               f"got {type(ctx).__name__} {ctx!r}")
    return dict(group2ctx)


def _group_context(node: Any, group2ctx: Mapping[str, Context]) -> Context | None:
    """The device of ``node``'s group (None without a group), or an error for a group
    ``group2ctx`` does not name."""
    group = node.attr.get(GROUP_ATTR)
    if group is None:
        return None
    ctx = group2ctx.get(group)
    if ctx is None:
        raise ContextError(
            f"node {node.name!r} belongs to ctx_group {group!r}, which group2ctx does not "
            f"assign a device (it assigns {', '.join(map(repr, sorted(group2ctx)))}); add "
            f"{group!r}: <context> to group2ctx")
    return ctx


def input_contexts(arg_nodes: Sequence[Any], aux_nodes: Sequence[Any], ctx: Context,
                   group2ctx: Mapping[str, Context] | None) -> tuple[list[Context], list[Context]]:
    """Where ``simple_bind`` allocates each argument and auxiliary state (variable nodes):
    on its group's device when ``group2ctx`` names the group, otherwise on ``ctx``."""
    group2ctx = group2ctx or {}

    def where(node: Any) -> Context:
        return group2ctx.get(node.attr.get(GROUP_ATTR), ctx)

    return [where(n) for n in arg_nodes], [where(n) for n in aux_nodes]


def place_nodes(symbol: Any, ctx: Context, group2ctx: Mapping[str, Context],
                arg_ctxs: Sequence[Context], aux_ctxs: Sequence[Context]) -> dict[int, Context]:
    """The device of every node of ``symbol`` (by ``id``), given the devices of its
    arguments and auxiliary states (in ``list_arguments`` / ``list_auxiliary_states``
    order) and the groups' devices; see the module's rules."""
    nodes = symbol._nodes()
    arg_nodes, aux_nodes = symbol._variables(nodes)
    placed: dict[int, Context] = {}
    for node, where in zip(arg_nodes + aux_nodes, list(arg_ctxs) + list(aux_ctxs)):
        placed[id(node)] = where
    if not group2ctx:
        return {id(n): placed.get(id(n), ctx) for n in nodes}
    for node in nodes:
        if node.op is None:
            _group_context(node, group2ctx)  # a variable's group must be known too, as in MXNet
            continue
        where = _group_context(node, group2ctx)
        if where is None:
            where = next((placed[id(n)] for n, _ in node.inputs if id(n) in placed), None)
        if where is not None:
            placed[id(node)] = where
    for node in reversed(nodes):  # inputs nothing placed go where their consumer runs
        where = placed.get(id(node))
        if where is not None:
            for source, _ in node.inputs:
                placed.setdefault(id(source), where)
    return {id(n): placed.get(id(n), ctx) for n in nodes}
