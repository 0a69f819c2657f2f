"""The registrar dagnet calls (entry point ``quadratic`` in the ``dagnet`` group)."""

from __future__ import annotations

import dagnet


@dagnet.hookimpl
def dagnet_register_ops(ops):
    """Register ``quadratic`` and its backward operator ``_backward_quadratic``, and
    quadratic's implementation for csr input (a csr result when ``c == 0``)."""
    from .ops import OPS
    from .sparse import register

    for op in OPS:
        ops.add(op)
    register()
