"""``mx.kv``: push sums per-device values, pull broadcasts, an optimizer on the store
updates exactly as the updater loop, and misuse gets errors that say how to fix it."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.kvstore import KVStoreError, KVStoreUnavailableError, UninitializedKeyError

SHAPE = (2, 3)


def nd(values):
    return mx.nd.array(np.asarray(values, dtype=np.float32))


def pulled(kv, key, shape=SHAPE):
    out = mx.nd.zeros(shape)
    kv.pull(key, out=out)
    return out.asnumpy()


@pytest.mark.parametrize("kind", ["local", "device"])
def test_push_sums_the_values_of_every_device_and_pull_broadcasts(engine_name, kind):
    rng = np.random.default_rng(0)
    kv = mx.kv.create(kind)
    kv.init(3, mx.nd.ones(SHAPE))
    np.testing.assert_array_equal(pulled(kv, 3), np.ones(SHAPE))

    parts = [rng.standard_normal(SHAPE).astype(np.float32) for _ in range(3)]
    kv.push(3, [nd(parts[0]), nd(parts[1]).as_in_context(mx.cpu(1)), nd(parts[2])])
    outs = [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE, ctx=mx.cpu(1))]
    kv.pull(3, out=outs)

    expected = parts[0] + parts[1] + parts[2]
    for out in outs:
        np.testing.assert_allclose(out.asnumpy(), expected, rtol=1e-6)
    assert outs[1].context == mx.cpu(1)


def test_push_without_optimizer_replaces_the_stored_value(engine_name):
    kv = mx.kv.create("local")
    kv.init("w", mx.nd.ones(SHAPE) * 7)
    kv.push("w", mx.nd.ones(SHAPE) * 2)
    kv.push("w", mx.nd.ones(SHAPE) * 3)
    np.testing.assert_array_equal(pulled(kv, "w"), np.full(SHAPE, 3.0))


def test_lists_of_keys_pair_with_lists_of_values_and_repeated_keys_add_up(engine_name):
    kv = mx.kv.create("local")
    kv.init([5, 7, 9], [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)])
    kv.push([5, 7, 5], [mx.nd.ones(SHAPE), [mx.nd.ones(SHAPE)] * 4, mx.nd.ones(SHAPE) * 10])
    outs = [mx.nd.zeros(SHAPE), [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)], mx.nd.zeros(SHAPE)]
    kv.pull([5, 7, 9], out=outs)

    np.testing.assert_array_equal(outs[0].asnumpy(), np.full(SHAPE, 11.0))
    for out in outs[1]:
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 4.0))
    np.testing.assert_array_equal(outs[2].asnumpy(), np.zeros(SHAPE))


def test_pushpull_pushes_then_pulls_into_out(engine_name):
    kv = mx.kv.create("device")
    kv.init("g", mx.nd.zeros(SHAPE))
    outs = [mx.nd.zeros(SHAPE), mx.nd.zeros(SHAPE)]
    kv.pushpull("g", [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE) * 2], out=outs)
    for out in outs:
        np.testing.assert_array_equal(out.asnumpy(), np.full(SHAPE, 3.0))
    kv.pushpull("g", mx.nd.ones(SHAPE))  # without out it only pushes
    np.testing.assert_array_equal(pulled(kv, "g"), np.ones(SHAPE))


def test_the_store_keeps_its_own_copy_of_init_and_pushed_values():
    kv = mx.kv.create("local")
    value = mx.nd.ones(SHAPE)
    kv.init(0, value)
    value[:] = 5
    np.testing.assert_array_equal(pulled(kv, 0), np.ones(SHAPE))
    pushed = mx.nd.ones(SHAPE) * 2
    kv.push(0, pushed)
    pushed[:] = 9
    np.testing.assert_array_equal(pulled(kv, 0), np.full(SHAPE, 2.0))


@pytest.mark.parametrize("kind, where", [("local", mx.cpu(0)), ("device", mx.cpu(1))])
def test_local_sums_on_the_cpu_and_device_on_the_first_values_device(kind, where):
    seen = []
    kv = mx.kv.create(kind)
    kv.init(0, mx.nd.zeros(SHAPE))
    kv.set_updater(lambda key, grad, weight: seen.append((key, grad.context, weight.context)))
    kv.push(0, [mx.nd.ones(SHAPE, ctx=mx.cpu(1)), mx.nd.ones(SHAPE, ctx=mx.cpu(2))])
    assert seen == [(0, where, where)]


def optimizer_pairs():
    return [
        lambda: mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5),
        lambda: mx.optimizer.Adam(learning_rate=0.01, rescale_grad=0.5),
    ]


@pytest.mark.parametrize("make", optimizer_pairs(), ids=["sgd-momentum", "adam"])
@pytest.mark.parametrize("kind", ["local", "device"])
def test_an_optimizer_on_the_store_updates_as_the_updater_loop(engine_name, make, kind):
    rng = np.random.default_rng(1)
    start = {"a": rng.standard_normal(SHAPE), "b": rng.standard_normal((4,))}
    kv = mx.kv.create(kind)
    kv.set_optimizer(make())
    for key, value in start.items():
        kv.init(key, nd(value))
    updater = mx.optimizer.get_updater(make())
    weights = {key: nd(value) for key, value in start.items()}

    for _ in range(4):
        grads = {key: [nd(rng.standard_normal(value.shape)) for _ in range(2)]
                 for key, value in start.items()}
        for key in start:
            kv.push(key, grads[key])
            updater(key, grads[key][0] + grads[key][1], weights[key])

    for key, value in start.items():
        np.testing.assert_array_equal(pulled(kv, key, value.shape), weights[key].asnumpy())


def test_saved_optimizer_states_resume_the_updates(tmp_path):
    def store(start):
        kv = mx.kv.create("local")
        kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9))
        kv.init(0, start)
        return kv

    grad = mx.nd.ones(SHAPE)
    straight = store(mx.nd.ones(SHAPE))
    straight.push(0, grad)
    straight.save_optimizer_states(str(tmp_path / "kv.states"))
    halfway = nd(pulled(straight, 0))
    straight.push(0, grad)

    resumed, restarted = store(halfway), store(halfway)
    resumed.load_optimizer_states(str(tmp_path / "kv.states"))
    resumed.push(0, grad)
    restarted.push(0, grad)
    np.testing.assert_array_equal(pulled(resumed, 0), pulled(straight, 0))
    assert not np.array_equal(pulled(restarted, 0), pulled(straight, 0))  # momentum mattered


def test_a_single_process_store_describes_itself():
    kv = mx.kv.create()
    assert (kv.type, kv.rank, kv.num_workers) == ("local", 0, 1)
    assert mx.kv.create("device").type == "device"
    assert kv.is_capable("optimizer")
    kv.barrier()  # one worker: returns at once
    assert mx.kv is mx.kvstore


def test_pulling_or_pushing_a_key_never_initialised_says_to_init_it():
    kv = mx.kv.create()
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(UninitializedKeyError, match=r"key 9 has not been initialised.*kv.init"):
        kv.pull(9, out=mx.nd.zeros(SHAPE))
    with pytest.raises(KeyError, match="key 8 has not been initialised"):
        kv.push(8, mx.nd.ones(SHAPE))
    with pytest.raises(UninitializedKeyError, match="int and str keys cannot be mixed"):
        kv.pull("3", out=mx.nd.zeros(SHAPE))


def test_init_twice_and_mixed_key_types_are_errors():
    kv = mx.kv.create()
    kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(KVStoreError, match="duplicate init of key 3"):
        kv.init(3, mx.nd.ones(SHAPE))
    with pytest.raises(KVStoreError, match="key 'x' is a str but this store's keys are ints"):
        kv.init("x", mx.nd.ones(SHAPE))
    with pytest.raises(KVStoreError, match="init takes exactly one NDArray per key"):
        kv.init(4, [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE)])


def test_shape_mismatches_name_the_key_and_both_shapes():
    kv = mx.kv.create()
    kv.init("w", mx.nd.ones(SHAPE))
    with pytest.raises(mx.ShapeError, match=r"pushed array for key 'w' has shape \(3, 3\) but "
                                            r"the stored value has shape \(2, 3\)"):
        kv.push("w", [mx.nd.ones(SHAPE), mx.nd.ones((3, 3))])
    with pytest.raises(mx.ShapeError, match=r"output array for key 'w' has shape \(4,\)"):
        kv.pull("w", out=mx.nd.zeros((4,)))
    np.testing.assert_array_equal(pulled(kv, "w"), np.ones(SHAPE))  # nothing was pushed


def test_bad_keys_values_and_outs_are_explained():
    kv = mx.kv.create()
    kv.init([0, 1], [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE)])
    with pytest.raises(TypeError, match=r"a key must be an int or a str, got 1.5"):
        kv.push(1.5, mx.nd.ones(SHAPE))
    with pytest.raises(KVStoreError, match="2 keys need a list of 2 values, one per key, but "
                                           "got a NDArray"):
        kv.push([0, 1], mx.nd.ones(SHAPE))
    with pytest.raises(KVStoreError, match="2 keys need a list of 2 outs.*got 1 entries"):
        kv.pull([0, 1], out=[mx.nd.zeros(SHAPE)])
    with pytest.raises(TypeError, match="must be an NDArray or a list of NDArrays, got ndarray"):
        kv.push(0, np.ones(SHAPE))
    with pytest.raises(TypeError, match="out is required"):
        kv.pull(0)
    with pytest.raises(KVStoreError, match="no optimizer; call set_optimizer"):
        kv.save_optimizer_states("never-written.states")
    with pytest.raises(TypeError, match="expected a dagnet.optimizer.Optimizer"):
        kv.set_optimizer("sgd")


def test_unknown_types_list_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown KVStore type 'foo'; expected one of .*device"
                                         r".*local"):
        mx.kv.create("foo")
    with pytest.raises(KVStoreUnavailableError, match="does not bind NVIDIA NCCL; use 'device'"):
        mx.kv.create("nccl")
    with pytest.raises(TypeError, match="name must be a str"):
        mx.kv.create(3)


def test_pushpull_without_out_writes_the_sum_back_into_the_values():
    kv = mx.kv.create()
    kv.init(0, mx.nd.zeros(SHAPE))
    values = [mx.nd.ones(SHAPE), mx.nd.ones(SHAPE, ctx=mx.cpu(1)) * 2]
    kv.pushpull(0, values)
    for value in values:
        np.testing.assert_array_equal(value.asnumpy(), np.full(SHAPE, 3.0))
