"""The executor's graph: the forward steps of a symbol and the backward steps its
operators' gradient rules add, over numbered buffers.

Every array the executor touches is a :class:`Buffer` on a device: arguments, auxiliary
states, argument gradients, head gradients and outputs are *external* (the
user sees them); everything else is *inner* and left to the memory planner.
A :class:`Step` reads some buffers and writes others: an operator call (a
forward node or the backward operator of one), or a small helper that fills
a gradient with zeros, copies a head gradient or adds a partial gradient in.

Backward steps come from the gradient builder's plan
(:func:`dagnet.operator.plan_backward`, the same one autograd runs), in
reverse topological order, so every consumer of an entry adds its part of
the entry's gradient before the entry's producer reads it.  The first part
is written, later ones are added (``req=add``) into the same buffer.

Every buffer and step has a device (:mod:`._placement` decides the nodes'): an
entry's buffers live where its node runs (its gradient where the first part of it
is computed), a backward step runs where its forward node does, a helper step
where its output lives.  Edges that cross devices are
bridged afterwards by copy steps (:mod:`._cross_device`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..context import Context
from ..operator import NodeFacts, Op, OpReqType, get_op, plan_backward
from ..runtime import GRAD_REQS
from ..symbol import Entry, Node

__all__ = ["Buffer", "Step", "Graph", "build_graph", "GRAD_REQS"]


# buffer kinds
ARG, AUX, GRAD, HEAD, OUTPUT, INNER = "arg", "aux", "grad", "head", "output", "inner"
EXTERNAL = frozenset({ARG, AUX, GRAD, HEAD, OUTPUT})

# step kinds
OP, ZERO, COPY, ADD, CROSS_COPY = "op", "zero", "copy", "add", "cross_device_copy"

_WRITE, _ADD, _NULL = OpReqType.WRITE, OpReqType.ADD, OpReqType.NULL


@dataclass
class Buffer:
    """One array: its shape, dtype, kind (``arg``, ``aux``, ``grad``, ``head``,
    ``output``, ``inner``), a name for messages, the device it lives on, and for
    external kinds the position in its list (arguments, auxiliary states, outputs)."""

    index: int
    shape: tuple[int, ...]
    dtype: np.dtype
    kind: str
    name: str
    device: Context
    position: int = -1

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


@dataclass
class Step:
    """One pushed function: ``kind`` is ``op`` (``op`` with ``attrs`` run on
    ``inputs`` into ``outputs`` with ``reqs``), ``zero`` (fill ``outputs[0]``),
    ``copy`` or ``add`` (``inputs[0]`` into ``outputs[0]``), or
    ``cross_device_copy`` (``inputs[0]`` copied to ``outputs[0]`` on another device,
    MXNet's ``_CrossDeviceCopy``).  ``device`` is where it runs (for a
    cross-device copy, the destination).  ``mutated`` are input buffers the op
    writes (auxiliary states); ``inplace`` the declared (input position, output
    position) pairs that may share memory."""

    kind: str
    name: str
    inputs: list[int]
    outputs: list[int]
    reqs: list[OpReqType]
    op: Op | None = None
    attrs: Any = None
    node: Node | None = None
    mutated: list[int] = field(default_factory=list)
    inplace: list[tuple[int, int]] = field(default_factory=list)
    backward: bool = False
    # a backward op's outputs: the positions of the forward inputs they are gradients of
    gradient_of: list[int] = field(default_factory=list)
    device: Context | None = None  # build_graph sets it on every step


@dataclass
class Graph:
    """Buffers and steps of one bound symbol: ``steps[:num_forward]`` is the forward
    pass, the rest the backward pass.  ``heads[k]`` is the head-gradient buffer of
    output ``k`` (None where none is needed); ``backward_error`` says why no
    backward pass exists, when one is needed and cannot be built."""

    buffers: list[Buffer]
    steps: list[Step]
    num_forward: int
    args: list[int]
    aux: list[int]
    grads: list[int | None]
    outputs: list[int]
    heads: list[int | None]
    output_names: list[str]
    backward_error: str | None = None
    symbol: Any = None  # the symbol the steps were built from (after graph passes)


class _Builder:
    def __init__(self, shapes: dict, dtypes: dict, devices: dict[int, Context]):
        self.shapes = shapes
        self.dtypes = dtypes
        self.devices = devices
        self.buffers: list[Buffer] = []
        self.steps: list[Step] = []

    def buffer(self, shape: Sequence[int], dtype: Any, kind: str, name: str, device: Context,
               position: int = -1) -> int:
        index = len(self.buffers)
        self.buffers.append(Buffer(index, tuple(int(d) for d in shape), np.dtype(dtype), kind,
                                   name, device, position))
        return index

    def like(self, entry: Entry, kind: str, name: str, position: int = -1,
             device: Context | None = None) -> int:
        """A buffer for ``entry``'s values, on ``device`` or where its node runs."""
        where = self.devices[id(entry[0])] if device is None else device
        return self.buffer(self.shapes[entry], self.dtypes[entry], kind, name, where, position)


def build_graph(symbol: Any, shapes: dict, dtypes: dict, grad_reqs: Sequence[str],
                devices: dict[int, Context], grad_devices: Sequence[Context | None]) -> Graph:
    """The buffers and steps of ``symbol`` with the entry shapes and dtypes given
    (from inference), one gradient request per argument, the device of every node
    (by ``id``, from :func:`._placement.place_nodes`) and of every argument's
    gradient array."""
    b = _Builder(shapes, dtypes, devices)
    nodes = symbol._nodes()
    arg_nodes, aux_nodes = symbol._variables(nodes)
    entry_buf: dict[Entry, int] = {}
    args = []
    for position, node in enumerate(arg_nodes):
        entry_buf[(node, 0)] = b.like((node, 0), ARG, node.name, position)
        args.append(entry_buf[(node, 0)])
    aux = []
    for position, node in enumerate(aux_nodes):
        entry_buf[(node, 0)] = b.like((node, 0), AUX, node.name, position)
        aux.append(entry_buf[(node, 0)])
    output_names = symbol.list_outputs()
    output_position = {}
    for position, entry in enumerate(symbol._outputs):
        output_position.setdefault(entry, position)
    # forward steps
    for node in nodes:
        if node.op is None:
            continue
        names = node.output_names()
        outs = []
        for index in range(node.num_outputs()):
            entry = (node, index)
            if entry in output_position:
                entry_buf[entry] = b.like(entry, OUTPUT, names[index], output_position[entry])
            else:
                entry_buf[entry] = b.like(entry, INNER, names[index])
            outs.append(entry_buf[entry])
        mutated = node.op.mutated_inputs(node.attrs)
        b.steps.append(Step(OP, node.name, [entry_buf[e] for e in node.inputs], outs,
                            [_WRITE] * len(outs), node.op, node.attrs, node,
                            mutated=[entry_buf[node.inputs[i]] for i in mutated],
                            inplace=_inplace_pairs(node.op, node.attrs),
                            device=devices[id(node)]))
    num_forward = len(b.steps)
    outputs = [entry_buf[e] for e in symbol._outputs]
    grads: list[int | None] = [None] * len(arg_nodes)
    for position, node in enumerate(arg_nodes):
        if grad_reqs[position] != "null":
            grads[position] = b.like((node, 0), GRAD, node.name, position,
                                     device=grad_devices[position])
    heads, error = _backward(b, nodes, arg_nodes, symbol._outputs, output_names, entry_buf,
                             grads, grad_reqs)
    for step in b.steps:  # a helper step runs where it writes
        if step.device is None:
            step.device = b.buffers[step.outputs[0]].device
    return Graph(b.buffers, b.steps, num_forward, args, aux, grads, outputs, heads,
                 output_names, error, symbol)


def _inplace_pairs(op: Op, attrs: Any) -> list[tuple[int, int]]:
    if OpReqType.INPLACE not in op.supported_req:
        return []
    return op.inplace_pairs(attrs)


class _SymbolGraph:
    """How the gradient builder reads a symbol's graph (:class:`dagnet.operator.GraphView`)."""

    @staticmethod
    def is_leaf(node: Node) -> bool:
        return node.op is None

    @staticmethod
    def describe(node: Node) -> NodeFacts:
        return NodeFacts(node.op.gradient, node.inputs, node.aux_inputs(),
                         node.num_visible_outputs(), node.num_outputs())


def _backward(b: _Builder, nodes: list[Node], arg_nodes: list[Node], head_entries: list[Entry],
              output_names: list[str], entry_buf: dict[Entry, int], grads: list[int | None],
              grad_reqs: Sequence[str]) -> tuple[list[int | None], str | None]:
    """Append the backward steps of the gradient builder's plan; returns the head-gradient
    buffers and, when some node on a gradient path cannot be differentiated, why."""
    heads: list[int | None] = [None] * len(head_entries)
    if not any(g is not None for g in grads):
        return heads, None
    arg_position = {id(n): i for i, n in enumerate(arg_nodes)}

    def wanted(node: Node) -> bool:
        position = arg_position.get(id(node))
        return position is not None and grads[position] is not None

    plan = plan_backward(_SymbolGraph, nodes, head_entries, wanted)
    grad_of: dict[Entry, int] = {}  # entry -> the buffer its gradient accumulates in
    written: set[int] = set()  # argument gradient buffers written by some step already

    def contribute(entry: Entry, step_name: str, producer: Op | None,
                   where: Context | None) -> tuple[int, OpReqType, int | None]:
        """(buffer to write, req, buffer to add it into afterwards or None) for one
        part of ``entry``'s gradient, computed on ``where``."""
        node = entry[0]
        position = arg_position.get(id(node)) if node.op is None else None
        if position is not None:
            target = grads[position]
            first = target not in written
            written.add(target)
            req = _WRITE if first and grad_reqs[position] == "write" else _ADD
        elif entry in grad_of:
            target, req = grad_of[entry], _ADD
        else:
            # summed where its first part is computed: parts from one device cross once
            target = grad_of[entry] = b.like(entry, INNER, f"{node.name}_grad{entry[1]}",
                                             device=where)
            return target, _WRITE, None
        if req is _ADD and producer is not None and _ADD not in producer.supported_req:
            temp = b.like(entry, INNER, f"{step_name}_part", device=where)
            return temp, _WRITE, target
        return target, req, None

    for k in plan.seeded:
        entry = head_entries[k]
        heads[k] = b.like(entry, HEAD, f"{output_names[k]}_head_grad", k)
        if entry[0].op is not None and entry not in grad_of:
            grad_of[entry] = heads[k]  # the head buffer itself collects the gradient
            continue
        target, req, _ = contribute(entry, "head", None, None)
        b.steps.append(Step(COPY if req is _WRITE else ADD, f"{output_names[k]}_head",
                            [heads[k]], [target], [req], backward=True))
    for step in plan.steps:
        node = step.node
        backward = get_op(step.rule.backward)
        parts = []
        for use, index in step.reads:
            if use == "out_grad":
                parts.append(_gradient_buffer(b, (node, index), grad_of))
            elif use == "in_data":
                parts.append(entry_buf[node.inputs[index]])
            else:
                parts.append(entry_buf[(node, index)])
        name = f"{step.rule.backward}:{node.name}"
        outs, reqs, adds = [], [], []
        for index, entry in step.targets:
            if entry is not None:
                target, req, later = contribute(entry, name, backward, b.devices[id(node)])
                if later is not None:
                    adds.append((target, later))
            else:  # the backward op writes every input's gradient: give it a place, unused
                target = b.like(node.inputs[index], INNER, f"{name}_unused{index}",
                                device=b.devices[id(node)])
                req = _NULL
            outs.append(target)
            reqs.append(req)
        b.steps.append(Step(OP, name, parts, outs, reqs, backward, node.attrs, node,
                            inplace=_inplace_pairs(backward, node.attrs), backward=True,
                            gradient_of=[index for index, _ in step.targets],
                            device=b.devices[id(node)]))
        for source, target in adds:
            b.steps.append(Step(ADD, f"{name}_sum", [source], [target], [_ADD], backward=True))
    for position, target in enumerate(grads):
        if target is not None and target not in written and grad_reqs[position] == "write":
            b.steps.append(Step(ZERO, f"{arg_nodes[position].name}_zero_grad", [], [target],
                                [_WRITE], backward=True))
    error = None
    if plan.refused:
        node, reason = plan.refused[0]
        error = (f"node {node.name!r} (operator {node.op.name!r}) is on the path from an "
                 f"argument that needs a gradient to the outputs, and has no gradient: "
                 f"{reason}; set grad_req='null' for the arguments before it")
    return heads, error


def _gradient_buffer(b: _Builder, entry: Entry, grad_of: dict[Entry, int]) -> int:
    """The finished gradient of ``entry``; zeros when nothing contributed to it."""
    target = grad_of.get(entry)
    if target is None:
        target = grad_of[entry] = b.like(entry, INNER, f"{entry[0].name}_grad{entry[1]}")
        b.steps.append(Step(ZERO, f"{entry[0].name}_zero_grad", [], [target], [_WRITE],
                            backward=True))
    return target
