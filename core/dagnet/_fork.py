"""dagnet's ``os.fork`` handlers, run in one fixed order.

``os.register_at_fork`` runs "before" handlers in the reverse order of their
registration, which is the order modules happened to be imported in.  dagnet
needs a real order: the engines first let their outstanding work finish (the
workers may need the memory pools' locks to free arrays meanwhile), and only
then do the memory pools take their locks, so that the child inherits every one
of them unlocked and its state whole.  After the fork, parent and child undo
the stages in the opposite order.
"""

from __future__ import annotations

import os
from collections.abc import Callable

__all__ = ["ENGINES", "MEMORY", "at_fork"]

ENGINES = 0
"""The stage of the engines: wait for outstanding work, then hold the trackers."""
MEMORY = 1
"""The stage of the memory pools: hold their locks across the fork."""

Handler = Callable[[], None]
_handlers: list[tuple[int, int, Handler | None, Handler | None, Handler | None]] = []


def at_fork(stage: int, *, before: Handler | None = None,
            after_in_parent: Handler | None = None,
            after_in_child: Handler | None = None) -> None:
    """Run ``before`` ahead of every fork, in ``stage`` order (:data:`ENGINES` first),
    and the ``after_*`` handlers after it, in the opposite order."""
    _handlers.append((stage, len(_handlers), before, after_in_parent, after_in_child))
    _handlers.sort(key=lambda handler: handler[:2])


def _call_each(handlers: list[Handler | None]) -> None:
    # Every handler runs even if one raises: a lock one took must be let go by its pair.
    # Python reports what a fork handler raises as unraisable.
    error: BaseException | None = None
    for handler in handlers:
        if handler is None:
            continue
        try:
            handler()
        except BaseException as exc:
            error = error or exc
    if error is not None:
        raise error


def _before() -> None:
    _call_each([handler[2] for handler in _handlers])


def _after_in_parent() -> None:
    _call_each([handler[3] for handler in reversed(_handlers)])


def _after_in_child() -> None:
    _call_each([handler[4] for handler in reversed(_handlers)])


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before, after_in_parent=_after_in_parent,
                        after_in_child=_after_in_child)
