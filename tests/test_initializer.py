"""Initializers (dagnet.init / dagnet.initializer): values, statistics, dispatch on the
parameter's name, the ``__init__`` attribute, registry and errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import dagnet as mx
from dagnet import initializer


def filled(init, name, shape, attrs=None):
    arr = mx.nd.zeros(shape)
    init(mx.init.InitDesc(name, attrs=attrs), arr)
    return arr.asnumpy()


def test_init_is_the_initializer_module():
    assert mx.init is mx.initializer is initializer


def test_init_desc_is_a_str_with_attrs_and_global_init():
    desc = mx.init.InitDesc("fc_weight", {"__lr_mult__": "2"})
    assert desc == "fc_weight" and isinstance(desc, str)
    assert desc.attrs == {"__lr_mult__": "2"} and desc.global_init is None


@pytest.mark.parametrize("name, expected", [
    ("fc1_bias", 0.0), ("bn_beta", 0.0), ("bn_gamma", 1.0), ("bn_moving_mean", 0.0),
    ("bn_moving_var", 1.0), ("bn_moving_inv_var", 0.0), ("bn_moving_avg", 0.0),
    ("q_min", 0.0), ("q_max", 1.0),
])
def test_suffixes_other_than_weight_get_their_fixed_values(name, expected):
    np.testing.assert_array_equal(filled(mx.init.Uniform(5.0), name, (3, 4)), expected)


def test_weight_suffix_uses_the_initializers_rule():
    np.testing.assert_array_equal(filled(mx.init.One(), "conv0_weight", (2, 3)), 1.0)
    np.testing.assert_array_equal(filled(mx.init.Zero(), "conv0_weight", (2, 3)), 0.0)
    np.testing.assert_array_equal(filled(mx.init.Constant(2.5), "w_weight", (2, 3)), 2.5)


def test_a_plain_str_name_is_accepted():
    arr = mx.nd.zeros((2, 2))
    mx.init.One()("fc_bias", arr)
    np.testing.assert_array_equal(arr.asnumpy(), 0.0)


def test_unknown_suffix_says_how_to_declare_an_initializer():
    with pytest.raises(ValueError, match=r"mx.sym.Variable\('data', init=") as info:
        filled(mx.init.Uniform(), "data", (2,))
    assert isinstance(info.value, mx.DagnetError)


def test_init_attribute_overrides_the_suffix():
    out = filled(mx.init.Uniform(), "fc_bias", (3,), {"__init__": mx.init.Constant(7).dumps()})
    np.testing.assert_array_equal(out, 7.0)


def test_init_attribute_from_a_symbol_variable():
    var = mx.sym.Variable("stat", init=mx.init.One())
    attrs = var.attr_dict()["stat"]
    np.testing.assert_array_equal(filled(mx.init.Zero(), "stat", (4,), attrs), 1.0)


def test_global_init_is_set_to_the_first_initializer_called():
    desc = mx.init.InitDesc("a_weight")
    init = mx.init.Zero()
    init(desc, mx.nd.zeros((2, 2)))
    assert desc.global_init is init


def test_uniform_bounds_and_spread():
    out = filled(mx.init.Uniform(0.3), "w_weight", (200, 300))
    assert out.min() >= -0.3 and out.max() < 0.3
    assert out.std() == pytest.approx(0.6 / math.sqrt(12), rel=0.02)
    assert abs(out.mean()) < 0.01


def test_uniform_default_scale():
    assert mx.init.Uniform().scale == 0.07


def test_normal_sigma():
    out = filled(mx.init.Normal(0.5), "w_weight", (300, 300))
    assert out.std() == pytest.approx(0.5, rel=0.02)
    assert abs(out.mean()) < 0.01
    assert mx.init.Normal().sigma == 0.01


@pytest.mark.parametrize("shape, factor_type, magnitude, factor", [
    ((64, 32), "avg", 3, (32 + 64) / 2),
    ((64, 32), "in", 2.34, 32),
    ((64, 32), "out", 3, 64),
    ((16, 8, 3, 3), "avg", 3, (8 * 9 + 16 * 9) / 2),
])
def test_xavier_scale(shape, factor_type, magnitude, factor):
    xavier = mx.init.Xavier(factor_type=factor_type, magnitude=magnitude)
    bound = math.sqrt(magnitude / factor)
    assert xavier.scale(shape) == pytest.approx(bound)
    out = filled(xavier, "l_weight", shape)
    assert np.abs(out).max() <= bound
    assert np.abs(out).max() > 0.9 * bound


def test_xavier_gaussian_std_for_a_large_weight():
    out = filled(mx.init.Xavier(rnd_type="gaussian", magnitude=2), "w_weight", (400, 300))
    assert out.std() == pytest.approx(math.sqrt(2 / 350), rel=0.02)


def test_xavier_refuses_a_vector():
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        filled(mx.init.Xavier(), "v_weight", (5,))


def test_msra_prelu_is_gaussian_he_initialization():
    init = mx.init.MSRAPrelu(factor_type="in", slope=0.0)
    assert init.dumps() == '["msraprelu", {"factor_type": "in", "slope": 0.0}]'
    out = filled(init, "c_weight", (100, 64, 3, 3))
    assert out.std() == pytest.approx(math.sqrt(2.0 / (64 * 9)), rel=0.02)


def test_orthogonal_rows_are_orthonormal_times_scale():
    out = filled(mx.init.Orthogonal(scale=2.0), "o_weight", (20, 5, 2, 3)).reshape(20, 30)
    np.testing.assert_allclose(out @ out.T, 4.0 * np.eye(20), atol=1e-4)
    tall = filled(mx.init.Orthogonal(rand_type="normal"), "t_weight", (30, 10))
    np.testing.assert_allclose(tall.T @ tall, 1.414**2 * np.eye(10), atol=1e-4)


def test_bilinear_kernel():
    out = filled(mx.init.Bilinear(), "up_weight", (2, 1, 4, 4))
    row = np.array([0.25, 0.75, 0.75, 0.25])
    np.testing.assert_allclose(out[1, 0], np.outer(row, row))


def test_lstm_bias_sets_the_forget_gate():
    out = filled(mx.init.LSTMBias(2.0), "lstm_weight", (8,))
    np.testing.assert_array_equal(out, [0, 0, 2, 2, 0, 0, 0, 0])


def test_constant_with_an_array_value_and_its_dumps():
    init = mx.init.Constant(mx.nd.array([[1, 2, 3]]))
    np.testing.assert_array_equal(filled(init, "c_weight", (2, 3)), [[1, 2, 3]] * 2)
    assert json.loads(init.dumps()) == ["constant", {"value": [[1.0, 2.0, 3.0]]}]
    # as in MXNet, what dumps wrote is what the kwargs hold afterwards
    assert init.dumps() == json.dumps(["constant", init._kwargs])


@pytest.mark.parametrize("init", [mx.init.Uniform(), mx.init.Normal(1.0), mx.init.Xavier(),
                                  mx.init.Orthogonal(), mx.init.MSRAPrelu()])
def test_random_initializers_follow_the_seed(init):
    mx.random.seed(42)
    first = filled(init, "w_weight", (6, 5))
    mx.random.seed(42)
    again = filled(init, "w_weight", (6, 5))
    other = filled(init, "w_weight", (6, 5))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_fills_the_arrays_dtype_and_device():
    arr = mx.nd.zeros((4, 5), mx.cpu(1), dtype="float64")
    mx.init.Xavier()(mx.init.InitDesc("w_weight"), arr)
    assert arr.dtype == np.float64 and arr.context == mx.cpu(1)
    assert np.abs(arr.asnumpy()).max() > 0


def test_dumps_and_create_round_trip():
    xavier = mx.init.Xavier(factor_type="in", magnitude=2.34)
    assert xavier.dumps() == \
        '["xavier", {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2.34}]'
    assert mx.init.create(xavier.dumps()) == xavier
    assert mx.init.Normal(0.5).dumps() == '["normal", {"sigma": 0.5}]'
    assert mx.init.Zero().dumps() == '["zero", {}]'


def test_create_by_name_alias_or_instance():
    assert isinstance(mx.init.create("Xavier", magnitude=2), mx.init.Xavier)
    assert isinstance(mx.init.create("zeros"), mx.init.Zero)
    assert isinstance(mx.init.create("ones"), mx.init.One)
    one = mx.init.One()
    assert mx.init.create(one) is one


def test_create_unknown_name_lists_what_exists():
    with pytest.raises(KeyError) as info:
        mx.init.create("glorot")
    message = str(info.value)
    assert "unknown initializer 'glorot'" in message
    assert "uniform" in message and "xavier" in message and "register" in message
    assert isinstance(info.value, mx.UnknownNameError)


def test_register_a_custom_initializer():
    @mx.init.register
    class HalfInit(mx.init.Initializer):
        def _init_weight(self, desc, arr):
            arr[:] = 0.5

    try:
        out = filled(mx.init.Uniform(), "b", (2,), {"__init__": HalfInit().dumps()})
        np.testing.assert_array_equal(out, 0.5)
    finally:
        del initializer._REGISTRY["halfinit"]


def test_register_refuses_a_non_initializer():
    with pytest.raises(TypeError, match="not a subclass of dagnet.init.Initializer"):
        mx.init.register(dict)


def test_mixed_uses_the_first_matching_pattern():
    mixed = mx.init.Mixed(["fc1_.*", ".*"], [mx.init.Constant(3), "ones"])
    a, b = mx.nd.zeros((2,)), mx.nd.zeros((2,))
    mixed("fc1_weight", a)
    mixed("fc2_weight", b)
    np.testing.assert_array_equal(a.asnumpy(), 3)
    np.testing.assert_array_equal(b.asnumpy(), 1)
    with pytest.raises(ValueError, match="add '.\\*' last"):
        mx.init.Mixed(["fc1_.*"], [mx.init.One()])("conv_weight", a)
    with pytest.raises(ValueError, match="one initializer per pattern"):
        mx.init.Mixed(["a", "b"], [mx.init.One()])


def test_load_from_dict_and_file(tmp_path):
    saved = {"arg:fc_weight": mx.nd.array([[1, 2], [3, 4]]), "aux:bn_moving_var": mx.nd.ones((2,))}
    path = str(tmp_path / "params")
    mx.nd.save(path, saved)
    for source in (saved, path):
        load = mx.init.Load(source, default_init=mx.init.Constant(9))
        w, other = mx.nd.zeros((2, 2)), mx.nd.zeros((3,))
        load("fc_weight", w)
        load("new_weight", other)
        np.testing.assert_array_equal(w.asnumpy(), [[1, 2], [3, 4]])
        np.testing.assert_array_equal(other.asnumpy(), 9)


def test_load_errors():
    load = mx.init.Load({"w": mx.nd.zeros((2, 2))})
    with pytest.raises(ValueError, match=r"shape \(3,\) but the saved array has shape \(2, 2\)"):
        load("w", mx.nd.zeros((3,)))
    with pytest.raises(KeyError, match="default_init"):
        load("x", mx.nd.zeros((3,)))


@pytest.mark.parametrize("make, error, words", [
    (lambda: mx.init.Uniform("big"), TypeError, "scale must be a real number"),
    (lambda: mx.init.Normal(-1.0), ValueError, "sigma must be >= 0"),
    (lambda: mx.init.Xavier(rnd_type="normal"), ValueError,
     "expected one of 'uniform', 'gaussian'"),
    (lambda: mx.init.Xavier(factor_type="fan_in"), ValueError, "expected one of 'avg', 'in'"),
    (lambda: mx.init.Orthogonal(rand_type="gaussian"), ValueError, "'uniform', 'normal'"),
    (lambda: mx.init.create(3), TypeError, "a name such as 'uniform'"),
    (lambda: mx.init.create(mx.init.One(), value=2), ValueError, "already an initializer"),
    (lambda: mx.init.create("[not json"), ValueError, "not the JSON"),
])
def test_bad_arguments(make, error, words):
    with pytest.raises(error, match=words) as info:
        make()
    assert isinstance(info.value, mx.DagnetError)


def test_calling_with_a_non_name_is_a_type_error():
    with pytest.raises(TypeError, match="InitDesc"):
        mx.init.One()(3, mx.nd.zeros((2,)))


def test_verbosity_logs_each_array(caplog):
    init = mx.init.One().set_verbosity(True)
    with caplog.at_level("INFO", logger="dagnet.initializer"):
        init(mx.init.InitDesc("fc_weight"), mx.nd.zeros((2, 2)))
    assert "Initialized fc_weight as weight: 1.0" in caplog.text
