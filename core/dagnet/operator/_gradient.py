"""The gradient builder: which backward operators a graph's gradient needs, what each
reads and where each of its results goes -- read from the operators' gradient rules.

The executor's backward graph and autograd's backward pass both come from
:func:`plan_backward`.  It sees a graph through a :class:`GraphView` (the
symbol graph and the recorded graph store their nodes differently) and
returns a :class:`BackwardPlan`; the caller maps the plan onto its memory
(buffers planned ahead for the executor, arrays made on the way for
autograd) and decides how parts of one gradient are summed.

An *entry* is ``(node, output_index)``; leaves (variables) are nodes too,
with one output.  A plan lists, last forward node first, one
:class:`BackwardStep` per node on a path from a wanted leaf to a head: the
backward operator's inputs in the order its rule's ``uses`` name them, and
one target per input that takes a gradient (auxiliary states and mutated
inputs take none).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._op import Gradient, NoGradient, ZeroGradient

__all__ = ["GraphView", "BackwardStep", "BackwardPlan", "plan_backward"]

Entry = tuple[Any, int]


class GraphView(Protocol):
    """How :func:`plan_backward` reads one kind of graph."""

    def is_leaf(self, node: Any) -> bool:
        """Whether ``node`` is a variable (it has no operator and no inputs)."""

    def gradient_rule(self, node: Any) -> Any:
        """The operator's rule: a ``Gradient``, ``ZeroGradient``, ``NoGradient`` or None."""

    def inputs(self, node: Any) -> Sequence[Entry | None]:
        """Per input, the entry it reads (None: an input outside the graph)."""

    def no_gradient_inputs(self, node: Any) -> Collection[int]:
        """Input positions that take no gradient (auxiliary states, mutated inputs)."""

    def num_visible_outputs(self, node: Any) -> int:
        """The outputs a head gradient is given for (hidden outputs excluded)."""

    def num_outputs(self, node: Any) -> int:
        """Every output, hidden ones included."""


@dataclass
class BackwardStep:
    """The backward of one forward ``node`` under its gradient ``rule``.

    ``reads`` are the backward operator's inputs, in order: ``("out_grad", k)``
    the gradient of output ``k``, ``("in_data", i)`` input ``i``,
    ``("out_data", k)`` output ``k``.  ``targets`` has one item per input that
    takes a gradient, ``(input position, entry)``, in input order; the entry is
    None where that gradient is needed by nobody (the operator still computes
    it: give it ``req=null``).
    """

    node: Any
    rule: Gradient
    reads: list[tuple[str, int]]
    targets: list[tuple[int, Entry | None]]


@dataclass
class BackwardPlan:
    """What the gradient of a graph needs.

    ``steps``: the backward steps, a node's step after those of every node that
    reads it.  ``needed``: the operator nodes on a path from a wanted leaf.  ``seeded``:
    the head positions whose gradient enters the graph from outside (a loss
    operator makes its own; a head off every path needs none).  ``parts``: per entry, how many
    gradient parts reach it (seeds and step targets).  ``zero``: needed nodes
    whose gradient is zero (their leaves are reached, with nothing to add).
    ``refused``: needed nodes that cannot be differentiated, with the reason.
    """

    steps: list[BackwardStep] = field(default_factory=list)
    needed: set = field(default_factory=set)
    seeded: list[int] = field(default_factory=list)
    parts: dict[Hashable, int] = field(default_factory=dict)
    zero: list[Any] = field(default_factory=list)
    refused: list[tuple[Any, str]] = field(default_factory=list)


def plan_backward(view: GraphView, order: Sequence[Any], heads: Sequence[Entry],
                  wanted: Callable[[Any], bool]) -> BackwardPlan:
    """The backward plan of the graph ``order`` lists (every node after the nodes it
    reads; leaves may be left out) for the gradients of ``heads`` with respect to
    the leaves ``wanted`` accepts.  ``needed`` holds operator nodes only."""
    plan = BackwardPlan()
    needed = plan.needed

    def takes(node: Any) -> bool:  # a gradient flowing into ``node`` is used
        return node in needed or (view.is_leaf(node) and wanted(node))

    for node in order:
        if view.is_leaf(node):
            continue
        skipped = view.no_gradient_inputs(node)
        if any(entry is not None and position not in skipped and takes(entry[0])
               for position, entry in enumerate(view.inputs(node))):
            needed.add(node)
    parts = plan.parts
    for position, (node, index) in enumerate(heads):
        if takes(node) and (view.is_leaf(node)
                            or not _makes_head_gradient(view.gradient_rule(node))):
            plan.seeded.append(position)
            parts[(node, index)] = parts.get((node, index), 0) + 1
    for node in reversed(order):
        if view.is_leaf(node) or node not in needed:
            continue
        rule = view.gradient_rule(node)
        if isinstance(rule, ZeroGradient):
            plan.zero.append(node)
            continue
        if not isinstance(rule, Gradient):
            reason = rule.reason if isinstance(rule, NoGradient) else "it declares no gradient"
            plan.refused.append((node, reason))
            continue
        reads = []
        for use in rule.uses:
            if use == "out_grad":
                reads.extend((use, k) for k in range(view.num_visible_outputs(node)))
            elif use == "in_data":
                reads.extend((use, i) for i in range(len(view.inputs(node))))
            else:
                reads.extend((use, k) for k in range(view.num_outputs(node)))
        skipped = view.no_gradient_inputs(node)
        targets = []
        for position, entry in enumerate(view.inputs(node)):
            if position in skipped:
                continue
            if entry is None or not takes(entry[0]):
                entry = None
            else:
                parts[entry] = parts.get(entry, 0) + 1
            targets.append((position, entry))
        plan.steps.append(BackwardStep(node, rule, reads, targets))
    return plan


def _makes_head_gradient(rule: Any) -> bool:
    """Whether the rule is a loss's: its backward reads no head gradient."""
    return isinstance(rule, Gradient) and "out_grad" not in rule.uses
