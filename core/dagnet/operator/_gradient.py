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

A :class:`~dagnet.operator.ComposedGradient` (the rule of a backward operator,
written as operator calls so that gradients can be differentiated again) gets
a step like a :class:`~dagnet.operator.Gradient` when the caller runs such
rules (``composed=True``: autograd, which calls the operators imperatively);
other callers see those nodes refused, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence
from typing import Any, NamedTuple, Protocol

from ._op import ComposedGradient, Gradient, NoGradient, ZeroGradient

__all__ = ["GraphView", "NodeFacts", "BackwardStep", "BackwardPlan", "plan_backward"]

Entry = tuple[Any, int]


class GraphView(Protocol):
    """How :func:`plan_backward` reads one kind of graph."""

    def is_leaf(self, node: Any) -> bool:
        """Whether ``node`` is a variable (it has no operator and no inputs)."""

    def describe(self, node: Any) -> NodeFacts:
        """What the builder needs of an operator node."""


class NodeFacts(NamedTuple):
    """An operator node as the gradient builder sees it.

    ``rule``: the operator's gradient rule (``Gradient``, ``ZeroGradient``,
    ``NoGradient`` or None); ``inputs``: per input, the entry it reads (None: an
    input outside the graph); ``no_gradient``: input positions that take no
    gradient (auxiliary states, mutated inputs); ``visible``: the outputs a head
    gradient is given for; ``outputs``: every output, hidden ones included.
    """

    rule: Any
    inputs: Sequence[Entry | None]
    no_gradient: Collection[int]
    visible: int
    outputs: int


class BackwardStep:
    """The backward of one forward ``node`` under its gradient ``rule``.

    ``reads`` are the backward operator's inputs, in order: ``("out_grad", k)``
    the gradient of output ``k``, ``("in_data", i)`` input ``i``,
    ``("out_data", k)`` output ``k``.  ``targets`` has one item per input that
    takes a gradient, ``(input position, entry)``, in input order; the entry is
    None where that gradient is needed by nobody (the operator still computes
    it: give it ``req=null``).
    """

    __slots__ = ("node", "rule", "reads", "targets")

    def __init__(self, node: Any, rule: Gradient | ComposedGradient,
                 reads: Sequence[tuple[str, int]], targets: list[tuple[int, Entry | None]]):
        self.node = node
        self.rule = rule
        self.reads = reads
        self.targets = targets

    def __repr__(self) -> str:
        what = self.rule.backward if isinstance(self.rule, Gradient) else "composed"
        return f"BackwardStep({self.node!r}, {what!r}, reads={self.reads}, " \
               f"targets={self.targets})"


class BackwardPlan:
    """What the gradient of a graph needs.

    ``steps``: the backward steps, a node's step after those of every node that
    reads it.  ``needed``: the operator nodes on a path from a wanted leaf.
    ``seeded``: the head positions whose gradient enters the graph from outside
    (a loss operator makes its own; a head off every path needs none).
    ``parts``: per entry, how many gradient parts reach it (seeds and step
    targets).  ``zero``: needed nodes whose gradient is zero (their leaves are
    reached, with nothing to add).  ``refused``: needed nodes that cannot be
    differentiated, with the reason.
    """

    __slots__ = ("steps", "needed", "seeded", "parts", "zero", "refused")

    def __init__(self) -> None:
        self.steps: list[BackwardStep] = []
        self.needed: set = set()
        self.seeded: list[int] = []
        self.parts: dict[Hashable, int] = {}
        self.zero: list[Any] = []
        self.refused: list[tuple[Any, str]] = []


def plan_backward(view: GraphView, order: Sequence[Any], heads: Sequence[Entry],
                  wanted: Callable[[Any], bool], composed: bool = False) -> BackwardPlan:
    """The backward plan of the graph ``order`` lists (every node after the nodes it
    reads; leaves may be left out) for the gradients of ``heads`` with respect to
    the leaves ``wanted`` accepts.  ``needed`` holds operator nodes only.
    ``composed``: the caller runs :class:`ComposedGradient` rules (else they are
    refused)."""
    plan = BackwardPlan()
    needed, parts = plan.needed, plan.parts
    is_leaf = view.is_leaf
    facts: dict[Any, NodeFacts] = {}
    taken: dict[Any, bool] = {}  # leaf -> whether its gradient is wanted

    def takes(node: Any) -> bool:  # a gradient flowing into ``node`` is used
        if node in needed:
            return True
        answer = taken.get(node)
        if answer is None:
            answer = taken[node] = is_leaf(node) and bool(wanted(node))
        return answer

    for node in order:
        if is_leaf(node):
            continue
        known = facts[node] = view.describe(node)
        skipped = known.no_gradient
        for position, entry in enumerate(known.inputs):
            if entry is not None and position not in skipped and takes(entry[0]):
                needed.add(node)
                break
    for position, (node, index) in enumerate(heads):
        if takes(node) and (node not in facts or not _makes_head_gradient(facts[node].rule)):
            plan.seeded.append(position)
            parts[(node, index)] = parts.get((node, index), 0) + 1
    for node in reversed(order):
        if node not in needed:
            continue
        rule, inputs, skipped, visible, outputs = facts[node]
        if not _makes_head_gradient(rule) and \
                not any(parts.get((node, k)) for k in range(outputs)):
            # no gradient reaches its outputs (all paths to the heads pass a zero
            # gradient): its inputs' gradients are zero too, with no backward step
            plan.zero.append(node)
            continue
        if not (isinstance(rule, Gradient) or (composed and isinstance(rule, ComposedGradient))):
            if isinstance(rule, ZeroGradient):
                plan.zero.append(node)
            else:
                plan.refused.append((node, _refusal(rule)))
            continue
        targets = []
        for position, entry in enumerate(inputs):
            if position in skipped:
                continue
            if entry is None or not takes(entry[0]):
                entry = None
            else:
                parts[entry] = parts.get(entry, 0) + 1
            targets.append((position, entry))
        reads = _reads(rule.uses, visible, len(inputs), outputs,
                       getattr(rule, "out_data", None))
        plan.steps.append(BackwardStep(node, rule, reads, targets))
    return plan


_reads_cache: dict[tuple, tuple[tuple[str, int], ...]] = {}


def _reads(uses: tuple[str, ...], visible: int, inputs: int, outputs: int,
           out_data: tuple[int, ...] | None = None) -> tuple[tuple[str, int], ...]:
    """What a backward operator reads, in the order ``uses`` names it (kept per shape
    of the answer: graphs repeat the same few); ``out_data`` the outputs it reads where
    not every one."""
    key = (uses, visible, inputs, outputs, out_data)
    reads = _reads_cache.get(key)
    if reads is None:
        which = {"out_grad": range(visible), "in_data": range(inputs),
                 "out_data": range(outputs) if out_data is None else out_data}
        reads = _reads_cache[key] = tuple((use, k) for use in uses for k in which[use])
    return reads


def _makes_head_gradient(rule: Any) -> bool:
    """Whether the rule needs no head gradient: a loss's backward reads none, and a zero
    gradient (BlockGrad, comparisons) makes its inputs' gradients without one, as MXNet's
    executor runs ``backward()`` without out_grads through them."""
    if isinstance(rule, ZeroGradient):
        return True
    return isinstance(rule, (Gradient, ComposedGradient)) and "out_grad" not in rule.uses


def _refusal(rule: Any) -> str:
    """Why a node under ``rule`` gets no backward step."""
    if isinstance(rule, NoGradient):
        return rule.reason
    if isinstance(rule, ComposedGradient):
        return ("its gradient is composed of operator calls (a backward operator's own "
                "gradient, for higher-order gradients), which only autograd runs: use "
                "autograd.grad(..., create_graph=True) for gradients of gradients")
    return "it declares no gradient"
