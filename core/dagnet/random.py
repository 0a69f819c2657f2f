"""Random numbers: ``dagnet.random.seed`` (sampling functions arrive with the operators)."""

from __future__ import annotations

from . import resource
from ._errors import ResourceError
from .context import Context

__all__ = ["seed"]


def seed(seed_state: int, ctx: str | Context = "all") -> None:
    """Seed the random generators, as ``mx.random.seed(seed_state, ctx='all')``.

    With ``ctx='all'`` every device's generator, including devices first used
    later, restarts from a stream derived from ``seed_state`` and the device
    alone, so results do not depend on the order devices are used in.
    """
    if isinstance(ctx, Context):
        resource.manager().seed(seed_state, ctx)
    elif isinstance(ctx, str) and ctx == "all":
        resource.manager().seed(seed_state)
    else:
        raise ResourceError(
            f"random.seed: ctx must be 'all' or a dagnet Context such as dagnet.cpu(1), "
            f"got {ctx!r}")
