"""The recorded graph: one node per recorded operator call, and the hook the
imperative path calls while recording (the leaves, :class:`Variable`, and the
refusal of writes into a graph's memory are the runtime's).

An array in a graph carries its entry in its ``__dict__`` under ``_ag``:
``(node, output_index)`` for an operator's output, ``(variable, 0)`` for an
array that asked for a gradient (``attach_grad``/``mark_variables``).  A node
keeps what its gradient rule reads (``Gradient.uses``): the input arrays for
``in_data``, the outputs for ``out_data``; the outputs are kept as fresh
NDArray objects on the same memory, so a node never refers back to the arrays
that refer to it (no reference cycles: memory is freed as soon as the last
array goes).  A call is recorded only when one of its inputs is in a graph,
as in MXNet.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from ..ndarray import NDArray, wrap_chunk
from ..operator import ComposedGradient, Gradient
from ..runtime import (
    GRAD_REQS,
    Variable,
    check_write,
    entry_of,
    forget_chunk,
    in_graph,
    mark_variable,
    remember_chunk,
)
from ._errors import AutogradArgumentError
from ._trace import active_tracer

__all__ = ["Variable", "Node", "entry_of", "in_graph", "mark_variables", "record_call",
           "host_read", "traced_write", "GRAD_REQS"]


class Node:
    """One recorded operator call."""

    __slots__ = ("call", "parents", "in_meta", "out_meta", "inputs", "outputs", "dev",
                 "chunks", "live", "__weakref__")

    def __init__(self, call: Any, parents: list, inputs: Sequence[NDArray],
                 outputs: Sequence[NDArray]):
        self.call = call
        self.parents = parents  # per input: the entry it came from, or None (no gradient)
        self.in_meta = [(a._shape, a._dtype) for a in inputs]
        self.out_meta = [(o._shape, o._dtype) for o in outputs]
        self.dev = outputs[0]._chunk.dev if outputs else inputs[0]._chunk.dev
        rule = call.op.gradient
        uses = rule.uses if isinstance(rule, (Gradient, ComposedGradient)) else ()
        self.inputs = list(inputs) if "in_data" in uses else None
        self.outputs = ([wrap_chunk(o._chunk, o._offset, o._shape, o._dtype, o._strides, o._data)
                         for o in outputs] if "out_data" in uses else None)
        self.chunks = [weakref.ref(o._chunk) for o in outputs]
        self.live = True

    def free(self) -> None:
        """Drop what the gradient needed; the outputs may be written again."""
        self.live = False
        self.inputs = self.outputs = None
        self.parents = [None] * len(self.parents)
        for ref in self.chunks:
            chunk = ref()
            if chunk is not None:
                forget_chunk(chunk)

    def __repr__(self) -> str:
        return f"<autograd node {self.call.name!r}{'' if self.live else ' (freed)'}>"


def record_call(call: Any, inputs: Sequence[NDArray], outputs: Sequence[NDArray],
                out: Any) -> None:
    """Add a call to the graph when an input is in one (called before the call is pushed);
    while a :class:`~dagnet.autograd._trace.Tracer` is active, the call goes to it."""
    tracer = active_tracer()
    if tracer is not None:
        tracer.record(call, inputs, outputs, out)
        return
    if out is not None:
        for array in outputs[:call.n_visible]:
            check_write(array)
    parents = []
    found = False
    mutated = call.mutated
    for index, array in enumerate(inputs):
        entry = array.__dict__.get("_ag") if index not in mutated else None
        if entry is not None and entry[0].live:
            parents.append(entry)
            found = True
        else:
            parents.append(None)
    if not found:
        return
    node = Node(call, parents, inputs, outputs)
    for index, array in enumerate(outputs):
        array.__dict__["_ag"] = (node, index)
        remember_chunk(array._chunk)


def mark_variables(variables: NDArray | Sequence[NDArray], gradients: NDArray | Sequence[NDArray],
                   grad_reqs: str | Sequence[str] = "write") -> None:
    """Make ``variables`` leaves of the graph whose gradients ``backward`` writes into
    ``gradients`` (one each) according to ``grad_reqs``: ``'write'`` overwrites, ``'add'``
    accumulates, ``'null'`` computes none."""
    variables = [variables] if isinstance(variables, NDArray) else list(variables)
    gradients = [gradients] if isinstance(gradients, NDArray) else list(gradients)
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    if not (len(variables) == len(gradients) == len(reqs)):
        raise AutogradArgumentError(
            f"mark_variables: got {len(variables)} variable(s), {len(gradients)} gradient(s) "
            f"and {len(reqs)} grad_req(s); give one gradient array and one grad_req per "
            f"variable (or one grad_req string for all)")
    for index, (var, grad, req) in enumerate(zip(variables, gradients, reqs)):
        if not isinstance(var, NDArray) or not isinstance(grad, NDArray):
            raise TypeError(f"mark_variables: variable and gradient {index} must be NDArrays, "
                            f"got {type(var).__name__} and {type(grad).__name__}")
        if req not in GRAD_REQS:
            raise AutogradArgumentError(
                f"mark_variables: grad_req {req!r} of variable {index} is not one of "
                f"{', '.join(GRAD_REQS)}")
        if grad._shape != var._shape:
            raise AutogradArgumentError(
                f"mark_variables: gradient {index} has shape {grad._shape} but its variable "
                f"has shape {var._shape}; they must match")
    for var, grad, req in zip(variables, gradients, reqs):
        mark_variable(var, grad, req)


def traced_write(target: NDArray, value: Any) -> bool:
    """A write outside the operators while recording: True when a trace took note of it
    (autograd's own checks do not apply to a trace)."""
    tracer = active_tracer()
    if tracer is None:
        return False
    tracer.write(target, value)
    return True


def host_read(array: NDArray) -> None:
    """An array's values are copied to the host while recording: a trace must know."""
    tracer = active_tracer()
    if tracer is not None:
        tracer.host_read(array)
