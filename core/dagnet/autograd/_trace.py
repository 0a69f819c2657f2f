"""Tracing: run Python code on arrays once and keep the operators it called as a Symbol.

This is how a Gluon block written against ``mx.np`` is hybridized (MXNet 2 calls it
deferred compute): ``hybrid_forward`` runs imperatively on copies of the inputs while a
:class:`Tracer` is active, every operator call is kept as a graph node, and the arrays
that were named inputs (the data and the parameters) become the graph's variables.

A trace holds only what operators computed.  When the code does something a graph
cannot hold, the trace says so in :attr:`Tracer.problem` (the code still ran, and its
results are right) and the caller runs the code imperatively instead:

- a value computed from the inputs is read on the host (``asnumpy``, ``item``,
  ``bool(x)``, an array used as an index), so Python decided something from data;
- an operator whose output shape depends on the values (``boolean_mask``, ``unique``);
- Python code that is not an operator (an ``autograd.Function``, a nested cached graph);
- a write into part of a traced array (``x[1:] = v``), or into memory a traced array
  shares without being that array (a view); ``x[...] = v`` and ``x += v`` on a whole
  array are kept: ``x`` stands for the new value from then on.

An array made without an operator (``mx.np.array([1, 2])``) that the code then uses is a
constant of the graph: its value at trace time is kept in :attr:`Tracer.constants`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ..ndarray import NDArray
from ..runtime import set_recording
from ..symbol import Node, Symbol

__all__ = ["Tracer", "active_tracer"]

_MISSING = object()
_local = threading.local()


class _Tag:
    """What a traced array carries under ``_ag``: the graph node that computed it."""

    __slots__ = ("node",)
    live = True  # traced arrays count as "in a graph": their views go through operators

    def __init__(self, node: Node):
        self.node = node


def active_tracer() -> Tracer | None:
    """The tracer active on this thread, or None."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


class Tracer:
    """``with Tracer() as t:`` name inputs with :meth:`variable`, run the code, then
    :meth:`symbol` of its output arrays; check :attr:`problem` first.

    While active, operator calls on this thread are recorded here (not by autograd), and
    on exit every array is left as it was: the tags come off, and variables an operator
    wrote into (a BatchNorm's running statistics) get their values back, so a trace has
    no effect but the values it computed."""

    def __init__(self) -> None:
        self.problem: str | None = None
        self.constants: dict[str, NDArray] = {}
        self._tagged: list[tuple[dict, Any]] = []
        self._keep: list[NDArray] = []  # every traced array stays alive: ids stay unique
        self._chunks: set[int] = set()
        self._constant_of: dict[int, Node] = {}
        self._snapshots: list[tuple[NDArray, NDArray]] = []
        self._saved_variables: set[int] = set()
        self._count = 0
        self._was_recording = False

    # -- scope --------------------------------------------------------------------
    def __enter__(self) -> Tracer:
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self)
        self._was_recording = set_recording(True)
        return self

    def __exit__(self, *exc: object) -> None:
        set_recording(self._was_recording)
        _local.stack.pop()
        for array_dict, previous in reversed(self._tagged):
            if previous is _MISSING:
                array_dict.pop("_ag", None)
            else:
                array_dict["_ag"] = previous
        for array, saved in reversed(self._snapshots):
            saved.copyto(array)  # not recording any more: a plain copy
        self._keep.clear()

    # -- building -----------------------------------------------------------------
    def variable(self, name: str, array: NDArray) -> None:
        """Make ``array`` the graph input called ``name``."""
        self._tag(array, Node(None, name), 0)

    def symbol(self, outputs: Sequence[NDArray]) -> Symbol:
        """The graph computing ``outputs`` from the variables (and constants)."""
        return Symbol([self._entry(array) for array in outputs])

    def record(self, call: Any, inputs: Sequence[NDArray], outputs: Sequence[NDArray],
               out: Any) -> None:
        """Keep one operator call (the runtime calls this before pushing it)."""
        if self.problem is not None:
            return
        attrs = getattr(call, "attrs", None)
        if attrs is None:  # an autograd.Function (a nested cached graph is one too)
            self._refuse(f"it calls Python code a graph cannot hold ({call.name})")
            return
        op = call.op
        if op.value_shapes is not None:
            self._refuse(f"operator {op.name!r} gives outputs whose shape depends on the "
                         f"input values")
            return
        entries = []
        for index, array in enumerate(inputs):
            entries.append(self._entry(array))
            if index in call.mutated and not self._save_variable(array, op.name):
                return
        if out is not None:
            for array in outputs[:call.n_visible]:
                if _tag_of(array) is None and id(array._chunk) in self._chunks:
                    self._refuse(f"operator {op.name!r} writes into a view of a traced array")
                    return
                if _is_variable(array) and not self._save_variable(array, op.name):
                    return
        if self.problem is not None:
            return
        node = Node(op, f"{op.name.lower()}{self._count}", attrs.to_strings(), attrs,
                    entries)
        self._count += 1
        for index, array in enumerate(outputs):
            self._tag(array, node, index)

    def write(self, target: NDArray, value: Any) -> None:
        """A write into ``target`` outside the operators (``x[...] = v``, ``copyto``;
        ``value`` None for an indexed write).  A whole traced array given another array of
        its shape and dtype now stands for that array; any other write into a traced
        array's memory cannot be a graph."""
        if self.problem is not None:
            return
        whole = (_tag_of(target) is not None and isinstance(value, NDArray)
                 and value._shape == target._shape and value._dtype == target._dtype)
        if whole:
            node, index = self._entry(value)
            self._tag(target, node, index)
        elif _tag_of(target) is not None or id(target._chunk) in self._chunks:
            self._refuse("it writes into a traced array outside the operators "
                         "(x[idx] = v on part of it)")

    def host_read(self, array: NDArray) -> None:
        """``array``'s values are being copied to the host."""
        if self.problem is None and _tag_of(array) is not None:
            self._refuse("it reads the values of an array computed from the inputs on the "
                         "host (asnumpy, item, bool, or an array used as an index)")

    # -- helpers ------------------------------------------------------------------
    def _refuse(self, why: str) -> None:
        self.problem = why

    def _tag(self, array: NDArray, node: Node, index: int) -> None:
        array_dict = array.__dict__
        self._tagged.append((array_dict, array_dict.get("_ag", _MISSING)))
        array_dict["_ag"] = (_Tag(node), index)
        self._keep.append(array)
        self._chunks.add(id(array._chunk))

    def _entry(self, array: NDArray) -> tuple[Node, int]:
        tagged = _tag_of(array)
        if tagged is not None:
            return tagged
        node = self._constant_of.get(id(array))
        if node is None:
            if id(array._chunk) in self._chunks:
                self._refuse("it uses an array sharing memory with a traced one outside "
                             "the operators (detach, or a view made without recording)")
            node = Node(None, f"_trace_constant{len(self.constants)}")
            with _quiet():
                self.constants[node.name] = array.copy()
            self._constant_of[id(array)] = node
            self._keep.append(array)
        return node, 0

    def _save_variable(self, array: NDArray, op_name: str) -> bool:
        """Before ``op_name`` writes into ``array``: it must be a variable, whose value is
        put back when the trace ends."""
        tagged = _tag_of(array)
        if tagged is None or tagged[0].op is not None:
            self._refuse(f"operator {op_name!r} writes into an array the graph computed")
            return False
        if id(array._chunk) not in self._saved_variables:
            self._saved_variables.add(id(array._chunk))
            with _quiet():
                self._snapshots.append((array, array.copy()))
        return True


class _quiet:
    """Recording off (a plain copy, not a traced call) inside the ``with`` block."""

    def __enter__(self) -> None:
        self._previous = set_recording(False)

    def __exit__(self, *exc: object) -> None:
        set_recording(self._previous)


def _tag_of(array: NDArray) -> tuple[Node, int] | None:
    entry = array.__dict__.get("_ag")
    if entry is not None and isinstance(entry[0], _Tag):
        return entry[0].node, entry[1]
    return None


def _is_variable(array: NDArray) -> bool:
    tagged = _tag_of(array)
    return tagged is not None and tagged[0].op is None
