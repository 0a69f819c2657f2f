"""Optimizers (dagnet.optimizer): SGD and Adam against hand-written numpy updates, the
per-parameter rates and decays, update counts, the Updater and its states, errors."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import dagnet as mx
from dagnet import optimizer as opt_module

SHAPE = (3, 4)


def data(steps=4, seed=0):
    rng = np.random.RandomState(seed)
    weight = rng.uniform(-1, 1, SHAPE).astype(np.float32)
    return weight, [rng.uniform(-2, 2, SHAPE).astype(np.float32) for _ in range(steps)]


def run(optimizer, weight, grads, index=0):
    updater = mx.optimizer.get_updater(optimizer)
    w = mx.nd.array(weight)
    for g in grads:
        updater(index, mx.nd.array(g), w)
    return w.asnumpy(), updater


def numpy_gradient(weight, grad, rescale_grad, clip_gradient):
    g = grad.astype(np.float64) * rescale_grad
    return np.clip(g, -clip_gradient, clip_gradient) if clip_gradient else g


def numpy_sgd(weight, grads, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=None):
    w, mom = weight.astype(np.float64), np.zeros(weight.shape)
    for grad in grads:
        step = numpy_gradient(w, grad, rescale_grad, clip_gradient) + wd * w
        mom = momentum * mom - lr * step
        w = w + mom
    return w


def numpy_adam(weight, grads, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
               rescale_grad=1.0, clip_gradient=None, lrs=None):
    w, m, v = weight.astype(np.float64), np.zeros(weight.shape), np.zeros(weight.shape)
    for t, grad in enumerate(grads, start=1):
        g = grad * rescale_grad + wd * w
        if clip_gradient:
            g = np.clip(g, -clip_gradient, clip_gradient)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        rate = (lrs[t - 1] if lrs else lr) * math.sqrt(1 - beta2**t) / (1 - beta1**t)
        w = w - rate * m / (np.sqrt(v) + epsilon)
    return w


@pytest.mark.parametrize("lr, kwargs", [
    (0.1, dict()),
    (0.1, dict(wd=0.05)),
    (0.05, dict(momentum=0.9)),
    (0.05, dict(momentum=0.9, wd=0.01, rescale_grad=0.5, clip_gradient=0.3)),
    (0.2, dict(rescale_grad=0.25, clip_gradient=0.1)),
])
def test_sgd_matches_numpy_over_several_steps(lr, kwargs):
    weight, grads = data(steps=5)
    got, _ = run(mx.optimizer.SGD(learning_rate=lr, **kwargs), weight, grads)
    np.testing.assert_allclose(got, numpy_sgd(weight, grads, lr, **kwargs), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs", [
    dict(),
    dict(learning_rate=0.01, wd=0.1, clip_gradient=0.5, rescale_grad=2.0),
    dict(learning_rate=0.05, beta1=0.5, beta2=0.9, epsilon=1e-4),
])
def test_adam_matches_numpy_with_bias_correction(kwargs):
    weight, grads = data(steps=6)
    lr = kwargs.get("learning_rate", 0.001)
    reference = {k: v for k, v in kwargs.items() if k != "learning_rate"}
    expected = numpy_adam(weight, grads, lr, **reference)
    got, _ = run(mx.optimizer.Adam(**kwargs), weight, grads)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


# MXNet 1.9.1's weights (first six values) after 4 updates of `data()`.
ORACLE = [
    ("sgd", dict(learning_rate=0.1),
     [0.25209, 0.211914, 0.314193, 0.028878, -0.10867, 0.377245]),
    ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5, clip_gradient=0.3),
     [0.118679, 0.230706, 0.316746, 0.065978, -0.036878, 0.286356]),
    ("adam", dict(learning_rate=0.01, wd=0.1, clip_gradient=0.5, rescale_grad=2.0),
     [0.085322, 0.396194, 0.227097, 0.095166, -0.130665, 0.291919]),
    ("sgd", dict(param_idx2name={0: "fc_bias"}, wd=0.5, learning_rate=0.2),
     [0.406553, -0.006551, 0.422859, -0.03201, -0.064649, 0.462701]),
]


@pytest.mark.parametrize("name, kwargs, expected", ORACLE)
def test_matches_mxnet(name, kwargs, expected):
    weight, grads = data()
    got, _ = run(mx.optimizer.create(name, **kwargs), weight, grads)
    # MXNet forms Adam's (1 - beta) in float32, which moves its figures by ~1e-5 relative.
    np.testing.assert_allclose(got.ravel()[:6], expected, rtol=2e-5, atol=2e-6)


def test_adam_with_a_scheduler_uses_each_steps_rate():
    weight, grads = data()
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=0.1)
    got, _ = run(mx.optimizer.Adam(learning_rate=0.1, lr_scheduler=sched), weight, grads)
    expected = numpy_adam(weight, grads, 0.1, lrs=[0.1, 0.1, 0.05, 0.05])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


# SGD's updater calls take MXNet's multi-weight operators, one weight included
@pytest.mark.parametrize("name, op_names", [
    ("sgd", ["multi_sgd_update"]), ("sgd_mom", ["multi_sgd_mom_update"]),
    ("adam", ["adam_update"]),
])
def test_updates_run_through_the_registered_operators(monkeypatch, name, op_names):
    calls = []
    for op_name in op_names:
        real = getattr(mx.nd, op_name)

        def spy(*args, _real=real, _name=op_name, **kwargs):
            out = kwargs["out"]
            calls.append((_name, (out[0] if isinstance(out, list) else out) is args[0]))
            return _real(*args, **kwargs)

        monkeypatch.setattr(mx.nd, op_name, spy)
    optimizer = (mx.optimizer.SGD(momentum=0.9) if name == "sgd_mom"
                 else mx.optimizer.create(name))
    weight, grads = data(steps=2)
    run(optimizer, weight, grads)
    assert calls == [(op_names[0], True)] * 2


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_sgd_updates_weights_four_at_a_time_as_one_at_a_time(monkeypatch, momentum):
    calls = []
    name = "multi_sgd_mom_update" if momentum else "multi_sgd_update"
    real = getattr(mx.nd, name)
    monkeypatch.setattr(mx.nd, name, lambda *a, **k: calls.append(k["num_weights"]) or
                        real(*a, **k))
    rng = np.random.RandomState(1)
    shapes = [(3, 4), (4,), (2, 2), (5,), (3,), (1, 6)]
    weights = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    grads = [[rng.uniform(-2, 2, s).astype(np.float32) for s in shapes] for _ in range(3)]
    results = []
    for aggregate_num in (4, 0):
        optimizer = mx.optimizer.SGD(learning_rate=0.1, momentum=momentum, wd=0.01,
                                     rescale_grad=0.5, clip_gradient=0.8,
                                     param_idx2name={i: f"p{i}_weight" for i in range(6)})
        assert optimizer.aggregate_num == 4  # MXNet's default
        optimizer.aggregate_num = aggregate_num
        optimizer.set_lr_mult({1: 2.0})
        updater = mx.optimizer.get_updater(optimizer)
        ws = [mx.nd.array(w) for w in weights]
        for step in grads:
            updater(list(range(6)), [mx.nd.array(g) for g in step], ws)
        results.append([w.asnumpy() for w in ws])
    assert calls == [4, 2] * 3
    for aggregated, single in zip(*results):
        np.testing.assert_array_equal(aggregated, single)


def test_momentum_state_is_updated_in_place():
    optimizer = mx.optimizer.SGD(learning_rate=0.1, momentum=0.5)
    w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    state = optimizer.create_state(0, w)
    optimizer.update(0, w, g, state)
    np.testing.assert_allclose(state.asnumpy(), -0.1)
    np.testing.assert_allclose(w.asnumpy(), 0.9)
    assert mx.optimizer.SGD().create_state(0, w) is None


def test_wd_mult_defaults_from_names():
    names = {0: "fc_weight", 1: "fc_bias", 2: "bn_gamma", 3: "bn_beta"}
    optimizer = mx.optimizer.SGD(param_idx2name=names, wd=0.1)
    assert optimizer.wd_mult == {"fc_bias": 0.0, "bn_beta": 0.0}
    assert [optimizer._get_wd(i) for i in range(4)] == [0.1, 0.0, 0.1, 0.0]


def test_lr_and_wd_mults_by_index_and_name():
    optimizer = mx.optimizer.SGD(learning_rate=0.5, wd=0.2, param_idx2name={0: "a_weight"})
    optimizer.set_lr_mult({"a_weight": 2.0, 5: 0.1})
    optimizer.set_wd_mult({"a_weight": 3.0})
    assert optimizer._get_lr(0) == pytest.approx(1.0)
    assert optimizer._get_lr(5) == pytest.approx(0.05)
    assert optimizer._get_lr(7) == pytest.approx(0.5)
    assert optimizer._get_wd(0) == pytest.approx(0.6)
    assert optimizer._get_wds([0, 7]) == pytest.approx([0.6, 0.2])


def test_mults_from_symbol_attributes():
    data_ = mx.sym.Variable("data")
    weight = mx.sym.Variable("fc_weight", lr_mult=2, wd_mult=0.5)
    net = mx.sym.FullyConnected(data_, weight=weight, num_hidden=3, name="fc")
    optimizer = mx.optimizer.SGD(sym=net, learning_rate=0.1, wd=0.1,
                                 param_idx2name={1: "fc_weight", 2: "fc_bias"})
    assert optimizer._get_lr(1) == pytest.approx(0.2)
    assert optimizer._get_wd(1) == pytest.approx(0.05)
    assert optimizer._get_wd(2) == 0.0


def test_param_dict_multipliers_win():
    class Param:
        lr_mult, wd_mult = 3.0, 0.0

    optimizer = mx.optimizer.SGD(learning_rate=0.1, wd=0.1, param_dict={0: Param()})
    optimizer.set_lr_mult({0: 10.0})
    assert optimizer._get_lr(0) == pytest.approx(0.3)
    assert optimizer._get_wd(0) == 0.0
    assert pickle.loads(pickle.dumps(optimizer)).param_dict == {}


def test_lr_mult_scales_the_update():
    weight, grads = data(steps=3)
    optimizer = mx.optimizer.SGD(learning_rate=0.1, param_idx2name={0: "x_weight"})
    optimizer.set_lr_mult({"x_weight": 0.5})
    got, _ = run(optimizer, weight, grads)
    np.testing.assert_allclose(got, numpy_sgd(weight, grads, 0.05), rtol=1e-5, atol=1e-6)


def test_update_counts_per_index_and_begin_num_update():
    optimizer = mx.optimizer.Adam(begin_num_update=10)
    w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    states = {i: optimizer.create_state(i, w) for i in (0, 1)}
    for i in (0, 0, 1):
        optimizer.update(i, w, g, states[i])
    assert optimizer._index_update_count == {0: 12, 1: 11}
    assert optimizer.num_update == 12


def test_adam_bias_correction_uses_the_index_own_count():
    weight, grads = data(steps=3)
    optimizer = mx.optimizer.Adam(learning_rate=0.01)
    updater = mx.optimizer.get_updater(optimizer)
    first, second = mx.nd.array(weight), mx.nd.array(weight)
    for g in grads:
        updater(0, mx.nd.array(g), first)
    updater(1, mx.nd.array(grads[0]), second)
    np.testing.assert_allclose(second.asnumpy(), numpy_adam(weight, grads[:1], 0.01),
                               rtol=1e-5, atol=1e-6)


def test_learning_rate_property_and_scheduler():
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    optimizer = mx.optimizer.SGD(lr_scheduler=sched)
    assert optimizer.lr is None and optimizer.learning_rate == 1.0
    optimizer.num_update = 3
    assert optimizer.learning_rate == 0.25
    with pytest.raises(UserWarning, match="change the scheduler's base_lr") as info:
        optimizer.set_learning_rate(0.1)
    assert isinstance(info.value, mx.DagnetError)
    plain = mx.optimizer.SGD()
    assert plain.learning_rate == 0.01
    plain.set_learning_rate(0.3)
    assert plain.learning_rate == 0.3


def test_learning_rate_overwrites_the_schedulers_base_lr():
    sched = mx.lr_scheduler.FactorScheduler(step=10, base_lr=1.0)
    with pytest.warns(UserWarning, match="overwrites"):
        mx.optimizer.SGD(learning_rate=0.2, lr_scheduler=sched)
    assert sched.base_lr == 0.2


def test_clip_gradient_zero_turns_clipping_off_as_in_mxnet():
    weight, grads = data(steps=2)
    got, _ = run(mx.optimizer.SGD(learning_rate=0.1, clip_gradient=0), weight, grads)
    np.testing.assert_allclose(got, numpy_sgd(weight, grads, 0.1), rtol=1e-5, atol=1e-6)


def test_multi_precision_updates_a_float32_master_copy():
    weight, grads = data(steps=3)
    optimizer = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, multi_precision=True)
    updater = mx.optimizer.get_updater(optimizer)
    w = mx.nd.array(weight).astype("float16")
    for g in grads:
        updater(0, mx.nd.array(g).astype("float16"), w)
    mom, master = updater.states[0]  # SGD's order in MXNet: (momentum, master copy)
    assert master.dtype == np.float32 and mom.dtype == np.float32 and w.dtype == np.float16
    expected = numpy_sgd(weight.astype(np.float16).astype(np.float32),
                         [g.astype(np.float16) for g in grads], 0.1, momentum=0.9)
    np.testing.assert_allclose(master.asnumpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(w.asnumpy(), master.asnumpy().astype(np.float16))


def test_float16_without_multi_precision_warns():
    with pytest.warns(UserWarning, match="multi_precision=True"):
        mx.optimizer.SGD().create_state_multi_precision(0, mx.nd.zeros((2,), dtype="float16"))


def test_updater_states_round_trip_through_pickle():
    weight, grads = data(steps=4)
    _, updater = run(mx.optimizer.Adam(learning_rate=0.01), weight, grads[:2])
    saved = updater.get_states(dump_optimizer=True)

    restored = mx.optimizer.get_updater(mx.optimizer.SGD())
    restored.set_states(saved)
    assert isinstance(restored.optimizer, mx.optimizer.Adam)
    assert restored.states_synced == {0: False}
    w = mx.nd.array(numpy_adam(weight, grads[:2], 0.01).astype(np.float32))
    for g in grads[2:]:
        restored(0, mx.nd.array(g), w)
    np.testing.assert_allclose(w.asnumpy(), numpy_adam(weight, grads, 0.01), rtol=1e-5,
                               atol=1e-6)

    states_only = mx.optimizer.get_updater(mx.optimizer.Adam())
    states_only.set_states(updater.get_states())
    assert set(states_only.states) == {0}


def test_updater_moves_loaded_states_to_the_weights_device():
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9))
    updater(0, mx.nd.ones((2,)), mx.nd.ones((2,)))
    updater.set_states(updater.get_states())
    weight = mx.nd.ones((2,), mx.cpu(1))
    updater(0, mx.nd.ones((2,), mx.cpu(1)), weight)
    assert updater.states[0].context == mx.cpu(1)
    assert updater.sync_state_context((None, [mx.nd.ones((1,))]), mx.cpu(2))[1][0].context \
        == mx.cpu(2)


def test_updater_takes_lists():
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(learning_rate=1.0))
    weights = [mx.nd.ones((2,)), mx.nd.ones((3,))]
    updater([0, 1], [mx.nd.ones((2,)), mx.nd.ones((3,)) * 2], weights)
    np.testing.assert_array_equal(weights[0].asnumpy(), 0)
    np.testing.assert_array_equal(weights[1].asnumpy(), -1)


def test_create_register_and_unknown_names():
    assert isinstance(mx.optimizer.create("SGD", momentum=0.9), mx.optimizer.SGD)
    assert isinstance(mx.optimizer.Optimizer.create_optimizer("adam"), mx.optimizer.Adam)
    with pytest.raises(ValueError) as info:
        mx.optimizer.create("adamw")
    assert "unknown optimizer 'adamw'; expected one of" in str(info.value)
    assert "adam, adamax" in str(info.value) and "register" in str(info.value)
    assert isinstance(info.value, KeyError) and isinstance(info.value, mx.DagnetError)

    @mx.optimizer.register
    class Plain(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = weight - self._get_lr(index) * grad

    try:
        plain = mx.optimizer.create("plain", learning_rate=0.5)
        w = mx.nd.ones((2,))
        mx.optimizer.get_updater(plain)(0, mx.nd.ones((2,)), w)
        np.testing.assert_array_equal(w.asnumpy(), 0.5)
    finally:
        del mx.optimizer.Optimizer.opt_registry["plain"]


@pytest.mark.parametrize("make, error, words", [
    (lambda: mx.optimizer.SGD(learning_rate="fast"), TypeError, "learning_rate must be a real"),
    (lambda: mx.optimizer.SGD(learning_rate=float("nan")), ValueError,
     "learning_rate must be a finite number"),
    (lambda: mx.optimizer.SGD(momentum=-0.5), ValueError, "momentum must be >= 0"),
    (lambda: mx.optimizer.SGD(clip_gradient=-1.0), ValueError, "clip_gradient must be >= 0"),
    (lambda: mx.optimizer.SGD(param_idx2name=["w"]), TypeError, "dict of update index"),
    (lambda: mx.optimizer.SGD(lr_scheduler=0.1), TypeError, "FactorScheduler"),
    (lambda: mx.optimizer.SGD(begin_num_update=1.5), TypeError, "must be an integer"),
    (lambda: mx.optimizer.Adam(beta1=1.0), ValueError, r"beta1 must be in \[0, 1\)"),
    (lambda: mx.optimizer.create(3), TypeError, "name must be a str"),
    (lambda: mx.optimizer.register(dict), TypeError, "derive your class"),
    (lambda: mx.optimizer.get_updater("sgd"), TypeError, "mx.optimizer.SGD()"),
])
def test_bad_arguments(make, error, words):
    with pytest.raises(error, match=words) as info:
        make()
    assert isinstance(info.value, mx.DagnetError)


def test_base_optimizer_update_must_be_defined():
    with pytest.raises(NotImplementedError, match="must define update"):
        opt_module.Optimizer().update(0, mx.nd.ones((1,)), mx.nd.ones((1,)), None)


def test_a_negative_learning_rate_steps_up_the_gradient():
    """MXNet takes negative rates (gradient ascent); so does dagnet."""
    opt = mx.optimizer.SGD(learning_rate=-0.5)
    assert opt.learning_rate == -0.5
    w = mx.nd.ones((2,))
    mx.optimizer.get_updater(opt)(0, mx.nd.ones((2,)), w)
    np.testing.assert_allclose(w.asnumpy(), 1.5)
    opt.set_learning_rate(-1.0)
    assert opt.learning_rate == -1.0
