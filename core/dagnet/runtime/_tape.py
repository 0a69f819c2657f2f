"""The leaves of recorded graphs, and which memory a live graph still needs.

An array in a graph carries its entry in its ``__dict__`` under ``_ag``:
``(node, output_index)`` for a recorded call's output (nodes are made by the
recorder, ``dagnet.autograd``), ``(variable, 0)`` for an array that asked for
a gradient (``attach_grad``).  Chunks holding a live graph's arrays are
remembered, so that writing into them while recording can be refused:
the gradient would be computed from overwritten values.
"""

from __future__ import annotations

from typing import Any

from .._errors import DagnetError

__all__ = ["GRAD_REQS", "Variable", "entry_of", "in_graph", "mark_variable", "check_write",
           "check_copy_from", "remember_chunk", "forget_chunk", "AutogradError"]

GRAD_REQS = ("write", "add", "null")


class AutogradError(DagnetError, RuntimeError):
    """The recorded graph cannot serve the request: an array that is not in a graph
    (or whose graph was freed by an earlier backward), or a write into a graph.
    (``dagnet.autograd.AutogradError``; defined here because the runtime refuses the
    writes.)"""


class Variable:
    """A leaf that asked for a gradient: where it goes (``grad``) and how (``req``);
    ``fresh`` is set by each backward that reaches it (MXNet's ``_fresh_grad``)."""

    __slots__ = ("grad", "req", "fresh", "__weakref__")
    live = True  # a variable stays in its graph for as long as it exists

    def __init__(self, grad: Any, req: str):
        self.grad = grad
        self.req = req
        self.fresh = False


def remember_chunk(chunk: Any) -> None:
    """A live graph holds an array on ``chunk``: writes into it are refused while recording."""
    chunk.recorded += 1


def forget_chunk(chunk: Any) -> None:
    """A graph that held an array on ``chunk`` was freed."""
    if chunk.recorded:
        chunk.recorded -= 1


def check_copy_from(value: Any) -> None:
    """Refuse copying ``value`` into another array while recording when ``value`` is in a
    graph: the copy is not recorded, so no gradient would reach ``value``."""
    if in_graph(value):
        raise AutogradError(
            f"{_INPLACE}: x[idx] = v copies v, an array of the recorded graph, without "
            f"recording the copy, so v would get no gradient; build the result with "
            f"operators instead (for example concat, where or slice_like), or copy it inside "
            f"autograd.pause()")


def entry_of(array: Any) -> tuple | None:
    """``array``'s entry in a live graph, or None."""
    entry = array.__dict__.get("_ag")
    if entry is None or not entry[0].live:
        return None
    return entry


def in_graph(array: Any) -> bool:
    """Whether ``array`` is a variable or the output of a live recorded call."""
    return entry_of(array) is not None


def mark_variable(array: Any, grad: Any, req: str) -> None:
    """Make ``array`` a leaf whose gradient goes into ``grad`` by ``req`` (checked by the
    caller: one of :data:`GRAD_REQS`, ``grad`` of ``array``'s shape)."""
    array.__dict__["_ag"] = (Variable(grad, req), 0)
    remember_chunk(array._chunk)


_INPLACE = ("Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with "
            "autograd")  # MXNet's words, which code written for MXNet looks for

_WRITE_MESSAGE = (
    _INPLACE + ": cannot write into an array that is part of a recorded graph ({what}) while "
    "recording: "
    "the gradient would be computed from overwritten values. Call backward() first to free "
    "the graph, or write outside the record() block (use autograd.pause()); in-place forms "
    "such as +=, *=, x[idx] = v and out=x are not allowed on such arrays inside record()")


def check_write(target: Any) -> None:
    """Refuse a write into ``target`` while recording if its memory belongs to a graph."""
    if target._chunk.recorded:
        entry = target.__dict__.get("_ag")
        if entry is None or not entry[0].live:
            what = f"an array of shape {target._shape} sharing memory with one"
        elif entry[0].__class__ is Variable:
            what = "a variable"
        else:
            what = f"an output of the recorded operator {entry[0].call.name!r}"
        raise AutogradError(_WRITE_MESSAGE.format(what=what))
