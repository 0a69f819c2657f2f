"""Copies where an edge of the bound graph crosses devices (the copy nodes MXNet's
``PlaceDevice`` pass inserts, ``_CrossDeviceCopy``).

After placement every buffer and step has a device.  A step reading a buffer
that lives elsewhere reads a copy of it on its own device instead; the copy
is a step of its own, pushed to the engine like any other, so it runs after
the buffer's writer and before its readers.  One copy serves every reader on
that device until the buffer is written again (a gradient summed from several
parts is copied once it is complete).

A step writing a buffer that lives elsewhere (a consumer's backward step adding
its part of the gradient of an entry produced on another device, or an
argument's gradient array bound on another device) writes a buffer on its own
device, which is then copied (``req=write``) or copied and added (``req=add``)
into the target.  Inputs an operator updates in place (auxiliary states)
cannot cross devices.
"""

from __future__ import annotations

import dataclasses

from .._errors import ContextError
from ..context import Context
from ..operator import OpReqType
from ._graph import ADD, COPY, CROSS_COPY, INNER, Buffer, Graph, Step

__all__ = ["bridge_devices"]

_WRITE, _ADD, _NULL = OpReqType.WRITE, OpReqType.ADD, OpReqType.NULL


def bridge_devices(graph: Graph) -> Graph:
    """``graph`` with a copy on every edge that crosses devices; a graph on one device
    comes back as it is."""
    if len({b.device for b in graph.buffers} | {s.device for s in graph.steps}) <= 1:
        return graph
    bridge = _Bridge(graph.buffers)
    num_forward = None
    for index, step in enumerate(graph.steps):
        if index == graph.num_forward:
            num_forward = len(bridge.steps)
        bridge.place(step)
    if num_forward is None:
        num_forward = len(bridge.steps)
    return dataclasses.replace(graph, buffers=bridge.buffers, steps=bridge.steps,
                               num_forward=num_forward)


class _Bridge:
    """The rewritten steps and buffers, and which buffers have a copy on which device."""

    def __init__(self, buffers: list[Buffer]):
        self.buffers = list(buffers)
        self.steps: list[Step] = []
        # (buffer, device) -> the buffer holding its copy there, until it is written again
        self.copies: dict[tuple[int, Context], int] = {}

    def place(self, step: Step) -> None:
        buffers, where = self.buffers, step.device
        for b in step.mutated:
            if buffers[b].device != where:
                raise ContextError(
                    f"node {step.name!r} runs on {where} but updates {buffers[b].name!r}, "
                    f"which lives on {buffers[b].device}; an operator's updated inputs cannot "
                    f"cross devices: create {buffers[b].name!r} in the node's ctx_group, or "
                    f"bind its array on {where}")
        if step.kind == COPY and buffers[step.inputs[0]].device != where:
            self._emit(dataclasses.replace(step, kind=CROSS_COPY))
            return
        inputs = [self._local(b, where, step.backward) for b in step.inputs]
        outputs, reqs, then = [], [], []
        for b, req in zip(step.outputs, step.reqs):
            target = buffers[b]
            if target.device == where:
                outputs.append(b)
                reqs.append(req)
                continue
            part = self._buffer(target, where, f"{step.name}_{target.name}_part")
            outputs.append(part)
            reqs.append(_NULL if req is _NULL else _WRITE)
            if req is not _NULL:
                then.append(Step(COPY if req is _WRITE else ADD, f"{step.name}_{target.name}",
                                 [part], [b], [req], backward=step.backward,
                                 device=target.device))
        self._emit(dataclasses.replace(step, inputs=inputs, outputs=outputs, reqs=reqs))
        for follow_up in then:
            self.place(follow_up)

    def _local(self, b: int, where: Context, backward: bool) -> int:
        """``b`` itself when it lives on ``where``, else its copy there."""
        source = self.buffers[b]
        if source.device == where:
            return b
        copy = self.copies.get((b, where))
        if copy is None:
            copy = self._buffer(source, where, f"{source.name}_copy")
            self._emit(Step(CROSS_COPY, f"{source.name}_copy", [b], [copy], [_WRITE],
                            backward=backward, device=where))
            self.copies[(b, where)] = copy
        return copy

    def _buffer(self, like: Buffer, where: Context, name: str) -> int:
        index = len(self.buffers)
        self.buffers.append(Buffer(index, like.shape, like.dtype, INNER, name, where))
        return index

    def _emit(self, step: Step) -> None:
        self.steps.append(step)
        written = {*step.outputs, *step.mutated}
        for key in [k for k in self.copies if k[0] in written]:
            del self.copies[key]

