"""Registers the CPU backend (entry point ``cpu`` of the ``dagnet`` distribution)."""

from __future__ import annotations

import dagnet


@dagnet.hookimpl
def dagnet_register_backends(backends):
    from .backend import CPUBackend

    backends.add(CPUBackend())
