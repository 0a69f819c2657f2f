"""Storage types in a bound graph (MXNet's storage-type inference at bind time).

An executor computes every value in dense buffers that its memory plan lays
out.  Sparse storage enters a graph through the arrays bound to it (a
``row_sparse`` or ``csr`` argument) and spreads through the operators that
declare sparse results for sparse inputs
(:func:`dagnet.ndarray.sparse.infer_storage`, MXNet's ``FInferStorageType``).
For the entries those operators produce the executor also keeps a sparse
array -- what the user sees when the entry is an output -- and runs the
operator's sparse implementation for the node instead of its dense kernel;
the entry's dense buffer is filled from the sparse array only when another
step (a dense forward step or a backward step) reads it.  Every other
operator computes densely, on the dense forms of its inputs (MXNet's storage
fallback), so values always equal the dense computation's.

Gradients are computed densely too.  An operator whose gradient MXNet keeps
sparse (``Embedding`` with ``sparse_grad``) says so with
:func:`dagnet.ndarray.sparse.register_grad_storage`; ``simple_bind`` then
allocates that argument's gradient array sparse, and the executor casts the
dense gradient into it after each backward pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._errors import OperatorError
from ..ndarray.sparse import grad_storage, infer_storage
from ._graph import OP, Graph

__all__ = ["StoragePlan", "plan_storage", "gradient_stypes"]

_DENSE = "default"


@dataclass
class StoragePlan:
    """``stypes``: the storage type of every buffer holding sparse values (buffer index ->
    ``'row_sparse'`` or ``'csr'``); ``sparse_steps``: the forward steps run by their
    operator's sparse implementation; ``dense_reads``: the buffers some other step reads
    in their dense form."""

    stypes: dict[int, str]
    sparse_steps: frozenset[int]
    dense_reads: frozenset[int]


def plan_storage(graph: Graph, arg_stypes: list[str], aux_stypes: list[str]) -> StoragePlan:
    """The storage types of ``graph``'s buffers from those of the bound arguments and
    auxiliary states, in forward order."""
    stypes = {b: s for b, s in zip(graph.args + graph.aux, arg_stypes + aux_stypes)
              if s != _DENSE}
    sparse_steps = set()
    for index, step in enumerate(graph.steps[:graph.num_forward]):
        if step.kind != OP:
            continue
        inputs = [stypes.get(b, _DENSE) for b in step.inputs]
        outputs = infer_storage(step.op.name, step.attrs, inputs)
        if outputs is None or all(s == _DENSE for s in inputs + list(outputs)):
            continue
        if len(outputs) != len(step.outputs):
            raise OperatorError(
                f"operator {step.op.name!r}: its storage rule gave {len(outputs)} storage "
                f"type(s) for {len(step.outputs)} output(s) (node {step.name!r})")
        sparse_steps.add(index)
        stypes.update((b, s) for b, s in zip(step.outputs, outputs) if s != _DENSE)
    dense_reads = frozenset(b for index, step in enumerate(graph.steps)
                            if index not in sparse_steps for b in step.inputs)
    return StoragePlan(stypes, frozenset(sparse_steps), dense_reads)


def gradient_stypes(symbol: Any, arg_stypes: dict[str, str]) -> dict[str, str]:
    """The arguments of ``symbol`` whose gradient is sparse, and its storage type: those
    that feed only operator inputs whose gradient rule gives that one sparse storage type
    (``arg_stypes``: the storage types of the arguments by name, absent ones dense)."""
    found: dict[str, set[str]] = {}
    for node in symbol._nodes():
        if node.op is None:
            continue
        inputs = [arg_stypes.get(src.name, _DENSE) if src.op is None else _DENSE
                  for src, _ in node.inputs]
        for (src, _), stype in zip(node.inputs, grad_storage(node.op.name, node.attrs,
                                                              inputs)):
            if src.op is None:
                found.setdefault(src.name, set()).add(stype)
    return {name: next(iter(kinds)) for name, kinds in found.items()
            if len(kinds) == 1 and _DENSE not in kinds}
