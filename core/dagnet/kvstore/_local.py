"""The single-process stores: ``'local'`` sums on the CPU, ``'device'`` on a device."""

from __future__ import annotations

from typing import Any

from ..context import Context, cpu
from ._base import KVStore

__all__ = ["LocalKVStore", "DeviceKVStore"]


class LocalKVStore(KVStore):
    """MXNet's ``'local'`` store: the values pushed for a key are copied to the CPU and
    summed there, and the stored value (and an optimizer's update of it) stays on the
    CPU."""

    def _reduce_context(self, values: list[Any]) -> Context:
        return cpu()


class DeviceKVStore(KVStore):
    """MXNet's ``'device'`` store: the values pushed for a key are summed on the device
    of the first of them (a GPU, when training on GPUs), and the stored value moves
    there at the first push, so an optimizer updates it on that device too."""

    _stored_follows_sum = True

    def _reduce_context(self, values: list[Any]) -> Context:
        return values[0].context
