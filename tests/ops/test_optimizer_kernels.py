"""Direct kernel tests of the optimizer updates (plugins/dagnet_ops/optimizer), numpy only.

The expected figures are MXNet 1.9.1's, from ``mx.nd.<update>(weight, grad, *states,
out=weight, **params)`` on the arrays below.
"""

from __future__ import annotations

import numpy as np
import pytest

from dagnet.operator import NoGradient, OpContext, OpReqType
from dagnet_ops.optimizer import adam, sgd
from dagnet_ops.optimizer._common import BLOCK

OPS = {op.name: op for module in (sgd, adam) for op in module.OPS}

WEIGHT = [1.0, -2.0, 0.5, 3.0]
GRAD = [0.5, -4.0, 2.0, -0.1]
MOM = [0.1, 0.2, -0.3, 0.0]
VAR = [0.01, 0.2, 0.3, 0.05]
CLIPPED = {"wd": 0.2, "rescale_grad": 0.5, "clip_gradient": 0.6}


def update(name, params, states=(), *, in_place=True, dtype=np.float64, repeat=1):
    """Run ``name`` on WEIGHT and GRAD (each tiled ``repeat`` times); returns (output,
    weight, states) after the call."""
    op = OPS[name]
    attrs = op.parse_params(params)
    weight = np.tile(np.array(WEIGHT, dtype), repeat)
    arrays = [weight] + [np.tile(np.array(a, dtype), repeat) for a in (GRAD, *states)]
    out = weight if in_place else np.zeros_like(weight)
    req = OpReqType.INPLACE if in_place else OpReqType.WRITE
    op.kernel_for("cpu")(attrs, OpContext(True, None, [], np), arrays, [req], [out])
    return out, weight, arrays[2:]


@pytest.mark.parametrize("params, expected", [
    ({"lr": 0.1}, [0.95, -1.6, 0.3, 3.01]),
    ({"lr": 0.1, **CLIPPED}, [0.955, -1.9, 0.43, 2.945]),
    ({"lr": 0.1, "clip_gradient": 0.0}, WEIGHT),  # a zero bound clips everything
])
def test_sgd_update_matches_mxnet(params, expected):
    out, _, _ = update("sgd_update", params)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.parametrize("params, weight, mom", [
    ({"lr": 0.1, "momentum": 0.9}, [1.04, -1.42, 0.03, 3.01], [0.04, 0.58, -0.47, 0.01]),
    ({"lr": 0.1, "momentum": 0.9, **CLIPPED}, [1.045, -1.72, 0.16, 2.945],
     [0.045, 0.28, -0.34, -0.055]),
])
def test_sgd_mom_update_matches_mxnet_and_updates_the_momentum(params, weight, mom):
    out, _, (state,) = update("sgd_mom_update", params, [MOM])
    np.testing.assert_allclose(out, weight, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(state, mom, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("params, weight, mean, var", [
    ({"lr": 0.1}, [0.8616503477, -1.9526416063, 0.5127021074, 3.0044739246],
     [0.14, -0.22, -0.07, -0.01], [0.01024, 0.2158, 0.3037, 0.04996]),
    ({"lr": 0.1, "beta1": 0.8, "beta2": 0.9, "epsilon": 1e-3, **CLIPPED},
     [0.9011779428, -2.0085880757, 0.5216538906, 2.9600460529], [0.17, 0.04, -0.12, 0.11],
     [0.02925, 0.216, 0.306, 0.07525]),
])
def test_adam_update_matches_mxnet_and_updates_its_moments(params, weight, mean, var):
    out, _, (m, v) = update("adam_update", params, [MOM, VAR])
    np.testing.assert_allclose(out, weight, rtol=2e-6)
    np.testing.assert_allclose(m, mean, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(v, var, rtol=2e-6)


@pytest.mark.parametrize("name, states", [("sgd_update", []), ("sgd_mom_update", [MOM]),
                                          ("adam_update", [MOM, VAR])])
def test_writing_to_another_array_leaves_the_weight_alone(name, states):
    params = {"lr": 0.05, "momentum": 0.5} if name == "sgd_mom_update" else {"lr": 0.05}
    in_place, _, _ = update(name, params, states)
    out, weight, _ = update(name, params, states, in_place=False)
    np.testing.assert_allclose(out, in_place)
    np.testing.assert_array_equal(weight, WEIGHT)


@pytest.mark.parametrize("name, states", [("sgd_update", []), ("sgd_mom_update", [MOM]),
                                          ("adam_update", [MOM, VAR])])
@pytest.mark.parametrize("in_place", [True, False])
def test_arrays_of_several_blocks_update_as_small_ones(name, states, in_place):
    """Updates run block by block over large arrays; every block, the short last one
    included, must get what the whole small array gets."""
    params = {"lr": 0.1, "momentum": 0.9, **CLIPPED} if name == "sgd_mom_update" else \
        {"lr": 0.1, **CLIPPED}
    repeat = 2 * BLOCK // len(WEIGHT) + 1  # two whole blocks and a short one
    small_out, _, small_states = update(name, params, states, in_place=in_place)
    out, weight, big_states = update(name, params, states, in_place=in_place, repeat=repeat)
    np.testing.assert_array_equal(out, np.tile(small_out, repeat))
    if not in_place:
        np.testing.assert_array_equal(weight, np.tile(WEIGHT, repeat))
    for big, small in zip(big_states, small_states):
        np.testing.assert_array_equal(big, np.tile(small, repeat))


def test_float32_updates_stay_float32():
    out, _, (m, v) = update("adam_update", {"lr": 0.1}, [MOM, VAR], dtype=np.float32)
    assert out.dtype == m.dtype == v.dtype == np.float32
    np.testing.assert_allclose(out, [0.8616503477, -1.9526416063, 0.5127021074, 3.0044739246],
                               rtol=1e-6)


@pytest.mark.parametrize("name, arguments, states", [
    ("sgd_update", ["weight", "grad"], []),
    ("sgd_mom_update", ["weight", "grad"], ["mom"]),
    ("adam_update", ["weight", "grad"], ["mean", "var"]),
])
def test_declarations(name, arguments, states):
    op = OPS[name]
    attrs = op.parse_params({"lr": 0.1})
    assert op.list_arguments(attrs) == arguments
    assert op.list_auxiliary_states(attrs) == states
    assert isinstance(op.gradient, NoGradient)
    shapes = [(2, 3)] * (2 + len(states))
    assert op.shapes(attrs, shapes) == (shapes, [(2, 3)])
    defaults = op.parse_params({"lr": 0.1})
    assert (defaults.wd, defaults.rescale_grad, defaults.clip_gradient, defaults.lazy_update) == \
        (0.0, 1.0, -1.0, True)
    if name == "adam_update":
        assert (defaults.beta1, defaults.beta2, defaults.epsilon) == (0.9, 0.999, 1e-8)
