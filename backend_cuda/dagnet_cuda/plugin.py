"""Registers the CUDA backend without importing cupy (entry point ``cuda``)."""

from __future__ import annotations

import dagnet


@dagnet.hookimpl
def dagnet_register_backends(backends):
    from .backend import CUDABackend

    backends.add(CUDABackend())
