"""Running a bound graph's chain of steps again by the calls its kernels offered.

A step's kernel may offer its run as calls that redo it exactly
(:meth:`dagnet.operator.NodeState.offer_replay`): oneDNN's convolutions offer the
primitive executions on the node's own arrays, for instance.  Once every step of a chain
has run, :class:`ReplayingChain` keeps the offered calls, in order with the steps that
offered nothing, as one flat list, and the next runs go through that list while every
offer holds: no input an offer depends on written since, each offer's scope unchanged,
and the configuration unchanged (:func:`dagnet.config.generation`).  Otherwise, and
after a failure, the chain runs its steps as written and the list is made again from
what they offer then.

Per node, the list spares the engine function's wrapper, the kernel's own checks and
look-ups, and the kernel's argument handling: what is left is the native calls.  A
forward pass of mobilenet-v2 at batch 1 has about 60 nodes, and their Python took about
a quarter of its time.  ``config exec_replay`` (``DAGNET_EXEC_REPLAY=0``) turns it off.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

from .. import config as _config
from ..runtime import EngineFunction

__all__ = ["ReplayingChain"]

_THREADS_KEPT = 16  # flat lists a chain keeps, one per thread that ran it last


class ReplayingChain:
    """The engine function of a chain of executor steps (``steps``, each with its node's
    state in ``states``, None for a step without one; ``as_written`` runs them, as
    :func:`dagnet.runtime.bulk_function` makes it) that runs them, or the calls their last
    runs offered while those hold (see the module's docstring)."""

    def __init__(self, as_written: Callable[[Any], None], steps: Sequence[EngineFunction],
                 states: Sequence[Any]):
        self._as_written = as_written
        self._steps = list(zip(steps, states))
        # per thread (offers are made for the thread that runs them: a threaded engine's
        # workers take turns at a chain), the flat list
        self._flats: dict[int, _Flat] = {}

    def __call__(self, run_ctx: Any) -> None:
        thread = threading.get_ident()
        flat = self._flats.pop(thread, None)
        if flat is not None:
            if flat.run(run_ctx):  # (dropped if it raises)
                self._flats[thread] = flat
                return
        self._as_written(run_ctx)
        if _config.get("exec_replay"):
            flat = _Flat.of(self._steps)
            if flat is not None:
                if len(self._flats) >= _THREADS_KEPT:
                    self._flats.clear()
                self._flats[thread] = flat


class _Item(NamedTuple):
    """One call of a flat chain: an offered call (``check`` turns its non-zero status
    into the kernel's error) or a step's function, given the run context."""

    call: Callable[..., Any]
    step: bool
    name: str
    check: Callable[[int, Callable[[], Any]], None] | None


class _Flat(NamedTuple):
    """A chain as one list of calls, and what they hold on."""

    items: tuple[_Item, ...]
    replayed: tuple[Any, ...]  # the states whose offers the items run
    versions: tuple[tuple[Any, int, Any], ...]  # see NodeState.replay_checks
    scopes: tuple[tuple[Callable[[], Hashable], Hashable], ...]
    generation: int

    @classmethod
    def of(cls, steps: list[tuple[EngineFunction, Any]]) -> _Flat | None:
        """The flat list from what ``steps`` offered in the run just ended; None where
        nothing was offered, or the offers disagree on a scope (one run changed what an
        earlier one's calls depend on)."""
        items: list[_Item] = []
        replayed, versions, scopes = [], [], {}
        for function, state in steps:
            replay = None if state is None else state.replay
            if replay is None:
                items.append(_Item(function.fn, True, function.name, None))
                continue
            if scopes.setdefault(replay.scope, replay.expected) != replay.expected:
                return None
            items.extend(_Item(call, False, function.name, replay.check)
                         for call in replay.calls)
            replayed.append(state)
            versions.extend(state.replay_checks())
        if not replayed:
            return None
        return cls(tuple(items), tuple(replayed), tuple(versions), tuple(scopes.items()),
                   _config.generation())

    def holds(self) -> bool:
        """Whether every offer holds for the run about to start (the replayed states'
        runs already counted)."""
        if _config.generation() != self.generation:
            return False
        for scope, expected in self.scopes:
            if scope() != expected:
                return False
        for var, version, own in self.versions:
            if var.version - (own.runs if own is not None else 0) != version:
                return False
        return True

    def run(self, run_ctx: Any) -> bool:
        """Run the calls in order, if every offer holds (else False, having done
        nothing).  An error gets a note naming the node whose call or step raised it, as
        the chain's steps' errors do."""
        for state in self.replayed:
            state.runs += 1  # a replayed run counts as a run of the node's kernel
        if not self.holds():
            for state in self.replayed:
                state.runs -= 1
            return False
        item = None
        try:
            for item in self.items:
                status = item.call(run_ctx) if item.step else item.call()
                if status and not item.step:
                    item.check(status, item.call)
        except BaseException as error:
            if item is not None:
                error.add_note(f"raised by node {item.name!r}")
            raise
        return True
