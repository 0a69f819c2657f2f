"""``mx.npx.random``: seeding dagnet's generators, for code written against ``mx.np``."""

from __future__ import annotations

from ..random import seed

__all__ = ["seed"]
