"""The registrar dagnet calls (entry point ``quadratic`` in the ``dagnet`` group)."""

from __future__ import annotations

import dagnet


@dagnet.hookimpl
def dagnet_register_ops(ops):
    """Register ``quadratic`` and its backward operator ``_backward_quadratic``."""
    from .ops import OPS

    for op in OPS:
        ops.add(op)
