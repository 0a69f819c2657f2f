"""Bulk execution: several engine functions pushed as one (MXNet's bulk segments).

A chain of operators that cannot run side by side anyway costs one push instead
of many, and the pushing thread hands the workers one piece of work instead of
a trickle.  The executor bulks chains of its steps; autograd bulks its backward
pass.  A failure inside a bulk is the bulk's failure, with a note naming the
step that raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

__all__ = ["EngineFunction", "bulk_function", "unique_vars"]


class EngineFunction(NamedTuple):
    """A function ready to push: the variables it reads and writes, and its name."""

    fn: Callable[[Any], None]
    reads: Sequence[Any]
    writes: Sequence[Any]
    name: str


def unique_vars(variables: Sequence[Any]) -> list[Any]:
    """``variables`` without repeats, in first-seen order."""
    seen: set[int] = set()
    result = []
    for var in variables:
        if id(var) not in seen:
            seen.add(id(var))
            result.append(var)
    return result


def bulk_function(steps: Sequence[EngineFunction], kind: str) -> EngineFunction:
    """One engine function running ``steps`` in order.  It writes what any step writes
    and reads what a step reads and no step writes; an exception gets a note naming
    the step (a ``kind``, such as ``"executor node"``) that raised it."""
    if len(steps) == 1:
        return steps[0]
    writes = unique_vars([v for step in steps for v in step.writes])
    written = {id(v) for v in writes}
    reads = [v for v in unique_vars([v for step in steps for v in step.reads])
             if id(v) not in written]
    parts = [(step.fn, step.name) for step in steps]

    def run(run_ctx: Any) -> None:
        for fn, name in parts:
            try:
                fn(run_ctx)
            except BaseException as error:
                error.add_note(f"raised by {kind} {name!r}")
                raise

    return EngineFunction(run, reads, writes,
                          f"{steps[0].name}..{steps[-1].name} ({len(steps)} {kind}s)")
