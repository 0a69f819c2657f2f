"""The distributed stores, ``dist_sync`` and ``dist_async``, on Dask distributed.

A training process started by ``dagnet launch`` finds in its environment the
address of the job's Dask scheduler, the parameter server actor (see
:mod:`._server`), its rank and the number of workers.  :class:`DistKVStore`
keeps the :class:`~dagnet.kvstore.KVStore` interface: the values a process
pushes for a key are summed over its devices through the engine, as the local
store sums them, then sent to the server as one array per key; ``pull`` copies
what the server returns into every output array.  A background thread sends a
heartbeat, so that the server notices a process that died; a call the server
cannot answer (the job lost a worker, the server's Dask worker died) raises a
:class:`DistributedKVStoreError` saying what happened.
"""

from __future__ import annotations

import atexit
import os
import pickle
import threading
from collections.abc import Sequence
from typing import Any

from .._errors import DagnetError
from ..context import cpu
from ..ndarray._invoke import assign
from ._base import Key, KVStore, KVStoreError

__all__ = ["DistKVStore", "DistributedKVStoreError", "JOB_ENV", "DIST_STORE_TYPES", "connect"]

#: Environment variables ``dagnet launch`` sets for each training process.
JOB_ENV = {
    "scheduler": "DAGNET_KV_SCHEDULER",
    "server_address": "DAGNET_KV_SERVER_ADDRESS",
    "server_key": "DAGNET_KV_SERVER_KEY",
    "mode": "DAGNET_KV_MODE",
    "rank": "DAGNET_KV_RANK",
    "num_workers": "DAGNET_KV_NUM_WORKERS",
}
_HEARTBEAT_SECONDS = 0.5


class DistributedKVStoreError(DagnetError, RuntimeError):
    """The distributed store cannot be reached or lost a worker of its job."""


def connect() -> tuple[Any, Any, dict[str, Any]]:
    """The Dask client and the parameter server actor of this process's job, and the
    job's settings, from the environment ``dagnet launch`` sets."""
    missing = [var for var in JOB_ENV.values() if not os.environ.get(var)]
    if missing:
        raise DistributedKVStoreError(
            f"the distributed KVStore needs a job started by the launcher, but "
            f"{', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set; run "
            f"`dagnet launch -n 2 python your_script.py ...` (add --scheduler ADDRESS to use "
            f"an existing Dask cluster)")
    try:
        from distributed import Client
        from distributed.actor import Actor
    except ImportError as error:
        raise DistributedKVStoreError(
            f"the distributed KVStore runs on Dask distributed, which is not installed "
            f"({error}); install it with pip install 'dagnet[dist]'") from None
    from ._server import ParameterServer

    settings = {name: os.environ[var] for name, var in JOB_ENV.items()}
    try:
        # direct_to_workers: calls go straight to the server's worker, not via the scheduler
        client = Client(settings["scheduler"], timeout=30, set_as_default=True,
                        direct_to_workers=True)
    except OSError as error:
        raise DistributedKVStoreError(
            f"cannot reach the job's Dask scheduler at {settings['scheduler']}: {error}; is "
            f"the launcher (or the scheduler it joined) still running?") from None
    server = Actor(ParameterServer, settings["server_address"], settings["server_key"])
    return client, server, settings


class DistKVStore(KVStore):
    """MXNet's ``dist_sync`` / ``dist_async`` store: one parameter server for the job,
    reached through Dask.  Keys, values and errors as for the local store; ``rank``
    and ``num_workers`` come from the launcher."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._client, self._server, settings = connect()
        mode = "async" if name == "dist_async" else "sync"
        if settings["mode"] != mode:
            raise DistributedKVStoreError(
                f"this job's parameter server runs in {settings['mode']} mode but the script "
                f"creates {name!r}; launch with --kvstore-mode {mode} or create "
                f"'dist_{settings['mode']}'")
        self._rank = int(settings["rank"])
        self._num_workers = int(settings["num_workers"])
        self._pushes: dict[Key, int] = {}
        self._closed = threading.Event()
        self._call("heartbeat", self._rank)
        self._beat = threading.Thread(target=self._heartbeat, name=f"dagnet-kv-heartbeat-"
                                      f"{self._rank}", daemon=True)
        self._beat.start()
        atexit.register(self.close)

    # -- what the launcher decides ---------------------------------------------------
    @property
    def rank(self) -> int:
        """This process's index among the job's workers (0 to ``num_workers - 1``)."""
        return self._rank

    @property
    def num_workers(self) -> int:
        """How many training processes the job has."""
        return self._num_workers

    def _reduce_context(self, values: list[Any]) -> Any:
        return cpu()

    # -- the operations --------------------------------------------------------------
    def init(self, key: Key | Sequence[Key], value: Any) -> None:
        """Initialise keys on the server: worker 0's values are kept, the other workers
        wait until they are there (every worker calls init with the same keys)."""
        items = []
        for k, (array,) in self._pairs(key, value, "init", "value", many_per_key=False):
            self._check_key_type(k, "init")
            if k in self._store:
                raise KVStoreError(f"duplicate init of key {k!r}: it already holds a value; "
                                   f"call init once per key (push or pull to use it)")
            self._store[k] = array  # the shape and dtype, for the checks of push and pull
            self._pushes[k] = 0
            items.append((k, array.asnumpy()))
        self._call("init", self._rank, items)

    def push(self, key: Key | Sequence[Key], value: Any, priority: int = 0) -> None:
        """Sum the values of each key over this process's devices and send the sums."""
        self._call("push", self._rank, self._push_items(key, value))

    def _push_items(self, key: Key | Sequence[Key], value: Any) -> list[tuple[Key, Any]]:
        items = []
        for k, values in self._pairs(key, value, "push", "value", many_per_key=True):
            stored = self._stored(k, "push")
            for array in values:
                self._check_shape(k, "pushed", array, stored)
            items.append((k, _host_values(self._merge(values, cpu()))))
            self._pushes[k] += 1
        return items

    def pushpull(self, key: Key | Sequence[Key], value: Any, out: Any = None,
                 priority: int = 0) -> None:
        """:meth:`push` and, when ``out`` is given, :meth:`pull` in one round trip to the
        server."""
        if out is None:
            self.push(key, value, priority)
            return
        pairs = self._out_pairs(key, out)
        items = self._push_items(key, value)
        values = self._call("pushpull", self._rank, items, [self._pushes[k] for k, _ in items])
        by_key = dict(zip([k for k, _ in items], values))
        for k, outs in pairs:
            for array in outs:
                assign(array, by_key[k], owned=True)

    def pull(self, key: Key | Sequence[Key], out: Any = None, priority: int = 0,
             ignore_sparse: bool = True) -> None:
        """Copy each key's value on the server into ``out``; with ``dist_sync``, the
        value after every worker's push of the same round."""
        if out is None:
            raise KVStoreError("KVStore.pull: out is required; pass the NDArray (or a list "
                               "of NDArrays, one per device) to copy the value into")
        pairs = self._out_pairs(key, out)
        values = self._call("pull", self._rank, [(k, self._pushes[k]) for k, _ in pairs])
        for (_, outs), value in zip(pairs, values):
            for array in outs:
                assign(array, value, owned=True)  # the reply is ours alone: no copy

    def _out_pairs(self, key: Key | Sequence[Key], out: Any) -> list[tuple[Key, list[Any]]]:
        pairs = self._pairs(key, out, "pull", "out", many_per_key=True)
        for k, outs in pairs:
            stored = self._stored(k, "pull")
            for array in outs:
                self._check_shape(k, "output", array, stored)
        return pairs

    def barrier(self) -> None:
        """Wait until every worker of the job calls barrier."""
        self._call("barrier", self._rank)

    _barrier = barrier

    # -- optimizer -------------------------------------------------------------------
    def set_optimizer(self, optimizer: Any) -> None:
        """Run ``optimizer`` on the server (worker 0's is used; every worker calls this,
        and returns once all have)."""
        from .. import optimizer as opt

        if not isinstance(optimizer, opt.Optimizer):
            raise KVStoreError(f"KVStore.set_optimizer: expected a dagnet.optimizer.Optimizer "
                               f"such as mx.optimizer.SGD(), got {type(optimizer).__name__}")
        self._call("set_optimizer", self._rank, pickle.dumps(optimizer))
        self.barrier()

    def set_updater(self, updater: Any) -> None:
        """Not possible for a distributed store: the update runs on the server."""
        raise KVStoreError(f"KVStore {self.type!r}: a Python updater cannot run on the "
                           f"parameter server; use set_optimizer(optimizer)")

    _set_updater = set_updater

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the server's optimizer states to ``fname``."""
        with open(fname, "wb") as fout:
            fout.write(self._call("optimizer_states", dump_optimizer))

    def load_optimizer_states(self, fname: str) -> None:
        """Load optimizer states into the server (worker 0's file is used)."""
        with open(fname, "rb") as fin:
            self._call("load_optimizer_states", self._rank, fin.read())
        self.barrier()

    # -- connection ------------------------------------------------------------------
    def close(self) -> None:
        """Leave the job: the server stops waiting for this worker.  Called at exit."""
        if self._closed.is_set():
            return
        self._closed.set()
        try:
            self._call("leave", self._rank)
        except DistributedKVStoreError:
            pass  # the job is gone already; nothing waits for this worker
        self._client.close()

    def _heartbeat(self) -> None:
        while not self._closed.wait(_HEARTBEAT_SECONDS):
            try:
                self._server.heartbeat(self._rank).result()
            except Exception:  # the next call from the training loop reports it
                return

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self._server, method)(*args).result()
        except KeyError as error:
            raise KVStoreError(str(error.args[0]) if error.args else str(error)) from None
        except (ValueError, KVStoreError) as error:
            raise KVStoreError(f"KVStore {self.type!r}: {error}") from None
        except Exception as error:
            lost = type(error).__name__ == "WorkerLostError"
            reason = (str(error) if lost else
                      f"the parameter server could not be reached ({type(error).__name__}: "
                      f"{error}); its Dask worker or the scheduler may have died")
            raise DistributedKVStoreError(
                f"KVStore {self.type!r}, worker {self._rank} of {self._num_workers}: "
                f"{method} failed: {reason}") from error

    def __repr__(self) -> str:
        return (f"<DistKVStore {self.type!r} worker {self._rank} of {self._num_workers} with "
                f"{len(self._store)} keys>")


def _host_values(array: Any) -> Any:
    """``array``'s values for sending, without a copy: its own numpy buffer once pending
    writes finished (the call that sends it returns before anything can change it)."""
    array.wait_to_read()
    return array._xp()


DIST_STORE_TYPES = {
    "dist_sync": DistKVStore,
    "dist_device_sync": DistKVStore,
    "dist_sync_device": DistKVStore,
    "dist_async": DistKVStore,
}
