"""Operator resources (MXNet's "Resource Manager"): per-device random generators
and reusable temp space, each guarded by an engine variable."""

from __future__ import annotations

from .._errors import ResourceError
from ._manager import (
    DEFAULT_SEED,
    RandomResource,
    Resource,
    ResourceKind,
    ResourceManager,
    ResourceRequest,
    TempSpace,
    device_seed,
)

__all__ = [
    "DEFAULT_SEED", "RandomResource", "Resource", "ResourceError", "ResourceKind",
    "ResourceManager", "ResourceRequest", "TempSpace", "device_seed", "manager", "request",
]

# Not named ``_manager``: that would hide the ``_manager`` submodule.
_process_manager = ResourceManager()


def manager() -> ResourceManager:
    """The process-wide resource manager."""
    return _process_manager


def request(ctx, req: ResourceRequest) -> Resource:
    """The resource of ``ctx`` that ``req`` asks for."""
    return _process_manager.request(ctx, req)
