"""``dagnet.kv`` / ``dagnet.kvstore``: key-value stores that sum gradients across
devices and keep the weights an optimizer updates (MXNet's ``mx.kv``).

>>> import dagnet as mx
>>> kv = mx.kv.create("local")
>>> kv.init(3, mx.nd.ones((2, 3)))
>>> kv.push(3, [mx.nd.ones((2, 3)), mx.nd.ones((2, 3)) * 2])   # one array per device
>>> out = mx.nd.zeros((2, 3))
>>> kv.pull(3, out=out)
>>> out.asnumpy()
array([[3., 3., 3.],
       [3., 3., 3.]], dtype=float32)

The types are ``'local'`` (sums on the CPU), ``'device'`` (sums on the
device of the first pushed array), and the distributed ``'dist_sync'`` and
``'dist_async'`` (``'dist_device_sync'`` is ``'dist_sync'``), which run on Dask
distributed in a job started by ``dagnet launch`` (see :mod:`dagnet.launcher`).
"""

from __future__ import annotations

from collections.abc import Callable

from .._argcheck import ArgumentTypeError
from .._errors import DagnetError, UnknownNameError
from ._base import Key, KVStore, KVStoreError, UninitializedKeyError
from ._dist import DIST_STORE_TYPES, JOB_ENV, DistKVStore, DistributedKVStoreError
from ._local import DeviceKVStore, LocalKVStore
from ._registry import KVStoreBase, TestStore, UnknownCapabilityError
from ._server import ParameterServer

__all__ = ["create", "KVStore", "KVStoreBase", "TestStore", "UnknownCapabilityError",
           "LocalKVStore", "DeviceKVStore", "KVStoreError",
           "UninitializedKeyError", "UnknownKVStoreTypeError", "KVStoreUnavailableError",
           "Key", "DistKVStore", "DistributedKVStoreError", "JOB_ENV", "ParameterServer"]


class UnknownKVStoreTypeError(UnknownNameError, ValueError):
    """A store type name that no store provides."""


class KVStoreUnavailableError(DagnetError, RuntimeError):
    """A store type MXNet has but this installation cannot create."""


# name -> factory taking the name.  MXNet's older names for the two local stores
# are kept so that old scripts run.
_STORE_TYPES: dict[str, Callable[[str], KVStore]] = {
    "local": LocalKVStore,
    "local_update_cpu": LocalKVStore,
    "local_allreduce_cpu": LocalKVStore,
    "device": DeviceKVStore,
    "local_allreduce_device": DeviceKVStore,
}
# The distributed stores (on Dask; they import it only when created).
_STORE_TYPES.update(DIST_STORE_TYPES)

_UNAVAILABLE = {
    "nccl": "dagnet does not bind NVIDIA NCCL; use 'device' to sum on a GPU",
}


def create(name: str = "local") -> KVStoreBase:
    """A new key-value store of type ``name``: ``'local'``, ``'device'``, ``'dist_sync'``
    or ``'dist_async'``, or a class registered with :meth:`KVStoreBase.register` (by its
    lower-cased name, such as ``'teststore'``)."""
    if not isinstance(name, str):
        raise ArgumentTypeError(f"kvstore.create: name must be a str such as 'local', got "
                                f"{type(name).__name__}")
    registered = KVStoreBase.kv_registry.get(name.lower())
    if registered is not None:
        return registered()
    factory = _STORE_TYPES.get(name)
    if factory is not None:
        return factory(name)
    if name in _UNAVAILABLE:
        raise KVStoreUnavailableError(f"KVStore type {name!r} is not available: "
                                      f"{_UNAVAILABLE[name]}")
    known = sorted(set(_STORE_TYPES) | set(KVStoreBase.kv_registry))
    later = sorted(n for n in _UNAVAILABLE if n not in _STORE_TYPES)
    raise UnknownKVStoreTypeError(
        f"unknown KVStore type {name!r}; expected one of {', '.join(known)}"
        + (f" (MXNet also names {', '.join(later)}, not available here)" if later else ""))
