"""Memory planning: which storage block each inner buffer of a graph lives in.

Planning follows the operators' declarations, as MXNet's ``PlanMemory`` pass:

- *in place*: an output may take over the block of an input the operator
  declares it can overwrite (``Op.inplace``), when that input is an inner
  buffer of the same shape and dtype that nothing reads after the operator --
  no later node, and no backward step (``Gradient.uses`` lists what backward
  reads) -- and the operator reads that block at no other input.  Earlier
  readers (a residual network's shortcut, read by the block's first
  convolution and added by its last) are done by then: the engine runs a
  write after the reads pushed before it, as MXNet's planner counts the
  references left;
- *reuse*: a block returns to the free list once the last step reading or
  writing its buffers has been pushed, and a later buffer takes the
  smallest free block that fits (or grows the largest one) -- among the
  blocks whose every earlier user is an ancestor of the step that writes
  the new tenant.

A block lives on one device: a buffer only takes a block of its own device
(with ``group2ctx`` one graph spans several).

Reusing a block is safe because a block is one chunk with one engine
variable: a step writing the new tenant is ordered after every earlier
step using the old one.  That ordering costs nothing when those steps are
the writer's ancestors anyway; a block used by a parallel branch would
chain the branches one after the other, so it is not offered (MXNet's
planner keeps parallel branches apart the same way, by colouring the
graph).  With planning off every inner buffer gets its own block; the
results are identical either way.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..context import Context
from ..operator import OpReqType
from ._graph import INNER, Graph

__all__ = ["Plan", "plan_memory"]


@dataclass
class Plan:
    """The plan: ``storage_of`` maps inner buffers to blocks; ``sizes[i]`` is block
    ``i``'s byte size and ``devices[i]`` its device (the first ``num_shared`` blocks
    come from a shared executor);
    ``inplace`` holds ``(step, output position)`` pairs computed in place;
    ``live_peak_bytes`` is the most inner bytes alive at one step, the floor for
    any plan without in-place sharing."""

    enabled: bool
    storage_of: dict[int, int] = field(default_factory=dict)
    sizes: list[int] = field(default_factory=list)
    devices: list[Context] = field(default_factory=list)
    num_shared: int = 0
    inplace: set[tuple[int, int]] = field(default_factory=set)
    live_peak_bytes: int = 0

    @property
    def allocated_bytes(self) -> int:
        """Bytes of the blocks this plan allocates (shared blocks excluded)."""
        return sum(self.sizes[self.num_shared:])


def plan_memory(graph: Graph, enabled: bool,
                shared_blocks: Sequence[tuple[int, Context]] = ()) -> Plan:
    """Assign every inner buffer of ``graph`` a block.  ``shared_blocks`` are the
    (byte size, device) of the blocks of an executor to share with (reused, never
    grown); they are used only when planning is ``enabled``."""
    buffers, steps = graph.buffers, graph.steps
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for s, step in enumerate(steps):
        for b in (*step.inputs, *step.outputs):
            if buffers[b].kind == INNER:
                first.setdefault(b, s)
                last[b] = s
    plan = Plan(enabled, live_peak_bytes=_live_peak(buffers, first, last, len(steps)))
    if not enabled:
        for b in sorted(first, key=first.get):
            plan.storage_of[b] = len(plan.sizes)
            plan.sizes.append(buffers[b].nbytes)
            plan.devices.append(buffers[b].device)
        return plan
    plan.sizes = [size for size, _ in shared_blocks]
    plan.devices = [device for _, device in shared_blocks]
    plan.num_shared = len(plan.sizes)
    storage_last = [-1] * plan.num_shared
    block_users = [0] * plan.num_shared  # bit s set: step s uses a buffer of the block
    free = _FreeBlocks()
    for st in range(plan.num_shared):
        free.add(plan.devices[st], plan.sizes[st], st)
    ending: dict[int, list[int]] = {}
    for b, s in last.items():
        ending.setdefault(s, []).append(b)
    ancestors = _ancestors(graph)
    users = _users(graph)

    def take(b: int, s: int) -> int:
        need, device = buffers[b].nbytes, buffers[b].device
        # a free block on the buffer's device whose earlier users the writer waits for
        # anyway: the smallest that fits, else the largest that may grow, else a new one
        others = ~ancestors[s]
        found = free.best(device, need, lambda st: not block_users[st] & others,
                          lambda st: st >= plan.num_shared)
        if found is not None:
            st = found
            free.remove(device, plan.sizes[st], st)
            plan.sizes[st] = max(plan.sizes[st], need)
        else:
            st = len(plan.sizes)
            plan.sizes.append(need)
            plan.devices.append(device)
            storage_last.append(-1)
            block_users.append(0)
        return st

    for s, step in enumerate(steps):
        claimed: set[int] = set()
        for b in step.inputs:  # an inner buffer read before any write: give it a block
            if buffers[b].kind == INNER and b not in plan.storage_of:
                st = plan.storage_of[b] = take(b, s)
                storage_last[st] = max(storage_last[st], last[b])
                block_users[st] |= users[b]
        for position, b in enumerate(step.outputs):
            if buffers[b].kind != INNER or b in plan.storage_of:
                continue
            st = None
            if step.reqs[position] is OpReqType.WRITE:
                st = _inplace_source(step, position, b, buffers, plan, last, storage_last,
                                     claimed, s)
            if st is None:
                st = take(b, s)
            else:
                plan.inplace.add((s, position))
                claimed.add(st)
            plan.storage_of[b] = st
            storage_last[st] = max(storage_last[st], last[b])
            block_users[st] |= users[b]
        for b in ending.get(s, ()):
            st = plan.storage_of[b]
            if storage_last[st] == s:
                free.add(plan.devices[st], plan.sizes[st], st)
    return plan


class _FreeBlocks:
    """The free blocks of each device, ordered by size, so that a request looks at
    the fitting ones first (in a large graph thousands of blocks may be free)."""

    def __init__(self) -> None:
        self._by_device: dict[Context, list[tuple[int, int]]] = {}  # sorted (size, block)
        self._members: set[int] = set()

    def add(self, device: Context, size: int, st: int) -> None:
        if st not in self._members:
            self._members.add(st)
            bisect.insort(self._by_device.setdefault(device, []), (size, st))

    def remove(self, device: Context, size: int, st: int) -> None:
        blocks = self._by_device[device]
        del blocks[bisect.bisect_left(blocks, (size, st))]
        self._members.discard(st)

    def best(self, device: Context, need: int, usable: Callable[[int], bool],
             growable: Callable[[int], bool]) -> int | None:
        """The smallest usable block of at least ``need`` bytes, else the largest usable
        growable one, else None."""
        blocks = self._by_device.get(device, [])
        start = bisect.bisect_left(blocks, (need, -1))
        for _, st in blocks[start:]:
            if usable(st):
                return st
        for _, st in reversed(blocks[:start]):
            if growable(st) and usable(st):
                return st
        return None


def _ancestors(graph: Graph) -> list[int]:
    """Per step, a bit mask of the steps it runs after through its buffers (what it
    reads, and what last wrote a buffer it writes again)."""
    writer: dict[int, int] = {}
    result = []
    for s, step in enumerate(graph.steps):
        mask = 0
        for b in (*step.inputs, *step.outputs, *step.mutated):
            p = writer.get(b)
            if p is not None:
                mask |= result[p] | (1 << p)
        result.append(mask)
        for b in (*step.outputs, *step.mutated):
            writer[b] = s
    return result


def _users(graph: Graph) -> dict[int, int]:
    """Per buffer, a bit mask of the steps that read or write it."""
    masks: dict[int, int] = {}
    for s, step in enumerate(graph.steps):
        for b in (*step.inputs, *step.outputs, *step.mutated):
            masks[b] = masks.get(b, 0) | (1 << s)
    return masks


def _inplace_source(step, position, b, buffers, plan, last, storage_last, claimed,
                    s) -> int | None:
    """The block of an input that output ``position`` of ``step`` may overwrite, or None:
    one whose last user is ``step`` and that ``step`` reads at that input only."""
    out = buffers[b]
    for i, o in step.inplace:
        if o != position or i >= len(step.inputs):
            continue
        source = step.inputs[i]
        src = buffers[source]
        st = plan.storage_of.get(source)
        if (src.kind == INNER and st is not None and st not in claimed
                and last[source] == s and storage_last[st] == s
                and sum(plan.storage_of.get(other) == st for other in step.inputs) == 1
                and (src.shape, src.dtype, src.device) == (out.shape, out.dtype, out.device)):
            return st
    return None


def _live_peak(buffers, first: dict[int, int], last: dict[int, int], num_steps: int) -> int:
    delta = [0] * (num_steps + 1)
    for b, s in first.items():
        delta[s] += buffers[b].nbytes
        delta[last[b] + 1] -= buffers[b].nbytes
    peak = live = 0
    for change in delta:
        live += change
        peak = max(peak, live)
    return peak
