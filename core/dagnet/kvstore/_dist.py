"""The distributed stores, ``dist_sync`` and ``dist_async``, on Dask distributed.

A training process started by ``dagnet launch`` finds in its environment the
address of the job's Dask scheduler, its parameter server actors (see
:mod:`._server`), its rank and the number of workers.  :class:`DistKVStore`
keeps the :class:`~dagnet.kvstore.KVStore` interface: the values a process
pushes for a key are summed over its devices through the engine, as the local
store sums them, then sent to the servers; ``pull`` copies what they return
into every output array.

With several servers, as MXNet's parameter servers do, an array of at least
``BIGARRAY_BOUND`` elements is split into one contiguous slice per server and
a smaller one lives whole on one server chosen from its key; the calls to the
servers of one operation go out at once.  Values travel flattened; the
optimizers, all elementwise, update each slice where it lives.

A background thread sends a heartbeat, so that the servers notice a process
that died; a call they cannot answer (the job lost a worker, a server's Dask
worker died) raises a :class:`DistributedKVStoreError` saying what happened.
"""

from __future__ import annotations

import atexit
import os
import pickle
import threading
import zlib
from collections.abc import Sequence
from math import prod
from typing import Any

from .._errors import DagnetError
from ..context import cpu
from ..ndarray import assign
from ._base import Key, KVStore, KVStoreError, _warn_ignored_sparse_pull

__all__ = ["DistKVStore", "DistributedKVStoreError", "JOB_ENV", "DIST_STORE_TYPES", "connect",
           "BIGARRAY_BOUND"]

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
#: Arrays with at least this many elements are split over the servers (MXNet's
#: ``MXNET_KVSTORE_BIGARRAY_BOUND``, whose default this is).
BIGARRAY_BOUND = int(os.environ.get("MXNET_KVSTORE_BIGARRAY_BOUND", 1_000_000))


class DistributedKVStoreError(DagnetError, RuntimeError):
    """The distributed store cannot be reached or lost a worker of its job."""


def connect() -> tuple[Any, list[Any], dict[str, Any]]:
    """The Dask client and the parameter server actors of this process's job, and the
    job's settings, from the environment ``dagnet launch`` sets (the servers' addresses
    and keys are comma-separated lists)."""
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
    servers = [Actor(ParameterServer, address, key) for address, key in
               zip(settings["server_address"].split(","), settings["server_key"].split(","))]
    return client, servers, settings


class DistKVStore(KVStore):
    """MXNet's ``dist_sync`` / ``dist_async`` store: the job's parameter servers,
    reached through Dask.  Keys, values and errors as for the local store; ``rank``
    and ``num_workers`` come from the launcher."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._client, self._servers, settings = connect()
        mode = "async" if name == "dist_async" else "sync"
        if settings["mode"] != mode:
            raise DistributedKVStoreError(
                f"this job's parameter server runs in {settings['mode']} mode but the script "
                f"creates {name!r}; launch with --kvstore-mode {mode} or create "
                f"'dist_{settings['mode']}'")
        self._rank = int(settings["rank"])
        self._num_workers = int(settings["num_workers"])
        self._pushes: dict[Key, int] = {}
        self._parts: dict[Key, list[tuple[int, int, int]]] = {}  # (server, start, stop)
        self._closed = threading.Event()
        self._call_all("heartbeat", self._rank)
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
        """Initialise keys on the servers: worker 0's values are kept, the other workers
        wait until they are there (every worker calls init with the same keys)."""
        per_server: dict[int, list] = {}
        for k, (array,) in self._pairs(key, value, "init", "value", many_per_key=False):
            self._check_key_type(k, "init")
            if k in self._store:
                raise KVStoreError(f"duplicate init of key {k!r}: it already holds a value; "
                                   f"call init once per key (push or pull to use it)")
            self._store[k] = array  # the shape and dtype, for the checks of push and pull
            self._pushes[k] = 0
            self._parts[k] = _placement(k, prod(array.shape), len(self._servers))
            flat = array.asnumpy().reshape(-1)
            for server, begin, stop in self._parts[k]:
                per_server.setdefault(server, []).append((k, flat[begin:stop]))
        self._gather([(server, "init", (self._rank, items))
                      for server, items in per_server.items()])

    def push(self, key: Key | Sequence[Key], value: Any, priority: int = 0) -> None:
        """Sum the values of each key over this process's devices and send the sums."""
        self._gather([(server, "push", (self._rank, items))
                      for server, items in self._push_items(key, value).items()])

    def _push_items(self, key: Key | Sequence[Key], value: Any) -> dict[int, list]:
        """Per server, the ``(key, flat slice)`` pairs of a push."""
        per_server: dict[int, list] = {}
        for k, values in self._pairs(key, value, "push", "value", many_per_key=True):
            stored = self._stored(k, "push")
            for array in values:
                self._check_shape(k, "pushed", array, stored)
            merged = self._merge(values, cpu())
            if merged.stype != "default":  # the servers sum and update dense values
                merged = merged.tostype("default")
            flat = _host_values(merged).reshape(-1)
            self._pushes[k] += 1
            for server, begin, stop in self._parts[k]:
                per_server.setdefault(server, []).append((k, flat[begin:stop]))
        return per_server

    def pushpull(self, key: Key | Sequence[Key], value: Any, out: Any = None,
                 priority: int = 0) -> None:
        """:meth:`push` and :meth:`pull` into ``out`` (into ``value`` itself when ``out`` is
        None, as MXNet) in one round trip to each server."""
        if out is None:
            out = value
        pairs = self._out_pairs(key, out)
        per_server = self._push_items(key, value)
        replies = self._gather([
            (server, "pushpull", (self._rank, items, [self._pushes[k] for k, _ in items]))
            for server, items in per_server.items()])
        self._write_out(pairs, {server: [k for k, _ in items]
                                for server, items in per_server.items()}, replies)

    def pull(self, key: Key | Sequence[Key], out: Any = None, priority: int = 0,
             ignore_sparse: bool = True) -> None:
        """Copy each key's value on the servers into ``out``; with ``dist_sync``, the
        value after every worker's push of the same round.  Sparse outputs are left
        alone with ``ignore_sparse`` (use :meth:`row_sparse_pull`), else cast."""
        pairs, casts = self._dense_outs(self._out_pairs(key, out), ignore_sparse)
        per_server: dict[int, list] = {}
        for k, _ in pairs:
            for server, _, _ in self._parts[k]:
                per_server.setdefault(server, []).append(k)
        replies = self._gather([
            (server, "pull", (self._rank, [(k, self._pushes[k]) for k in keys]))
            for server, keys in per_server.items()])
        self._write_out(pairs, per_server, replies)
        for dense, given in casts:
            dense.copyto(given)

    @staticmethod
    def _dense_outs(pairs: list, ignore_sparse: bool) -> tuple[list, list]:
        """``pairs`` with every sparse output replaced by a dense stand-in (or dropped with
        ``ignore_sparse``), and the ``(stand-in, output)`` pairs to cast afterwards."""
        from .. import ndarray

        dense_pairs, casts, skipped = [], [], False
        for k, outs in pairs:
            kept = []
            for array in outs:
                if array.stype == "default":
                    kept.append(array)
                elif ignore_sparse:
                    skipped = True
                else:
                    stand_in = ndarray.zeros(array.shape, array.context, dtype=array.dtype)
                    casts.append((stand_in, array))
                    kept.append(stand_in)
            if kept:
                dense_pairs.append((k, kept))
        if skipped:
            _warn_ignored_sparse_pull()
        return dense_pairs, casts

    def _row_sparse_source(self, key: Key) -> Any:
        """The servers' current value of ``key`` as a row_sparse array on the CPU."""
        from .. import ndarray

        stored = self._stored(key, "row_sparse_pull")
        dense = ndarray.zeros(stored.shape, cpu(), dtype=stored.dtype)
        self.pull(key, out=dense)
        return dense.tostype("row_sparse")

    def _write_out(self, pairs: list, keys_of: dict[int, list], replies: list) -> None:
        """Copy the servers' replies (per server, one flat slice per key asked for) into
        the output arrays; a reply is ours alone, so it is written without a copy."""
        slices: dict[tuple[Key, int], Any] = {}
        for (server, keys), values in zip(keys_of.items(), replies):
            for k, part in zip(keys, values):
                slices[(k, server)] = part
        for k, outs in pairs:
            parts = self._parts[k]
            for array in outs:
                if len(parts) == 1:
                    assign(array, slices[(k, parts[0][0])].reshape(array.shape), owned=True)
                    continue
                flat = array.reshape((-1,))
                for server, begin, stop in parts:
                    assign(flat[begin:stop], slices[(k, server)], owned=True)

    def barrier(self) -> None:
        """Wait until every worker of the job calls barrier (kept by the first server)."""
        self._gather([(0, "barrier", (self._rank,))])

    _barrier = barrier

    # -- optimizer -------------------------------------------------------------------
    def set_optimizer(self, optimizer: Any) -> None:
        """Run ``optimizer`` on the servers (worker 0's is used; every worker calls this,
        and returns once all have)."""
        optimizer = self._check_optimizer(optimizer)
        self._call_all("set_optimizer", self._rank, pickle.dumps(optimizer))
        self.barrier()

    def set_updater(self, updater: Any) -> None:
        """Not possible for a distributed store: the update runs on the server."""
        raise KVStoreError(f"KVStore {self.type!r}: a Python updater cannot run on the "
                           f"parameter server; use set_optimizer(optimizer)")

    _set_updater = set_updater

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Write the servers' optimizer states to ``fname`` (one pickled list, a state
        blob per server)."""
        states = self._call_all("optimizer_states", dump_optimizer)
        with open(fname, "wb") as fout:
            fout.write(pickle.dumps({"dagnet_kvstore_servers": states}))

    def load_optimizer_states(self, fname: str) -> None:
        """Load optimizer states written by :meth:`save_optimizer_states` of a job with
        as many servers (worker 0's file is used)."""
        with open(fname, "rb") as fin:
            saved = pickle.loads(fin.read())
        states = saved.get("dagnet_kvstore_servers") if isinstance(saved, dict) else None
        if not isinstance(states, list) or len(states) != len(self._servers):
            found = (f"states of {len(states)} servers" if isinstance(states, list)
                     else "no distributed store's states")
            raise KVStoreError(f"load_optimizer_states: {fname} holds {found}, but this job "
                               f"has {len(self._servers)} server(s); launch with as many "
                               f"servers as the job that saved it")
        self._gather([(server, "load_optimizer_states", (self._rank, blob))
                      for server, blob in enumerate(states)])
        self.barrier()

    # -- connection ------------------------------------------------------------------
    def close(self) -> None:
        """Leave the job: the servers stop waiting for this worker.  Called at exit."""
        if self._closed.is_set():
            return
        self._closed.set()
        try:
            self._call_all("leave", self._rank)
        except DistributedKVStoreError:
            pass  # the job is gone already; nothing waits for this worker
        self._client.close()

    def _heartbeat(self) -> None:
        while not self._closed.wait(_HEARTBEAT_SECONDS):
            try:
                for future in [server.heartbeat(self._rank) for server in self._servers]:
                    future.result()
            except Exception:  # the next call from the training loop reports it
                return

    def _call_all(self, method: str, *args: Any) -> list[Any]:
        """``method(*args)`` on every server, at once; the replies in server order."""
        return self._gather([(server, method, args) for server in range(len(self._servers))])

    def _gather(self, calls: list[tuple[int, str, tuple]]) -> list[Any]:
        """Send every ``(server, method, args)`` call, then wait for the replies (in order)."""
        method = calls[0][1] if calls else ""
        try:
            futures = [getattr(self._servers[server], name)(*args)
                       for server, name, args in calls]
            return [future.result() for future in futures]
        except KeyError as error:
            raise KVStoreError(str(error.args[0]) if error.args else str(error)) from None
        except (ValueError, KVStoreError) as error:
            raise KVStoreError(f"KVStore {self.type!r}: {error}") from None
        except Exception as error:
            lost = type(error).__name__ == "WorkerLostError"
            reason = (str(error) if lost else
                      f"a parameter server could not be reached ({type(error).__name__}: "
                      f"{error}); its Dask worker or the scheduler may have died")
            raise DistributedKVStoreError(
                f"KVStore {self.type!r}, worker {self._rank} of {self._num_workers}: "
                f"{method} failed: {reason}") from error

    def __repr__(self) -> str:
        return (f"<DistKVStore {self.type!r} worker {self._rank} of {self._num_workers}, "
                f"{len(self._servers)} server(s), {len(self._store)} keys>")


def _placement(key: Key, size: int, servers: int) -> list[tuple[int, int, int]]:
    """``(server, start, stop)`` slices of a flattened value of ``size`` elements: one
    slice per server for a big array, else the whole on a server chosen by the key
    (a checksum of it, the same in every process)."""
    if servers > 1 and size >= BIGARRAY_BOUND:
        bounds = [size * i // servers for i in range(servers + 1)]
        return [(i, bounds[i], bounds[i + 1]) for i in range(servers)]
    return [(zlib.crc32(repr(key).encode()) % servers, 0, size)]


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
