"""Operator resources: requests, per-device random generators seeded through the
engine, and temp space that grows, is reused and is handed out round-robin."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import dagnet
from dagnet.resource import (
    DEFAULT_SEED,
    RandomResource,
    ResourceError,
    ResourceKind,
    ResourceManager,
    ResourceRequest,
    TempSpace,
    device_seed,
)

RANDOM = ResourceRequest("random")
TEMP = ResourceRequest("temp_space")


@pytest.fixture(autouse=True)
def _restore_config():
    yield
    dagnet.config.refresh()


@pytest.fixture(params=["naive", "threaded_per_device"])
def engine_name(request):
    """Seeding must hold whether the engine runs work inline or on device workers."""
    with dagnet.config.set(engine=request.param):
        yield request.param


def draw(manager: ResourceManager | None, ctx: dagnet.Context, n: int = 4) -> np.ndarray:
    """``n`` uniform numbers from ``ctx``'s generator, drawn the way an operator does:
    in a function pushed to the engine that mutates the generator's variable."""
    resource = (manager or dagnet.resource.manager()).request(ctx, RANDOM)
    out: list[np.ndarray] = []
    engine = dagnet.engine.current()
    engine.push_sync(lambda run_ctx: out.append(resource.generator.random(n)), ctx,
                     mutate_vars=[resource.var], name="draw")
    engine.wait_for_var(resource.var)
    return out[0]


def reference(seed: int, ctx: dagnet.Context, n: int = 4, skip: int = 0) -> np.ndarray:
    """What a fresh generator for ``ctx`` seeded with ``seed`` gives after ``skip`` draws."""
    generator = np.random.Generator(np.random.PCG64(device_seed(seed, ctx)))
    for _ in range(skip):
        generator.random(n)
    return generator.random(n)


# -- requests ----------------------------------------------------------------
def test_requests_by_name_or_kind():
    assert ResourceRequest("random").kind is ResourceKind.RANDOM
    assert ResourceRequest("temp_space").kind is ResourceKind.TEMP_SPACE
    assert ResourceRequest(ResourceKind.TEMP_SPACE) == TEMP
    assert RANDOM != TEMP and len({RANDOM, ResourceRequest("random"), TEMP}) == 2
    assert repr(TEMP) == "ResourceRequest('temp_space')"


@pytest.mark.parametrize("kind", ["rand", "kRandom", "", 0, None], ids=repr)
def test_unknown_kind_lists_the_kinds(kind):
    with pytest.raises(ValueError, match=r"expected one of random, temp_space") as info:
        ResourceRequest(kind)
    assert isinstance(info.value, dagnet.DagnetError)
    assert isinstance(info.value, ResourceError)
    assert repr(kind) in str(info.value)


def test_request_needs_a_request_and_a_context():
    manager = ResourceManager()
    with pytest.raises(ResourceError, match="expected a dagnet.resource.ResourceRequest"):
        manager.request(dagnet.cpu(), "random")
    with pytest.raises(ResourceError, match="expected a dagnet Context"):
        manager.request("cpu", RANDOM)
    with pytest.raises(ResourceError, match="expected a dagnet Context"):
        dagnet.resource.request(None, TEMP)


# -- random generators ------------------------------------------------------------
def test_one_random_resource_per_device_with_its_own_variable():
    manager = ResourceManager()
    r0 = manager.request(dagnet.cpu(0), RANDOM)
    r1 = manager.request(dagnet.cpu(1), RANDOM)
    assert isinstance(r0, RandomResource) and r0.kind is ResourceKind.RANDOM
    assert r0.ctx == dagnet.cpu(0) and r1.ctx == dagnet.cpu(1)
    assert manager.request(dagnet.cpu(0), RANDOM) is r0
    assert r0 is not r1
    assert isinstance(r0.var, dagnet.engine.Var)
    assert r0.var is not r1.var
    assert r0.var is not manager.request(dagnet.cpu(0), TEMP).var
    assert repr(r1) == "<RandomResource on cpu(1)>"


def test_concurrent_first_requests_share_one_generator():
    manager = ResourceManager()
    start = threading.Barrier(8)
    got = []

    def ask():
        start.wait()
        got.append(manager.request(dagnet.cpu(2), RANDOM))

    workers = [threading.Thread(target=ask) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(got) == 8 and all(r is got[0] for r in got)


def test_device_seed_depends_on_seed_and_device_only():
    assert device_seed(5, dagnet.cpu(1)) == device_seed(5, dagnet.Context("cpu", 1))
    seeds = {device_seed(s, ctx) for s in (0, 1, 2**40)
             for ctx in (dagnet.cpu(0), dagnet.cpu(1), dagnet.gpu(0), dagnet.gpu(1))}
    assert len(seeds) == 12


def test_unseeded_streams_are_reproducible():
    first = draw(ResourceManager(), dagnet.cpu(0))
    np.testing.assert_array_equal(first, draw(ResourceManager(), dagnet.cpu(0)))
    np.testing.assert_array_equal(first, reference(DEFAULT_SEED, dagnet.cpu(0)))
    assert not np.array_equal(first, draw(ResourceManager(), dagnet.cpu(1)))


def test_seed_is_independent_of_call_order(engine_name):
    cpu0, cpu1 = dagnet.cpu(0), dagnet.cpu(1)
    dagnet.random.seed(42)
    a1, a0 = draw(None, cpu1), draw(None, cpu0)
    dagnet.random.seed(42)
    b0, b1 = draw(None, cpu0), draw(None, cpu1)
    np.testing.assert_array_equal(a0, b0)
    np.testing.assert_array_equal(a1, b1)
    assert not np.array_equal(a0, a1)
    np.testing.assert_array_equal(a0, reference(42, cpu0))
    np.testing.assert_array_equal(a1, reference(42, cpu1))
    dagnet.random.seed(43)
    assert not np.array_equal(draw(None, cpu0), a0)


def test_seed_reaches_devices_first_used_later(engine_name):
    cpu0, cpu1 = dagnet.cpu(0), dagnet.cpu(1)
    late = ResourceManager()
    late.seed(7)  # no generator exists yet
    late1, late0 = draw(late, cpu1), draw(late, cpu0)
    early = ResourceManager()
    early0 = draw(early, cpu0)
    draw(early, cpu1)  # both devices exist before the seed
    early.seed(7)
    np.testing.assert_array_equal(draw(early, cpu0), late0)
    np.testing.assert_array_equal(draw(early, cpu1), late1)
    assert not np.array_equal(early0, late0)


def test_seeding_waits_for_random_work_pushed_before_it(engine_name):
    """The reseed is engine work on the generator's variable: a draw pushed before
    seed() sees the old stream even if it runs after seed() returns."""
    ctx = dagnet.cpu(1)
    manager = ResourceManager()
    manager.seed(1)
    resource = manager.request(ctx, RANDOM)
    engine = dagnet.engine.current()
    gate = threading.Event()
    if engine_name == "naive":
        gate.set()  # it runs each push inline: the draw is done before seed() is called
    before, after = [], []

    def slow_draw(run_ctx):
        gate.wait(5)
        before.append(resource.generator.random(4))

    engine.push_sync(slow_draw, ctx, mutate_vars=[resource.var], name="slow_draw")
    manager.seed(2)
    engine.push_sync(lambda run_ctx: after.append(resource.generator.random(4)), ctx,
                     mutate_vars=[resource.var], name="draw")
    gate.set()
    engine.wait_for_var(resource.var)
    np.testing.assert_array_equal(before[0], reference(1, ctx))
    np.testing.assert_array_equal(after[0], reference(2, ctx))


def test_seed_one_device(engine_name):
    cpu0, cpu1 = dagnet.cpu(0), dagnet.cpu(1)
    manager = ResourceManager()
    draw(manager, cpu0)
    manager.seed(5, cpu1)
    np.testing.assert_array_equal(draw(manager, cpu1), reference(5, cpu1))
    # the other device's stream carries on, untouched
    np.testing.assert_array_equal(draw(manager, cpu0), reference(DEFAULT_SEED, cpu0, skip=1))
    # and devices used later still start from the global seed
    np.testing.assert_array_equal(draw(manager, dagnet.cpu(2)),
                                  reference(DEFAULT_SEED, dagnet.cpu(2)))


def test_public_seed_of_one_device():
    ctx = dagnet.cpu(1)
    dagnet.random.seed(11, ctx=ctx)
    np.testing.assert_array_equal(draw(None, ctx), reference(11, ctx))
    dagnet.random.seed(np.int64(12), ctx)
    np.testing.assert_array_equal(draw(None, ctx), reference(12, ctx))


@pytest.mark.parametrize("seed", [1.5, "3", None], ids=repr)  # any int is a seed (MXNet's)
def test_bad_seed(seed):
    with pytest.raises(ResourceError, match="seed_state must be an int") as info:
        dagnet.random.seed(seed)
    assert isinstance(info.value, ValueError) and repr(seed) in str(info.value)


@pytest.mark.parametrize("ctx", ["", 0, None, ["cpu"]], ids=repr)
def test_bad_seed_context(ctx):
    with pytest.raises(ResourceError, match="ctx must be 'all' or a dagnet Context"):
        dagnet.random.seed(1, ctx)


# -- temp space ------------------------------------------------------------------
def test_temp_space_round_robin():
    with dagnet.config.set(temp_space_copies=3):
        manager = ResourceManager()
        spaces = [manager.request(dagnet.cpu(0), TEMP) for _ in range(7)]
    assert all(isinstance(s, TempSpace) and s.kind is ResourceKind.TEMP_SPACE for s in spaces)
    assert spaces[0] is not spaces[1] and spaces[1] is not spaces[2]
    assert spaces[3] is spaces[0] and spaces[4] is spaces[1] and spaces[6] is spaces[0]
    assert len({id(s.var) for s in spaces}) == 3
    other = manager.request(dagnet.cpu(1), TEMP)  # another device has its own copies
    assert other.ctx == dagnet.cpu(1) and all(other is not s for s in spaces)


def test_temp_space_copies_default():
    manager = ResourceManager()
    spaces = {id(manager.request(dagnet.cpu(0), TEMP)) for _ in range(10)}
    assert len(spaces) == dagnet.config.get("temp_space_copies") == 4


@pytest.mark.parametrize(("shape", "dtype"), [
    ((3, 4), np.float64), ((2,), "int32"), ((0, 5), np.float32), ((), np.int8),
    ((2, 3, 4), np.float16), (7, np.uint8),
], ids=str)
def test_get_space_shape_and_dtype(shape, dtype):
    space = ResourceManager().request(dagnet.cpu(0), TEMP)
    array = space.get_space(shape, dtype)
    assert isinstance(array, np.ndarray)
    assert array.shape == (shape if isinstance(shape, tuple) else (shape,))
    assert array.dtype == np.dtype(dtype)
    array[...] = 1  # writable
    assert space.nbytes >= array.nbytes


def test_get_space_default_dtype():
    assert ResourceManager().request(dagnet.cpu(0), TEMP).get_space((2, 2)).dtype == np.float32


def test_temp_space_grows_and_is_reused():
    ctx = dagnet.cpu(62)  # a device no other test uses: its storage stats are this test's
    space = ResourceManager().request(ctx, TEMP)
    assert space.nbytes == 0
    small = space.get_space((10,), np.float32)
    held = space.nbytes
    assert held >= 40
    again = space.get_space((5,), np.float64)  # fits: the same buffer
    assert np.shares_memory(small, again) and space.nbytes == held
    big = space.get_space((10_000,), np.float32)  # grows
    assert space.nbytes >= 40_000 and not np.shares_memory(big, small)
    assert dagnet.storage.stats(ctx).in_use == space.nbytes  # the small block went back
    after = space.get_space((100,), np.int32)  # smaller again: the grown buffer is reused
    assert np.shares_memory(after, big) and space.nbytes >= 40_000


def test_temp_space_used_from_the_engine():
    ctx = dagnet.cpu(0)
    space = ResourceManager().request(ctx, TEMP)
    engine = dagnet.engine.current()
    sums = []

    def op(run_ctx):
        scratch = space.get_space((4, 4), np.float64)
        scratch[...] = np.arange(16).reshape(4, 4)
        sums.append(float(scratch.sum()))

    for _ in range(3):
        engine.push_sync(op, ctx, mutate_vars=[space.var], name="uses_temp_space")
    engine.wait_for_var(space.var)
    assert sums == [120.0] * 3
