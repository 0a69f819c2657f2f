"""The parameter server of the distributed stores: a Dask actor that holds every key.

One :class:`ParameterServer` lives on a Dask worker for the whole training job
(``dagnet launch`` creates it).  Training processes reach it through a Dask
client and call its methods, all coroutines: they run one at a time on the
worker's event loop, so the state needs no lock, and a method that must wait
(a synchronous pull, a barrier, an ``init`` from a worker other than rank 0)
waits without blocking the others.

``sync`` mode (``dist_sync``): a key's pushes are collected per worker; when
every worker has pushed, they are summed in rank order (so the sum is the
same bits as one process summing the same arrays in the same order), the sum
replaces the value or is handed to the optimizer as the gradient, and the
key's version goes up by one.  A worker's pull waits for the version its own
pushes have reached.  ``async`` mode (``dist_async``): each push is applied as
it arrives and a pull returns the value as it is.

Every worker sends a heartbeat.  A wait that depends on a worker whose
heartbeat stopped, or that left the job, fails within ``timeout`` seconds with
an error naming that worker, instead of hanging.
"""

from __future__ import annotations

import asyncio
import pickle
import time
from typing import Any

import numpy as np

__all__ = ["ParameterServer", "WorkerLostError"]

_POLL = 0.25  # seconds between liveness checks of a waiting call (changes wake it at once)


class WorkerLostError(RuntimeError):
    """A training process of the job stopped while another one waited for it."""


class _Key:
    """One key: its value as pulls return it (``snapshot``, a numpy array never changed
    once made, so a reply still being sent cannot see a later update), the NDArray
    an optimizer updates (made at the first update), the version, and pushes not
    yet summed."""

    __slots__ = ("snapshot", "weight", "version", "pending")

    def __init__(self, value: np.ndarray) -> None:
        self.snapshot = value
        self.weight: Any = None
        self.version = 0
        self.pending: dict[int, list[np.ndarray]] = {}


class ParameterServer:
    """The keys, the optimizer and the bookkeeping of one distributed training job."""

    def __init__(self, num_workers: int, mode: str, timeout: float = 5.0) -> None:
        if mode not in ("sync", "async"):
            raise ValueError(f"ParameterServer: mode must be 'sync' or 'async', got {mode!r}")
        self.num_workers = int(num_workers)
        self.mode = mode
        self.timeout = float(timeout)
        self._keys: dict[Any, _Key] = {}
        self._updater: Any = None
        self._heard: dict[int, float] = {}
        self._left: set[int] = set()
        self._barrier_count = 0
        self._barrier_generation = 0
        self._changed: asyncio.Event | None = None  # set (and replaced) at every change

    # -- membership ------------------------------------------------------------------
    async def heartbeat(self, rank: int) -> None:
        """Record that worker ``rank`` is alive (each worker calls this every second or
        so from a background thread)."""
        self._heard[rank] = time.monotonic()

    async def leave(self, rank: int) -> None:
        """Worker ``rank`` finished: calls waiting for it fail instead of hanging."""
        self._left.add(rank)
        self._notify()

    def _check_alive(self, waiting_for: list[int], what: str) -> None:
        now = time.monotonic()
        for rank in waiting_for:
            if rank in self._left:
                raise WorkerLostError(
                    f"{what} waits for worker {rank}, which already finished and left the "
                    f"job; every worker must make the same init/push/pull/barrier calls")
            heard = self._heard.get(rank)
            if heard is not None and now - heard > self.timeout:
                raise WorkerLostError(
                    f"{what} waits for worker {rank}, which stopped responding "
                    f"({now - heard:.1f} s since its last heartbeat, limit {self.timeout:g} s);"
                    f" it probably crashed: see its output, then restart the job from the last "
                    f"checkpoint")

    async def _wait(self, ready: Any, waiting_for: Any, what: str) -> None:
        """Wait until ``ready()``; ``waiting_for()`` names the workers it depends on."""
        started = time.monotonic()
        while not ready():
            ranks = waiting_for()
            self._check_alive(ranks, what)
            if not any(r in self._heard for r in ranks) and \
                    time.monotonic() - started > self.timeout * 4:
                raise WorkerLostError(f"{what} waits for workers {ranks}, which never "
                                      f"contacted the parameter server; did they start?")
            if self._changed is None:
                self._changed = asyncio.Event()
            try:
                await asyncio.wait_for(self._changed.wait(), _POLL)
            except asyncio.TimeoutError:
                pass

    def _notify(self) -> None:
        """Wake every waiting call to check its condition again."""
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    # -- keys ------------------------------------------------------------------------
    async def init(self, rank: int, items: list[tuple[Any, np.ndarray]]) -> None:
        """Worker 0's values become the keys' values; the other workers wait for them
        (MXNet keeps rank 0's initial values)."""
        if rank == 0:
            for key, value in items:
                if key in self._keys:
                    raise ValueError(f"duplicate init of key {key!r}: it already holds a "
                                     f"value; call init once per key")
                self._keys[key] = _Key(value)
            self._notify()
            return
        keys = [key for key, _ in items]
        await self._wait(lambda: all(k in self._keys for k in keys), lambda: [0],
                         f"init of keys {keys} by worker {rank}")

    async def push(self, rank: int, items: list[tuple[Any, np.ndarray]]) -> None:
        """Worker ``rank`` pushes one array per key (already summed over its devices)."""
        for key, value in items:
            entry = self._entry(key, "push")
            if self.mode == "async":
                self._apply(key, entry, value)
            else:
                entry.pending.setdefault(rank, []).append(value)
                self._complete_rounds(key, entry)

    async def pull(self, rank: int, requests: list[tuple[Any, int]]) -> list[np.ndarray]:
        """The values of the keys; in sync mode each after the round of ``version``
        (the number of pushes this worker made to that key) is complete."""
        values = []
        for key, version in requests:
            entry = self._entry(key, "pull")
            if self.mode == "sync":
                await self._wait(lambda e=entry, v=version: e.version >= v,
                                 lambda e=entry: self._missing(e),
                                 f"pull of key {key!r} by worker {rank}")
            values.append(entry.snapshot)
        return values

    async def pushpull(self, rank: int, items: list[tuple[Any, np.ndarray]],
                       versions: list[int]) -> list[np.ndarray]:
        """:meth:`push` then :meth:`pull` of the same keys in one round trip."""
        await self.push(rank, items)
        return await self.pull(rank, [(key, v) for (key, _), v in zip(items, versions)])

    async def barrier(self, rank: int) -> None:
        """Return once every worker has called barrier (MXNet's ``kv.barrier``)."""
        generation = self._barrier_generation
        self._barrier_count += 1
        arrived = self._barrier_count
        if arrived == self.num_workers:
            self._barrier_count = 0
            self._barrier_generation += 1
            self._notify()
            return
        await self._wait(lambda: self._barrier_generation > generation,
                         lambda: [r for r in range(self.num_workers) if r != rank],
                         f"barrier of worker {rank}")

    # -- optimizer -------------------------------------------------------------------
    async def set_optimizer(self, rank: int, optimizer: bytes) -> None:
        """Update the keys with worker 0's optimizer (pickled) from now on."""
        from .. import optimizer as opt

        if rank == 0:
            self._updater = opt.get_updater(pickle.loads(optimizer))

    async def optimizer_states(self, dump_optimizer: bool) -> bytes:
        """The optimizer's states, as ``Updater.get_states`` gives them."""
        if self._updater is None:
            raise ValueError("the parameter server has no optimizer; call set_optimizer first")
        return self._updater.get_states(dump_optimizer)

    async def load_optimizer_states(self, rank: int, states: bytes) -> None:
        """Replace the optimizer's states (worker 0's call counts)."""
        if self._updater is None:
            raise ValueError("the parameter server has no optimizer; call set_optimizer first")
        if rank == 0:
            self._updater.set_states(states)

    async def echo(self, value: np.ndarray) -> np.ndarray:
        """Return ``value``: a bare round trip, for the benchmark's baseline."""
        return value

    # -- helpers ---------------------------------------------------------------------
    def _entry(self, key: Any, what: str) -> _Key:
        try:
            return self._keys[key]
        except KeyError:
            raise KeyError(f"{what}: key {key!r} has not been initialised on the parameter "
                           f"server; call kv.init({key!r}, value) on every worker first") from None

    def _missing(self, entry: _Key) -> list[int]:
        return [r for r in range(self.num_workers) if not entry.pending.get(r)]

    def _complete_rounds(self, key: Any, entry: _Key) -> None:
        while all(entry.pending.get(r) for r in range(self.num_workers)):
            total = entry.pending[0].pop(0)
            if self.num_workers > 1 and not total.flags.writeable:
                total = total.copy()
            for rank in range(1, self.num_workers):  # in rank order, into rank 0's array
                np.add(total, entry.pending[rank].pop(0), out=total)
            self._apply(key, entry, total)

    def _apply(self, key: Any, entry: _Key, total: np.ndarray) -> None:
        from .. import ndarray

        if total.shape != entry.snapshot.shape:
            raise ValueError(f"push: key {key!r} holds shape {entry.snapshot.shape}, the "
                             f"pushed array has shape {total.shape}")
        if self._updater is None:
            entry.snapshot = total.astype(entry.snapshot.dtype, copy=False)
            entry.weight = None  # stale: made again from the snapshot if an optimizer comes
        else:
            if entry.weight is None:
                entry.weight = ndarray.array(entry.snapshot, dtype=entry.snapshot.dtype)
            self._updater(key, ndarray.array(total, dtype=total.dtype), entry.weight)
            entry.snapshot = entry.weight.asnumpy()
        entry.version += 1
        self._notify()
