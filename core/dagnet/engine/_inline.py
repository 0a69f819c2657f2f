"""Running a thread's pushes on that thread (:func:`run_inline`).

A function running on an engine worker that pushes work and needs it finished
before it returns -- a custom operator written in Python, calling operators on
the arrays it was handed -- cannot wait for that work on the threaded engines:
the work needs a worker, and the worker may be the one waiting.  Inside
``with run_inline():`` the thread's pushes run on the thread itself before
the push returns, once their dependencies allow, as on the naive engine.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

__all__ = ["run_inline", "inline_active"]


class _Inline(threading.local):
    depth = 0


_inline = _Inline()


def inline_active() -> bool:
    """Whether this thread is inside :func:`run_inline`."""
    return _inline.depth > 0


@contextlib.contextmanager
def run_inline() -> Iterator[None]:
    """Run the functions this thread pushes inside the block on this thread, each before
    its push returns (after the functions it depends on; a push waits for them).

    Variable deletions still go to the workers: nothing waits for them.  A push
    whose dependencies are held by work that needs this very thread cannot
    proceed; keep inline work on variables of its own (new arrays, views of
    the arrays handed to the function).
    """
    _inline.depth += 1
    try:
        yield
    finally:
        _inline.depth -= 1
