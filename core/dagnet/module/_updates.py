"""How a module applies its optimizer: on the key-value store, or with a local updater
(MXNet's ``model._create_kvstore``, ``_initialize_kvstore``, ``_update_params_on_kvstore``
and ``_update_params``)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from .._argcheck import ArgumentTypeError

__all__ = ["create_kvstore", "initialize_kvstore", "update_params_on_kvstore", "update_params"]

# Above this many elements in one parameter, a 'local' store updates on the devices
# instead (its updates would run on the CPU), as MXNet decides.
_LARGEST_UPDATED_ON_STORE = 1024 * 1024 * 16


def create_kvstore(kvstore: Any, num_device: int,
                   arg_params: Mapping[str, Any]) -> tuple[Any, bool]:
    """``(store or None, update_on_kvstore)`` for a module on ``num_device`` devices.

    A store object is used as given.  A type name makes a store only when there is
    something to share: several devices, or a distributed type; one device updates
    its weights itself.  ``MXNET_UPDATE_ON_KVSTORE=0`` keeps updates off the store.
    """
    from .. import kvstore as kvs

    update_on_kvstore = bool(int(os.environ.get("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        store = None
    elif isinstance(kvstore, kvs.KVStore):
        store = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            store = None
        else:
            store = kvs.create(kvstore)
            if kvstore == "local" and arg_params:
                largest = max(math.prod(p.shape) for p in arg_params.values())
                if largest > _LARGEST_UPDATED_ON_STORE:
                    update_on_kvstore = False
    else:
        raise ArgumentTypeError(f"kvstore must be a KVStore, a type name such as 'local', or "
                                f"None, got {type(kvstore).__name__}")
    if store is None:
        return None, False
    return store, update_on_kvstore and store.is_capable(kvs.KVStore.OPTIMIZER)


def initialize_kvstore(kvstore: Any, param_arrays: list[list[Any]],
                       arg_params: Mapping[str, Any], param_names: list[str],
                       update_on_kvstore: bool) -> None:
    """Put every parameter in the store, and with ``update_on_kvstore`` copy the stored
    weights back to every device."""
    for index, name in enumerate(param_names):
        kvstore.init(name, arg_params[name])
        if update_on_kvstore:
            kvstore.pull(name, param_arrays[index], priority=-index)


def update_params_on_kvstore(param_arrays: list[list[Any]], grad_arrays: list[list[Any]],
                             kvstore: Any, param_names: list[str]) -> None:
    """Push every gradient (summed over the devices) to the store, which updates the
    weight, and pull the new weight to every device: one pushpull for all parameters,
    so a distributed store makes one round trip per step, not one per parameter."""
    chosen = [i for i, grads in enumerate(grad_arrays) if grads[0] is not None]
    if chosen:
        kvstore.pushpull([param_names[i] for i in chosen], [grad_arrays[i] for i in chosen],
                         out=[param_arrays[i] for i in chosen])


def update_params(param_arrays: list[list[Any]], grad_arrays: list[list[Any]], updater: Any,
                  num_device: int, kvstore: Any = None,
                  param_names: list[str] | None = None) -> None:
    """Update every device's weights with ``updater``; with a store, the gradients are
    first summed over the devices through it.  Device ``k``'s copy of parameter ``i``
    has update index ``i * num_device + k``."""
    chosen = [i for i, grads in enumerate(grad_arrays) if grads[0] is not None]
    if kvstore is not None and chosen:  # one pushpull sums every gradient over the devices
        kvstore.pushpull([param_names[i] for i in chosen], [grad_arrays[i] for i in chosen],
                         out=[grad_arrays[i] for i in chosen])
    updates: list[list[tuple[int, Any, Any]]] = [[] for _ in range(num_device)]
    for index in chosen:
        weights, grads = param_arrays[index], grad_arrays[index]
        for k, (weight, grad) in enumerate(zip(weights, grads)):
            updates[k].append((index * num_device + k, grad, weight))
    for device_updates in updates:
        if device_updates:
            indices, grads, weights = zip(*device_updates)
            updater(list(indices), list(grads), list(weights))
