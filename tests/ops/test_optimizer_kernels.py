"""Direct kernel tests of the optimizer updates (plugins/dagnet_ops/optimizer), on numpy
arrays, through numpy's kernels and (SGD, Adam) the ones compiled with numba.

The expected figures are MXNet 1.9.1's, from ``mx.nd.<update>(weight, grad, *states,
out=weight, **params)`` on the arrays below.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import dagnet
from dagnet.operator import NoGradient, OpContext, OpReqType
from dagnet_ops import _jit
from dagnet_ops.optimizer import adam, sgd
from dagnet_ops.optimizer._common import BLOCK

OPS = {op.name: op for module in (sgd, adam) for op in module.OPS}

WEIGHT = [1.0, -2.0, 0.5, 3.0]
GRAD = [0.5, -4.0, 2.0, -0.1]
MOM = [0.1, 0.2, -0.3, 0.0]
VAR = [0.01, 0.2, 0.3, 0.05]
CLIPPED = {"wd": 0.2, "rescale_grad": 0.5, "clip_gradient": 0.6}


needs_jit = pytest.mark.skipif(
    _jit.kernels("updates") is None,
    reason=f"numba kernels are off: {_jit.unavailable_reason('updates')}")


@pytest.fixture(params=[pytest.param(False, id="numpy"),
                        pytest.param(True, id="compiled", marks=needs_jit)])
def kernels(request):
    """Each test that takes it runs twice: numpy's update kernels, then the compiled ones
    (SGD's and Adam's; the other updates have numpy's only)."""
    with dagnet.config.set(cpu_jit=request.param):
        yield request.param


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
def test_sgd_update_matches_mxnet(params, expected, kernels):
    out, _, _ = update("sgd_update", params)
    np.testing.assert_allclose(out, expected, rtol=1e-6)


@pytest.mark.parametrize("params, weight, mom", [
    ({"lr": 0.1, "momentum": 0.9}, [1.04, -1.42, 0.03, 3.01], [0.04, 0.58, -0.47, 0.01]),
    ({"lr": 0.1, "momentum": 0.9, **CLIPPED}, [1.045, -1.72, 0.16, 2.945],
     [0.045, 0.28, -0.34, -0.055]),
])
def test_sgd_mom_update_matches_mxnet_and_updates_the_momentum(params, weight, mom, kernels):
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
def test_adam_update_matches_mxnet_and_updates_its_moments(params, weight, mean, var,
                                                           kernels):
    out, _, (m, v) = update("adam_update", params, [MOM, VAR])
    np.testing.assert_allclose(out, weight, rtol=2e-6)
    np.testing.assert_allclose(m, mean, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(v, var, rtol=2e-6)


@pytest.mark.parametrize("name, states", [("sgd_update", []), ("sgd_mom_update", [MOM]),
                                          ("adam_update", [MOM, VAR])])
def test_writing_to_another_array_leaves_the_weight_alone(name, states, kernels):
    params = {"lr": 0.05, "momentum": 0.5} if name == "sgd_mom_update" else {"lr": 0.05}
    in_place, _, _ = update(name, params, states)
    out, weight, _ = update(name, params, states, in_place=False)
    np.testing.assert_allclose(out, in_place)
    np.testing.assert_array_equal(weight, WEIGHT)


@pytest.mark.parametrize("name, states", [("sgd_update", []), ("sgd_mom_update", [MOM]),
                                          ("adam_update", [MOM, VAR])])
@pytest.mark.parametrize("in_place", [True, False])
def test_arrays_of_several_blocks_update_as_small_ones(name, states, in_place, kernels):
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


def test_float32_updates_stay_float32(kernels):
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


# -- the compiled kernels against numpy's ----------------------------------------------------
def _multi_arrays(kind, dtype, shapes, seed):
    """Per weight: weight, grad[, mom], with an infinite weight and a NaN gradient."""
    rs = np.random.RandomState(seed)
    per_weight = 3 if kind == "sgd_mom" else 2
    groups = [[(rs.standard_normal(shape) * 3).astype(dtype) for _ in range(per_weight)]
              for shape in shapes]
    groups[0][0].flat[0] = np.inf
    groups[-1][1].flat[-1] = np.nan
    return groups


@needs_jit
@pytest.mark.parametrize("kind", ["sgd", "sgd_mom"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("clip_gradient", [-1.0, 0.0, 0.3])
@pytest.mark.parametrize("wd", [0.0, 1e-3])
@pytest.mark.parametrize("num_weights", [1, 5])
def test_compiled_sgd_gives_numpys_bits(kind, dtype, clip_gradient, wd, num_weights):
    """multi_sgd(_mom)_update through the compiled kernels (weights taken four to a call)
    and through numpy's, weight by weight: the same bits, NaN and infinity included."""
    name = "multi_sgd_mom_update" if kind == "sgd_mom" else "multi_sgd_update"
    rs = np.random.RandomState(num_weights)
    shapes = [tuple(rs.randint(1, 30, size=rs.randint(1, 3))) for _ in range(num_weights)]
    params = {"num_weights": num_weights, "rescale_grad": 1 / 96,
              "lrs": tuple(rs.uniform(0.01, 0.5, num_weights)),
              "wds": tuple(wd * (i % 2) for i in range(num_weights)),
              "clip_gradient": clip_gradient, "momentum": 0.9}
    if kind == "sgd":
        del params["momentum"]
    op = sgd.OPS[[o.name for o in sgd.OPS].index(name)]
    attrs = op.parse_params(params)
    results = []
    for compiled in (True, False):
        groups = _multi_arrays(kind, dtype, shapes, seed=7)
        outs = [group[0] for group in groups]
        with dagnet.config.set(cpu_jit=compiled), np.errstate(invalid="ignore"):
            op.kernel_for("cpu")(attrs, OpContext(True, None, [], np),
                                 list(itertools.chain(*groups)),
                                 [OpReqType.INPLACE] * num_weights, outs)
        results.append([a for group in groups for a in group])
    for got, want in zip(*results):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)


@needs_jit
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("clip_gradient", [-1.0, 0.3])
@pytest.mark.parametrize("wd", [0.0, 1e-3])
def test_compiled_adam_gives_numpys_bits(dtype, clip_gradient, wd):
    """adam_update through the compiled kernel and through numpy's (in blocks, over an
    array of several): the same weight, mean and variance bits, NaN and infinity included."""
    op = OPS["adam_update"]
    attrs = op.parse_params({"lr": 0.01, "wd": wd, "rescale_grad": 1 / 96, "beta1": 0.8,
                             "clip_gradient": clip_gradient, "epsilon": 1e-6})
    size = 2 * BLOCK + 5
    results = []
    for compiled in (True, False):
        rs = np.random.RandomState(3)
        arrays = [(rs.standard_normal(size) * 3).astype(dtype) for _ in range(3)]
        arrays.append(rs.uniform(0, 2, size).astype(dtype))  # the variance
        arrays[0][0], arrays[1][-1] = np.inf, np.nan
        with dagnet.config.set(cpu_jit=compiled), np.errstate(invalid="ignore"):
            op.kernel_for("cpu")(attrs, OpContext(True, None, [], np), arrays,
                                 [OpReqType.INPLACE], [arrays[0]])
        results.append(arrays)
    for got, want in zip(*results):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", ["float16", "strided", "add"])
def test_sgd_runs_numpys_kernels_where_the_compiled_ones_do_not_apply(case):
    """float16 data, a strided view and an added (not written) result go through numpy's
    kernels, with MXNet's results."""
    op = OPS["sgd_update"]
    attrs = op.parse_params({"lr": 0.1})
    dtype = np.float16 if case == "float16" else np.float64
    weight = np.array(WEIGHT, dtype)
    grad = np.array(GRAD, dtype)
    if case == "strided":
        grad = np.repeat(grad, 2)[::2]
    out = np.ones(4, dtype) if case == "add" else weight
    req = OpReqType.ADD if case == "add" else OpReqType.INPLACE
    op.kernel_for("cpu")(attrs, OpContext(True, None, [], np), [weight, grad], [req], [out])
    want = np.array([0.95, -1.6, 0.3, 3.01]) + (1 if case == "add" else 0)
    np.testing.assert_allclose(out, want, rtol=1e-3 if case == "float16" else 1e-12)


def test_sgd_falls_back_to_numpy_without_numba(hide_numba):
    hide_numba("updates")
    assert _jit.kernels("updates") is None
    assert "numba" in _jit.unavailable_reason("updates")
    out, _, _ = update("sgd_update", {"lr": 0.1})
    np.testing.assert_allclose(out, [0.95, -1.6, 0.3, 3.01], rtol=1e-12)
