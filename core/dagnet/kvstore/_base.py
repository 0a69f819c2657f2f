"""The :class:`KVStore` interface and everything every store shares: checking keys and
values, grouping them per key, the updater and its saved states.

A store variant supplies only where it sums the values pushed for one key
(:meth:`KVStore._reduce_context`) and whether the stored value follows the sum
to that device (:attr:`KVStore._stored_follows_sum`).  The sums and copies are
NDArray operations, so they run asynchronously through the engine like any
other operator.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from .._argcheck import ArgumentTypeError
from .._errors import DagnetError, ShapeError
from ..context import Context, cpu
from ._registry import KVStoreBase

__all__ = ["KVStore", "KVStoreError", "UninitializedKeyError", "Key"]

Key = int | str


class KVStoreError(DagnetError, ValueError):
    """Misuse of a key-value store: a key initialised twice, int and str keys mixed,
    values that do not pair with the keys, optimizer states without an optimizer."""


class UninitializedKeyError(KVStoreError, KeyError):
    """A push or pull of a key that ``init`` never stored."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else ""


class KVStore(KVStoreBase):
    """A key-value store for data-parallel training (MXNet's ``mx.kv.KVStore``).

    Keys are ints or strs (one kind per store).  ``init`` stores a value,
    ``push`` sums the values given for a key (one per device) and either stores
    the sum or, after :meth:`set_optimizer`, applies the optimizer's update to the
    stored weight with the sum as gradient; ``pull`` copies the stored value into
    every output array.  Create stores with :func:`dagnet.kv.create`.
    """

    #: Capability names :meth:`is_capable` knows (MXNet's ``KVStoreBase.OPTIMIZER``).
    OPTIMIZER = "optimizer"

    # Whether a push moves the stored value to the device where the sum is made.
    _stored_follows_sum = False

    def __init__(self, name: str) -> None:
        self._type = name
        self._store: dict[Key, Any] = {}
        self._key_type: type | None = None
        self._updater: Callable[[Key, Any, Any], None] | None = None

    # -- what a variant decides ------------------------------------------------------
    def _reduce_context(self, values: list[Any]) -> Context:
        """The device on which the values pushed for one key are summed."""
        raise NotImplementedError(f"{type(self).__name__} must define _reduce_context")

    # -- properties ------------------------------------------------------------------
    @property
    def type(self) -> str:
        """The name the store was created with (``'local'``, ``'device'``, ...)."""
        return self._type

    @property
    def rank(self) -> int:
        """This worker's index among the workers: 0 for a single-process store."""
        return 0

    @property
    def num_workers(self) -> int:
        """How many workers share the store: 1 for a single-process store."""
        return 1

    def is_capable(self, capability: str) -> bool:
        """Whether the store supports ``capability``; a local store can run an optimizer
        (``'optimizer'``)."""
        if capability.lower() == self.OPTIMIZER:
            return True
        raise KVStoreError(f"unknown capability {capability!r}; expected {self.OPTIMIZER!r}")

    # -- the operations --------------------------------------------------------------
    def init(self, key: Key | Sequence[Key], value: Any) -> None:
        """Store the first value of ``key`` (or of each key of a list, with a list of
        values): a copy on the CPU.  A key can be initialised only once."""
        for k, values in self._pairs(key, value, "init", "value", many_per_key=False):
            self._check_key_type(k, "init")
            if k in self._store:
                raise KVStoreError(f"duplicate init of key {k!r}: it already holds a value; "
                                   f"call init once per key (push or pull to use it)")
            (array,) = values
            self._store[k] = array.copyto(cpu())

    def push(self, key: Key | Sequence[Key], value: Any, priority: int = 0) -> None:
        """Push ``value`` for ``key``: a list of arrays (one per device) is summed first
        (row_sparse arrays row by row: the sum holds the union of their rows).

        Without an optimizer (or updater) the sum replaces the stored value (taking its
        storage type, as MXNet's local store does); with one,
        ``updater(key, sum, stored)`` updates the stored weight in place.  Repeated keys
        in a list of keys are summed together.  ``priority`` is a scheduling hint;
        every push is ordered after the earlier ones on the same arrays either way."""
        for k, values in self._pairs(key, value, "push", "value", many_per_key=True):
            stored = self._stored(k, "push")
            for array in values:
                self._check_shape(k, "pushed", array, stored)
                _check_pushed_stype(k, array)
            target = self._reduce_context(values)
            merged = self._merge(values, target)
            if self._stored_follows_sum and stored.context != target:
                stored = self._store[k] = stored.copyto(target)
            if self._updater is not None:
                self._updater(k, merged, stored)
            elif merged.stype != stored.stype:
                self._store[k] = merged.copyto(stored.context)
            else:
                merged.copyto(stored)

    def pull(self, key: Key | Sequence[Key], out: Any = None, priority: int = 0,
             ignore_sparse: bool = True) -> None:
        """Copy the stored value of ``key`` into ``out`` (an array, or a list of arrays
        that each get it, one per device); with a list of keys, ``out`` holds one entry
        per key.  With ``ignore_sparse`` (the default, as MXNet) sparse outputs are left
        untouched: pull rows of a row_sparse value with :meth:`row_sparse_pull`."""
        skipped = False
        for k, outs in self._out_pairs(key, out):
            stored = self._store[k]
            for array in outs:
                if array.stype != "default" and ignore_sparse:
                    skipped = True
                    continue
                stored.copyto(array)
        if skipped:
            _warn_ignored_sparse_pull()

    def row_sparse_pull(self, key: Key | Sequence[Key], out: Any = None, priority: int = 0,
                        row_ids: Any = None) -> None:
        """Pull only the rows ``row_ids`` of a row_sparse value into row_sparse ``out``.

        ``row_ids`` is a 1-D NDArray of row indices (repeats and any order allowed) or a
        list of them, one per output array; a single ``row_ids`` with a list of outputs
        pulls those rows into every output.  The other rows of each output are zero
        afterwards (MXNet's ``retain`` of the stored value)."""
        from ..ndarray import NDArray

        if out is None or row_ids is None:
            raise ArgumentTypeError("KVStore.row_sparse_pull: out and row_ids are required: "
                                    "the RowSparseNDArray(s) to fill and the NDArray(s) of "
                                    "row indices to pull")
        if isinstance(row_ids, NDArray):
            row_ids = [row_ids]
        if not isinstance(row_ids, (list, tuple)):
            raise ArgumentTypeError(f"KVStore.row_sparse_pull: row_ids must be an NDArray or "
                                    f"a list of NDArrays, got {type(row_ids).__name__}")
        row_ids = list(row_ids)
        first_out, copies = out, []
        if len(row_ids) == 1 and isinstance(out, (list, tuple)):
            first_out, copies = [out[0]], list(out[1:])
        outs = self._pairs(key, first_out, "row_sparse_pull", "out", many_per_key=True)
        ids = self._pairs(key, row_ids, "row_sparse_pull", "row_ids", many_per_key=True)
        for (k, arrays), (_, rows) in zip(outs, ids):
            if len(arrays) != len(rows):
                raise KVStoreError(f"KVStore.row_sparse_pull: key {k!r} got {len(arrays)} "
                                   f"output arrays but {len(rows)} row_ids; give one row_ids "
                                   f"NDArray per output")
            stored = self._stored(k, "row_sparse_pull")
            for array, row_id in zip(arrays, rows):
                self._check_shape(k, "output", array, stored)
                if array.stype != "row_sparse":
                    raise KVStoreError(f"KVStore.row_sparse_pull: the output for key {k!r} "
                                       f"has storage type {array.stype!r}; it must be "
                                       f"row_sparse (use pull for dense outputs)")
                if row_id.stype != "default":
                    raise KVStoreError(f"KVStore.row_sparse_pull: the row_ids for key {k!r} "
                                       f"must be a dense NDArray, got {row_id.stype}")
            source = self._row_sparse_source(k)
            for array, row_id in zip(arrays, rows):
                _retain_into(source, row_id, array)
        for array in copies:
            out[0].copyto(array)

    def _out_pairs(self, key: Key | Sequence[Key], out: Any) -> list[tuple[Key, list[Any]]]:
        """``(key, output arrays)`` of a pull, each key initialised and each array of its
        key's shape."""
        if out is None:
            raise ArgumentTypeError("KVStore.pull: out is required; pass the NDArray (or a "
                                    "list of NDArrays, one per device) to copy the value into")
        pairs = self._pairs(key, out, "pull", "out", many_per_key=True)
        for k, outs in pairs:
            stored = self._stored(k, "pull")
            for array in outs:
                self._check_shape(k, "output", array, stored)
        return pairs

    def _row_sparse_source(self, key: Key) -> Any:
        """The row_sparse value whose rows :meth:`row_sparse_pull` hands out."""
        stored = self._store[key]
        if stored.stype != "row_sparse":
            raise KVStoreError(f"KVStore.row_sparse_pull: key {key!r} holds a {stored.stype} "
                               f"value; row_sparse_pull needs a row_sparse one (use pull for "
                               f"dense values)")
        return stored

    def pushpull(self, key: Key | Sequence[Key], value: Any, out: Any = None,
                 priority: int = 0) -> None:
        """:meth:`push` then :meth:`pull` into ``out`` (into ``value`` itself when ``out``
        is None, as MXNet)."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key: Key | Sequence[Key], value: Any, out: Any,
                  priority: int = 0) -> None:
        """:meth:`init` ``key`` with ``value`` and :meth:`pull` it into ``out``."""
        self.init(key, value)
        self.pull(key, out, priority)

    def barrier(self) -> None:
        """Wait until every worker gets here: with one worker there is none to wait for."""

    _barrier = barrier

    # -- optimizer -------------------------------------------------------------------
    def set_optimizer(self, optimizer: Any) -> None:
        """Update stored weights with ``optimizer`` (a :class:`dagnet.optimizer.Optimizer`)
        at every push, keeping the optimizer's state per key in the store."""
        from .. import optimizer as opt

        self.set_updater(opt.get_updater(self._check_optimizer(optimizer)))

    @staticmethod
    def _check_optimizer(optimizer: Any) -> Any:
        """``optimizer``, once it is known to be a :class:`dagnet.optimizer.Optimizer`."""
        from .. import optimizer as opt

        if not isinstance(optimizer, opt.Optimizer):
            raise ArgumentTypeError(f"KVStore.set_optimizer: expected a dagnet.optimizer."
                                    f"Optimizer such as mx.optimizer.SGD(), got "
                                    f"{type(optimizer).__name__}")
        return optimizer

    def set_updater(self, updater: Callable[[Key, Any, Any], None]) -> None:
        """Call ``updater(key, pushed_sum, stored_weight)`` at every push instead of
        replacing the stored value; the updater changes ``stored_weight`` in place."""
        if not callable(updater):
            raise ArgumentTypeError(f"KVStore.set_updater: the updater must be callable as "
                                    f"updater(key, grad, weight), got {type(updater).__name__}")
        self._updater = updater

    _set_updater = set_updater

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the optimizer's states (and with ``dump_optimizer`` the optimizer) to
        ``fname``, for :meth:`load_optimizer_states`."""
        updater = self._state_updater("save_optimizer_states")
        with open(fname, "wb") as fout:
            fout.write(updater.get_states(dump_optimizer))

    def load_optimizer_states(self, fname: str) -> None:
        """Read optimizer states written by :meth:`save_optimizer_states`."""
        updater = self._state_updater("load_optimizer_states")
        with open(fname, "rb") as fin:
            updater.set_states(fin.read())

    def _state_updater(self, what: str) -> Any:
        if self._updater is None:
            raise KVStoreError(f"KVStore.{what}: the store has no optimizer; call "
                               f"set_optimizer(optimizer) first")
        if not hasattr(self._updater, "get_states"):
            raise KVStoreError(f"KVStore.{what}: the updater set with set_updater keeps no "
                               f"states to save; use set_optimizer(optimizer) instead")
        return self._updater

    # -- helpers ---------------------------------------------------------------------
    def _merge(self, values: list[Any], target: Context) -> Any:
        """The sum of ``values`` on ``target``: one ``add_n`` over copies where needed."""
        from .. import ndarray

        local = [v if v.context == target else v.copyto(target) for v in values]
        if len(local) == 1:
            return local[0]
        return ndarray.add_n(*local)

    def _stored(self, key: Key, what: str) -> Any:
        try:
            return self._store[key]
        except KeyError:
            hint = ""
            if self._key_type is not None and not isinstance(key, self._key_type):
                hint = (f"; this store's keys are {self._key_type.__name__}s and int and str "
                        f"keys cannot be mixed")
            raise UninitializedKeyError(
                f"KVStore.{what}: key {key!r} has not been initialised{hint}; call "
                f"kv.init({key!r}, value) first") from None

    def _check_key_type(self, key: Key, what: str) -> None:
        kind = str if isinstance(key, str) else int
        if self._key_type is None:
            self._key_type = kind
        elif kind is not self._key_type:
            raise KVStoreError(
                f"KVStore.{what}: key {key!r} is a {kind.__name__} but this store's keys are "
                f"{self._key_type.__name__}s; int and str keys cannot be mixed in one store")

    @staticmethod
    def _check_shape(key: Key, what: str, array: Any, stored: Any) -> None:
        if tuple(array.shape) != tuple(stored.shape):
            raise ShapeError(f"KVStore: the {what} array for key {key!r} has shape "
                             f"{tuple(array.shape)} but the stored value has shape "
                             f"{tuple(stored.shape)}; arrays of one key must all have its shape")

    @staticmethod
    def _pairs(key: Any, value: Any, what: str, value_name: str,
               many_per_key: bool) -> list[tuple[Key, list[Any]]]:
        """``(key, arrays)`` per distinct key, in first-seen order, arrays of a repeated
        key joined; ``value`` pairs with ``key`` as MXNet pairs them."""
        if isinstance(key, (list, tuple)):
            keys = [_check_key(k, what) for k in key]
            if not isinstance(value, (list, tuple)) or len(value) != len(keys):
                got = (f"{len(value)} entries" if isinstance(value, (list, tuple))
                       else f"a {type(value).__name__}")
                raise KVStoreError(f"KVStore.{what}: {len(keys)} keys need a list of "
                                   f"{len(keys)} {value_name}s, one per key, but got {got}")
            entries = list(value)
        else:
            keys, entries = [_check_key(key, what)], [value]
        grouped: dict[Key, list[Any]] = {}
        for k, entry in zip(keys, entries):
            arrays = _arrays(entry, k, what, value_name)
            if not many_per_key and (len(arrays) != 1 or k in grouped):
                raise KVStoreError(f"KVStore.{what}: key {k!r} got more than one {value_name}; "
                                   f"init takes exactly one NDArray per key")
            grouped.setdefault(k, []).extend(arrays)
        return list(grouped.items())

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._type!r} with {len(self._store)} keys>"


def _check_key(key: Any, what: str) -> Key:
    if isinstance(key, str):
        return key
    if isinstance(key, numbers.Integral) and not isinstance(key, bool):
        return int(key)
    raise ArgumentTypeError(f"KVStore.{what}: a key must be an int or a str, got {key!r} "
                            f"({type(key).__name__})")


def _check_pushed_stype(key: Key, array: Any) -> None:
    if array.stype not in ("default", "row_sparse"):
        raise KVStoreError(f"KVStore.push: the value pushed for key {key!r} has storage type "
                           f"{array.stype!r}; a store sums dense and row_sparse values only "
                           f"(convert with .tostype('default'))")


_warned_ignored_pull = False


def _warn_ignored_sparse_pull() -> None:
    global _warned_ignored_pull
    if not _warned_ignored_pull:
        _warned_ignored_pull = True
        warnings.warn("KVStore.pull: sparse output arrays were left untouched; pull "
                      "row_sparse values with row_sparse_pull(key, out, row_ids=...) or pass "
                      "ignore_sparse=False", stacklevel=3)


def _retain_into(stored: Any, row_id: Any, out: Any) -> None:
    """``out = retain(stored, row_id)`` (on ``stored``'s device, then copied into ``out``)."""
    import numpy as np

    from ..ndarray import sparse

    ids = row_id if row_id.context == stored.context else row_id.copyto(stored.context)
    if ids.dtype != np.int64:
        ids = ids.astype(np.int64)
    sparse.retain(stored, ids.reshape((-1,))).copyto(out)


def _arrays(entry: Any, key: Key, what: str, value_name: str) -> list[Any]:
    from ..ndarray import NDArray

    arrays = list(entry) if isinstance(entry, (list, tuple)) else [entry]
    if not arrays:
        raise KVStoreError(f"KVStore.{what}: key {key!r} got an empty list of {value_name}s")
    for array in arrays:
        if not isinstance(array, NDArray):
            raise ArgumentTypeError(
                f"KVStore.{what}: the {value_name} for key {key!r} must be an NDArray or a "
                f"list of NDArrays, got {type(array).__name__} (convert with mx.nd.array)")
    return arrays

