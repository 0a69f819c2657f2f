"""MXNet's ``KVStoreBase``: the interface every store offers and the registry through
which Python classes become store types for :func:`dagnet.kv.create`, plus MXNet's
``TestStore`` (``'teststore'``), a registered store that sums in Python and has no
optimizer."""

from __future__ import annotations

import warnings
from typing import Any

from .._argcheck import ArgumentTypeError
from .._errors import DagnetError

__all__ = ["KVStoreBase", "TestStore", "UnknownCapabilityError"]


class UnknownCapabilityError(DagnetError, ValueError):
    """A capability name a store does not know."""


class KVStoreBase:
    """The interface of a key-value store for data-parallel training.

    Subclasses implement :meth:`broadcast`, :meth:`pushpull`, :meth:`is_capable` and the
    ``type``/``rank``/``num_workers`` properties (and, when capable of ``'optimizer'``,
    :meth:`set_optimizer` and the optimizer-state methods).  Decorate a subclass with
    :meth:`register` to create it by its lower-cased class name with ``mx.kv.create``.
    """

    #: The capability name of running an optimizer on the store.
    OPTIMIZER = "optimizer"

    #: lower-cased class name -> registered class
    kv_registry: dict[str, type] = {}

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Store ``value`` under ``key`` and copy it into ``out`` (an array or a list)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement broadcast")

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Sum ``value`` (an array or one per device) and write the sum into ``out``
        (into ``value`` itself when ``out`` is None)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement pushpull")

    def set_optimizer(self, optimizer: Any) -> None:
        """Run ``optimizer`` on the store (stores capable of ``'optimizer'`` only)."""
        raise NotImplementedError(f"{type(self).__name__} cannot run an optimizer")

    def is_capable(self, capability: str) -> bool:
        """Whether the store supports ``capability`` (such as ``'optimizer'``)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement is_capable")

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the optimizer's states to ``fname``."""
        raise NotImplementedError(f"{type(self).__name__} keeps no optimizer states")

    def load_optimizer_states(self, fname: str) -> None:
        """Read optimizer states written by :meth:`save_optimizer_states`."""
        raise NotImplementedError(f"{type(self).__name__} keeps no optimizer states")

    @property
    def type(self) -> str:
        """The store's type name."""
        raise NotImplementedError(f"{type(self).__name__} does not implement type")

    @property
    def rank(self) -> int:
        """This worker's index among the workers."""
        raise NotImplementedError(f"{type(self).__name__} does not implement rank")

    @property
    def num_workers(self) -> int:
        """How many workers share the store."""
        raise NotImplementedError(f"{type(self).__name__} does not implement num_workers")

    @staticmethod
    def register(klass: type) -> type:
        """Class decorator: make ``klass`` creatable as ``mx.kv.create(name)`` with ``name``
        its lower-cased class name (a later class of the same name replaces it, with a
        warning)."""
        if not isinstance(klass, type):
            raise ArgumentTypeError(f"KVStoreBase.register decorates a class, got "
                                    f"{type(klass).__name__}")
        name = klass.__name__.lower()
        previous = KVStoreBase.kv_registry.get(name)
        if previous is not None and previous is not klass:
            warnings.warn(f"KVStoreBase.register: {klass.__module__}.{klass.__name__} replaces "
                          f"the store {previous.__module__}.{previous.__name__} of the same "
                          f"name", stacklevel=2)
        KVStoreBase.kv_registry[name] = klass
        return klass


@KVStoreBase.register
class TestStore(KVStoreBase):
    """MXNet's store for testing the interface: sums in Python on the first value's
    device, keeps nothing, and cannot run an optimizer."""

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Copy ``value`` into every array of ``out``."""
        for array in out if isinstance(out, list) else [out]:
            array[:] = value

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Write the sum of ``value`` (one array or a list) into ``out`` (or ``value``)."""
        values = value if isinstance(value, list) else [value]
        total = values[0]
        if len(values) > 1:
            ctx = values[0].context
            total = values[0].copy()
            for other in values[1:]:
                total += other.as_in_context(ctx)
        targets = values if out is None else (out if isinstance(out, list) else [out])
        for array in targets:
            if array is not total:
                array[:] = total

    @staticmethod
    def is_capable(capability: str) -> bool:
        """``'optimizer'``: False (the updates run on the devices)."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise UnknownCapabilityError(f"Unknown capability: {capability!r}; the capability "
                                     f"names are {KVStoreBase.OPTIMIZER!r}")

    @property
    def type(self) -> str:
        """``'teststore'``."""
        return "teststore"

    @property
    def rank(self) -> int:
        """0: one worker."""
        return 0

    @property
    def num_workers(self) -> int:
        """1: one worker."""
        return 1
