"""``mxnet.util``: process-level helpers MXNet 1.x code calls.

dagnet reads its settings from Python (``dagnet.config`` and ``os.environ``), so
the environment MXNet's backend keeps apart from Python's is the same one here:
:func:`getenv` and :func:`setenv` read and change ``os.environ``.
"""

from __future__ import annotations

import os

__all__ = ["getenv", "setenv"]


def getenv(name: str) -> str | None:
    """The value of environment variable ``name``, or None when it is not set."""
    return os.environ.get(name)


def setenv(name: str, value: str | None) -> None:
    """Set environment variable ``name`` to ``value`` (None unsets it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)
