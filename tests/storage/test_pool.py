"""The pooled storage manager: reuse by bucket under each policy, exact stats,
misuse errors, thread safety and the out-of-memory retry.

Each test builds its own ``StorageManager`` (a device's pool policy is fixed
when the pool is created) on a fake device whose backend counts what it hands
out, so the numbers below are exact.
"""

from __future__ import annotations

import random
import sys
import threading

import numpy as np
import pytest
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

import dagnet
from dagnet.backend import Backend
from dagnet.context import Context
from dagnet.storage import DevicePool, Handle, StorageManager, StorageStats, bucket_size

FAKE0 = Context("fake", 0)
FAKE1 = Context("fake", 1)


class CountingBackend(Backend):
    """Host buffers with a byte budget; counts allocations, frees and bytes held."""

    name = "counting"
    device_type = "fake"

    def __init__(self, budget: int | None = None):
        self.budget = budget
        self.held = 0
        self.allocs = 0
        self.frees = 0
        self.alloc_calls = 0
        self._lock = threading.Lock()

    @property
    def unavailable_reason(self):
        return None

    def num_devices(self):
        return 2

    @property
    def xp(self):
        return np

    def alloc(self, nbytes, device_id):
        with self._lock:
            self.alloc_calls += 1
            if self.budget is not None and self.held + nbytes > self.budget:
                raise MemoryError(f"fake device full: {self.held} + {nbytes} > {self.budget}")
            self.held += nbytes
            self.allocs += 1
        return np.empty(nbytes, dtype=np.uint8)

    def free(self, buffer):
        with self._lock:
            self.held -= buffer.nbytes
            self.frees += 1

    def to_host(self, array, stream=None):
        return np.array(array, copy=True)

    def from_host(self, array, device_id, stream=None):
        return np.array(array, copy=True)

    def create_stream(self, device_id):
        return None

    def create_random(self, seed, device_id):
        return np.random.default_rng(seed)


@pytest.fixture(autouse=True)
def _restore_config():
    yield
    dagnet.config.refresh()


@pytest.fixture
def fake(monkeypatch):
    """A counting backend serving the ``fake`` device type."""
    backend = CountingBackend()
    real = dagnet.backend.backend_for
    monkeypatch.setattr(dagnet.backend, "backend_for",
                        lambda ctx: backend if ctx.device_type == "fake" else real(ctx))
    return backend


def manager_with(policy: str, *contexts: Context) -> StorageManager:
    """A fresh manager whose pools for ``contexts`` use ``policy``."""
    manager = StorageManager()
    with dagnet.config.set(storage_pool=policy):
        for ctx in contexts or (FAKE0,):
            assert manager.pool(ctx).policy == policy
    return manager


def stats(**values) -> StorageStats:
    fields = {"in_use": 0, "pooled": 0, "peak": 0, "allocations": 0, "reuses": 0}
    fields.update(values)
    return StorageStats(**fields)


# -- buckets -----------------------------------------------------------------
@pytest.mark.parametrize(("nbytes", "policy", "size"), [
    (0, "exact", 512), (1, "exact", 512), (512, "exact", 512), (513, "exact", 1024),
    (5000, "exact", 5120),
    (0, "round", 1), (1, "round", 1), (3, "round", 4), (128, "round", 128),
    (129, "round", 256), (1025, "round", 2048),
    (0, "unpooled", 1), (7, "unpooled", 7), (1000, "unpooled", 1000),
])
def test_bucket_size(nbytes, policy, size):
    assert bucket_size(nbytes, policy) == size


# -- reuse and stats under each policy -----------------------------------------
def test_exact_reuses_blocks_of_the_same_bucket(fake):
    manager = manager_with("exact")
    a = manager.alloc(100, FAKE0)
    assert (a.nbytes, a.size, a.data.shape, a.data.dtype) == (100, 512, (512,), np.uint8)
    assert manager.stats(FAKE0) == stats(in_use=512, peak=512, allocations=1)
    b = manager.alloc(1000, FAKE0)
    assert manager.stats(FAKE0) == stats(in_use=1536, peak=1536, allocations=2)

    block = a.data
    manager.free(a)
    assert manager.stats(FAKE0) == stats(in_use=1024, pooled=512, peak=1536, allocations=2)
    c = manager.alloc(400, FAKE0)  # same 512-byte bucket: the freed block comes back
    assert c.data is block and c.size == 512 and c.nbytes == 400
    assert manager.stats(FAKE0) == stats(in_use=1536, peak=1536, allocations=2, reuses=1)
    d = manager.alloc(600, FAKE0)  # 1024 bucket: nothing pooled there
    assert manager.stats(FAKE0) == stats(in_use=2560, peak=2560, allocations=3, reuses=1)

    for handle in (b, c, d):
        manager.free(handle)
    assert manager.stats(FAKE0) == stats(pooled=2560, peak=2560, allocations=3, reuses=1)
    assert manager.stats(FAKE0).reserved == 2560 == fake.held
    assert fake.frees == 0


def test_round_reuses_by_power_of_two(fake):
    manager = manager_with("round")
    a = manager.alloc(100, FAKE0)
    assert a.size == 128
    block = a.data
    manager.free(a)
    b = manager.alloc(65, FAKE0)
    assert b.data is block and b.size == 128
    c = manager.alloc(129, FAKE0)
    assert c.size == 256 and c.data is not block
    assert manager.stats(FAKE0) == stats(in_use=384, peak=384, allocations=2, reuses=1)
    manager.free(b)
    manager.free(c)
    assert manager.stats(FAKE0) == stats(pooled=384, peak=384, allocations=2, reuses=1)
    assert fake.held == 384


def test_unpooled_returns_every_block_to_the_device(fake):
    manager = manager_with("unpooled")
    a = manager.alloc(100, FAKE0)
    assert a.size == 100
    manager.free(a)
    assert fake.frees == 1 and fake.held == 0
    b = manager.alloc(100, FAKE0)
    assert manager.stats(FAKE0) == stats(in_use=100, peak=100, allocations=2)
    manager.free(b)
    assert manager.stats(FAKE0) == stats(peak=100, allocations=2)
    assert fake.held == 0


def test_policy_is_fixed_when_the_pool_is_created(fake):
    manager = manager_with("round")
    dagnet.config.set(storage_pool="unpooled")
    assert manager.alloc(100, FAKE0).size == 128  # the existing pool keeps "round"
    assert manager.alloc(100, FAKE1).size == 100  # a new device's pool takes the config
    assert StorageManager().pool(FAKE0).policy == "unpooled"


def test_blocks_freed_beyond_the_limit_go_back_to_the_device(fake):
    with dagnet.config.set(storage_pool_limit=2048):
        manager = manager_with("exact")
    assert manager.pool(FAKE0).limit == 2048
    a, b, c = (manager.alloc(1024, FAKE0) for _ in range(3))
    manager.free(a)
    manager.free(b)  # the pool now holds its limit
    manager.free(c)  # so this block is returned
    assert fake.frees == 1 and fake.held == 2048
    assert manager.stats(FAKE0) == stats(pooled=2048, peak=3072, allocations=3)
    manager.alloc(1024, FAKE0)  # a pooled block serves it, freeing room under the limit
    manager.free(manager.alloc(1024, FAKE0))
    assert manager.stats(FAKE0).pooled == 1024 and fake.frees == 1


def test_limit_zero_pools_without_limit(fake):
    with dagnet.config.set(storage_pool_limit=0):
        manager = manager_with("exact")
    for handle in [manager.alloc(1 << 20, FAKE0) for _ in range(4)]:
        manager.free(handle)
    assert manager.stats(FAKE0).pooled == 4 << 20 and fake.frees == 0


def test_zero_bytes(fake):
    manager = manager_with("exact")
    handle = manager.alloc(0, FAKE0)
    assert handle.nbytes == 0 and handle.size == 512
    manager.free(handle)


def test_numpy_integer_sizes_are_accepted(fake):
    manager = manager_with("exact")
    handle = manager.alloc(np.int64(700), FAKE0)
    assert handle.nbytes == 700 and type(handle.nbytes) is int
    manager.free(handle)


def test_stats_of_an_unused_device_are_zero():
    assert StorageManager().stats(dagnet.cpu(3)) == stats()
    assert StorageManager().devices() == []


def test_handle_repr_and_state(fake):
    manager = manager_with("exact")
    handle = manager.alloc(100, FAKE0)
    assert isinstance(handle, Handle)
    assert repr(handle) == f"<Handle #{handle.id} 100B on fake(0)>"
    assert handle.live and handle.ctx == FAKE0
    manager.free(handle)
    assert not handle.live and handle.data is None
    assert repr(handle).endswith("(freed)>")


# -- bypassing and releasing the pool ------------------------------------------
def test_direct_free_bypasses_the_pool(fake):
    manager = manager_with("exact")
    handle = manager.alloc(100, FAKE0)
    manager.direct_free(handle)
    assert fake.frees == 1 and fake.held == 0
    assert manager.stats(FAKE0) == stats(peak=512, allocations=1)
    manager.alloc(100, FAKE0)  # nothing pooled: a fresh block
    assert manager.stats(FAKE0) == stats(in_use=512, peak=512, allocations=2)


def test_release_all_of_one_device_then_of_all(fake):
    manager = manager_with("exact", FAKE0, FAKE1)
    for ctx in (FAKE0, FAKE1):
        manager.free(manager.alloc(100, ctx))
        manager.free(manager.alloc(1000, ctx))
    kept = manager.alloc(2000, FAKE0)  # in use: release_all must leave it alone
    assert fake.held == 2 * 1536 + 2048

    manager.release_all(FAKE0)
    assert manager.stats(FAKE0) == stats(in_use=2048, peak=2048, allocations=3)
    assert manager.stats(FAKE1).pooled == 1536
    assert fake.held == 2048 + 1536 and fake.frees == 2

    manager.release_all()
    assert manager.stats(FAKE1) == stats(peak=1024, allocations=2)
    assert fake.held == 2048 and kept.live
    manager.release_all(dagnet.cpu(9))  # a device without a pool: nothing to do
    manager.free(kept)
    assert manager.stats(FAKE0).pooled == 2048


def test_process_wide_facade():
    ctx = dagnet.cpu(61)  # a device no other test uses
    before = dagnet.storage.stats(ctx)
    handle = dagnet.storage.alloc(1024, ctx)
    assert dagnet.storage.manager().stats(ctx).in_use == before.in_use + handle.size
    dagnet.storage.free(handle)
    assert dagnet.storage.stats(ctx).pooled >= handle.size
    dagnet.storage.release_all(ctx)
    assert dagnet.storage.stats(ctx).pooled == 0
    other = dagnet.storage.alloc(10, ctx)
    dagnet.storage.direct_free(other)
    assert dagnet.storage.stats(ctx).reserved == before.in_use
    dagnet.storage.release_all()


# -- misuse ------------------------------------------------------------------
@pytest.mark.parametrize("action", ["free", "direct_free"])
def test_double_free_names_the_handle(fake, action):
    manager = manager_with("exact")
    handle = manager.alloc(100, FAKE0)
    manager.free(handle)
    expected = rf"{action}\(<Handle #{handle.id} .*already freed"
    with pytest.raises(dagnet.StorageError, match=expected):
        getattr(manager, action)(handle)
    assert manager.stats(FAKE0) == stats(pooled=512, peak=512, allocations=1)


def test_free_after_direct_free(fake):
    manager = manager_with("exact")
    handle = manager.alloc(100, FAKE0)
    manager.direct_free(handle)
    with pytest.raises(dagnet.StorageError, match=f"#{handle.id}.*already freed"):
        manager.free(handle)


def test_foreign_handle(fake):
    mine, theirs = manager_with("exact"), manager_with("exact")
    handle = theirs.alloc(100, FAKE0)
    with pytest.raises(dagnet.StorageError, match=f"#{handle.id}.*not allocated by this manager"):
        mine.free(handle)
    # a manager with no pool at all for the handle's device
    with pytest.raises(dagnet.StorageError, match=f"#{handle.id}.*not allocated by this storage"):
        StorageManager().direct_free(handle)
    assert handle.live
    theirs.free(handle)  # still the owner's to free
    assert mine.stats(FAKE0) == stats()


@pytest.mark.parametrize("thing", [None, 3, "handle", object()],
                         ids=lambda thing: type(thing).__name__)
def test_freeing_what_is_not_a_handle(fake, thing):
    manager = manager_with("exact")
    with pytest.raises(dagnet.StorageError, match="expected a storage Handle"):
        manager.free(thing)


@pytest.mark.parametrize("nbytes", [-1, 1.5, 2.0, True, False, "8", None, np.float64(4)],
                         ids=repr)
def test_bad_nbytes(fake, nbytes):
    manager = manager_with("exact")
    with pytest.raises(dagnet.StorageError, match="nbytes must be an integer >= 0") as info:
        manager.alloc(nbytes, FAKE0)
    assert repr(nbytes) in str(info.value)
    assert isinstance(info.value, ValueError)
    assert manager.stats(FAKE0) == stats()


@pytest.mark.parametrize("ctx", ["cpu", 0, None, ["cpu", 0]], ids=repr)
def test_bad_context(ctx):
    with pytest.raises(dagnet.StorageError, match="expected a dagnet Context"):
        StorageManager().alloc(8, ctx)


# -- threads -----------------------------------------------------------------
@pytest.mark.parametrize("policy", ["exact", "round", "unpooled"])
def test_concurrent_alloc_and_free(fake, policy):
    manager = manager_with(policy)
    threads, rounds = 8, 500
    start = threading.Barrier(threads)
    errors: list[BaseException] = []
    ids: list[int] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        live: list[tuple[Handle, bytes]] = []
        try:
            start.wait()
            for i in range(rounds):
                handle = manager.alloc(rng.choice([8, 100, 600, 1000, 3000]), FAKE0)
                tag = f"{seed:02d}{i:06d}".encode()
                handle.data[:8] = np.frombuffer(tag, dtype=np.uint8)
                live.append((handle, tag))
                ids.append(handle.id)
                if len(live) > 4 or rng.random() < 0.5:
                    old, old_tag = live.pop(rng.randrange(len(live)))
                    # a block handed to two threads at once would show another tag here
                    assert old.data[:8].tobytes() == old_tag
                    (manager.free if rng.random() < 0.9 else manager.direct_free)(old)
            for old, old_tag in live:
                assert old.data[:8].tobytes() == old_tag
                manager.free(old)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, to interleave pool operations
    try:
        workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    finally:
        sys.setswitchinterval(interval)

    assert not errors, errors[0]
    assert len(set(ids)) == threads * rounds
    final = manager.stats(FAKE0)
    assert final.in_use == 0
    assert final.allocations == fake.allocs
    assert final.allocations + final.reuses == threads * rounds
    assert final.pooled == fake.held  # what the device still holds is exactly the pool
    assert 0 < final.peak <= threads * 5 * bucket_size(3000, policy)
    if policy == "unpooled":
        assert final.pooled == 0 and final.reuses == 0
    else:
        assert final.reuses > 0
    manager.release_all()
    assert fake.held == 0 and fake.frees == fake.allocs


# -- out of memory ---------------------------------------------------------------
def test_out_of_memory_releases_the_pool_and_retries(fake):
    fake.budget = 4096
    manager = manager_with("exact")
    a = manager.alloc(2048, FAKE0)
    b = manager.alloc(1024, FAKE0)
    manager.free(a)  # 2048 pooled; 3072 held
    calls = fake.alloc_calls

    c = manager.alloc(2500, FAKE0)  # 2560 more does not fit until the pool is released
    assert c.size == 2560
    assert fake.alloc_calls == calls + 2  # failed once, retried once
    assert fake.frees == 1 and fake.held == 1024 + 2560
    assert manager.stats(FAKE0) == stats(in_use=3584, peak=3584, allocations=3)
    manager.free(b)
    manager.free(c)


def test_out_of_memory_after_releasing_raises(fake):
    fake.budget = 4096
    manager = manager_with("exact")
    kept = manager.alloc(1024, FAKE0)
    manager.free(manager.alloc(2048, FAKE0))
    with pytest.raises(MemoryError, match=r"out of memory on fake\(0\) allocating 8192 bytes "
                                          r"\(1024 bytes in use after releasing the pool\)"):
        manager.alloc(8000, FAKE0)
    assert manager.stats(FAKE0) == stats(in_use=1024, peak=3072, allocations=2)
    assert fake.held == 1024
    manager.free(kept)
    assert manager.alloc(3000, FAKE0).size == 3072  # the device is usable afterwards


# -- a model of the pool ------------------------------------------------------------
class PoolModel(RuleBasedStateMachine):
    """Random sequences of pool operations against a plain model of what the
    stats must be: bytes in use and pooled, peak, fresh allocations and reuses."""

    def __init__(self):
        super().__init__()
        self.backend = CountingBackend()
        self.pool = None
        self.live: list[Handle] = []
        self.free_blocks: dict[int, int] = {}  # bucket size -> pooled block count
        self.expected = stats()

    @initialize(policy=st.sampled_from(["exact", "round", "unpooled"]))
    def make_pool(self, policy):
        self.pool = DevicePool(FAKE0, self.backend, policy)

    def _update(self, **changes):
        values = {**self.expected.__dict__, **changes}
        values["peak"] = max(values["peak"], values["in_use"])
        self.expected = StorageStats(**values)

    @rule(nbytes=st.integers(0, 5000))
    def alloc(self, nbytes):
        size = bucket_size(nbytes, self.pool.policy)
        handle = self.pool.alloc(nbytes)
        assert (handle.nbytes, handle.size, handle.data.shape) == (nbytes, size, (size,))
        e = self.expected
        if self.free_blocks.get(size):
            self.free_blocks[size] -= 1
            self._update(in_use=e.in_use + size, pooled=e.pooled - size, reuses=e.reuses + 1)
        else:
            self._update(in_use=e.in_use + size, allocations=e.allocations + 1)
        self.live.append(handle)

    @precondition(lambda self: self.live)
    @rule(index=st.integers(0), direct=st.booleans())
    def free(self, index, direct):
        handle = self.live.pop(index % len(self.live))
        e = self.expected
        if direct or self.pool.policy == "unpooled":
            (self.pool.direct_free if direct else self.pool.free)(handle)
            self._update(in_use=e.in_use - handle.size)
        else:
            self.pool.free(handle)
            self.free_blocks[handle.size] = self.free_blocks.get(handle.size, 0) + 1
            self._update(in_use=e.in_use - handle.size, pooled=e.pooled + handle.size)

    @rule()
    def release_all(self):
        self.pool.release_all()
        self.free_blocks.clear()
        self._update(pooled=0)

    @invariant()
    def stats_match_the_model(self):
        if self.pool is not None:
            assert self.pool.stats() == self.expected
            assert self.expected.reserved == self.backend.held
            assert self.expected.allocations == self.backend.allocs


TestPoolModel = PoolModel.TestCase
