"""Direct kernel tests of the samplers (plugins/dagnet_ops/random/samplers.py) and of
``dagnet.random.uniform`` / ``normal`` through the NDArray front end; the other random
operators are tested under tests/random."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet
from dagnet.operator import NoGradient, OpContext, OpReqType
from dagnet_ops.random import samplers

OPS = {op.name: op for op in samplers.OPS}


class _Random:
    def __init__(self, seed):
        self.generator = np.random.default_rng(seed)


def sample(name, params, seed=0):
    op = OPS[name]
    attrs = op.parse_params(params)
    _, (shape,) = op.shapes(attrs, [])
    _, (dtype,) = op.dtypes(attrs, [])
    out = np.zeros(shape, dtype)
    op.kernel_for("cpu")(attrs, OpContext(False, None, [_Random(seed)], np), [], [OpReqType.WRITE],
                         [out])
    return out


def test_uniform_covers_its_interval():
    out = sample("_random_uniform", {"low": -2, "high": 3, "shape": (200, 50)})
    assert out.dtype == np.float32 and out.shape == (200, 50)
    assert out.min() >= -2 and out.max() < 3
    assert abs(out.mean() - 0.5) < 0.05 and abs(out.std() - 5 / np.sqrt(12)) < 0.05


def test_normal_has_its_moments():
    out = sample("_random_normal",
                 {"loc": 1.5, "scale": 0.5, "shape": (10000,), "dtype": "float64"})
    assert out.dtype == np.float64
    assert abs(out.mean() - 1.5) < 0.02 and abs(out.std() - 0.5) < 0.02


def test_declarations_follow_mxnet():
    for name in OPS:
        op = OPS[name]
        attrs = op.parse_params({"low": 0, "high": 5} if name == "_random_randint" else {})
        assert op.list_arguments(attrs) == []
        assert isinstance(op.gradient, NoGradient)
        assert [r.kind.value for r in op.resource_requests(attrs)] == ["random"]
        assert op.shapes(attrs, [], [None]) == ([], [None])  # unknown until shape= or out
        assert op.shapes(attrs, [], [(2, 3)]) == ([], [(2, 3)])
    assert set(OPS["_random_uniform"].aliases) == {"random_uniform", "uniform"}
    assert set(OPS["_random_normal"].aliases) == {"random_normal", "normal"}
    assert OPS["_random_gamma"].aliases == ("random_gamma",)
    assert list(OPS["_random_uniform"].params.fields()) == ["low", "high", "shape", "ctx",
                                                            "dtype"]
    ctx = OPS["_random_uniform"].parse_params({"ctx": dagnet.cpu(1)}).ctx
    assert ctx == "cpu(1)"


def test_same_seed_same_samples():
    a = sample("_random_uniform", {"shape": (5,)}, seed=3)
    b = sample("_random_uniform", {"shape": (5,)}, seed=3)
    np.testing.assert_array_equal(a, b)


def test_dagnet_random_functions():
    dagnet.random.seed(7)
    a = dagnet.random.uniform(-1, 1, shape=(2, 3))
    assert a.shape == (2, 3) and a.dtype == np.float32
    dagnet.random.seed(7)
    np.testing.assert_array_equal(dagnet.random.uniform(-1, 1, shape=(2, 3)).asnumpy(), a.asnumpy())
    assert dagnet.random.normal().shape == (1,)  # as MXNet: one sample by default
    assert dagnet.random.normal(shape=4, dtype="float64").dtype == np.float64
    out = dagnet.nd.zeros((3,))
    assert dagnet.random.uniform(5, 6, out=out) is out
    assert ((out.asnumpy() >= 5) & (out.asnumpy() < 6)).all()
    assert dagnet.random.randn(2, 2).shape == (2, 2)
    with pytest.raises(dagnet.DagnetError, match="must all be numbers or all NDArrays"):
        dagnet.random.uniform(dagnet.nd.zeros((2,)), 1)


def test_nd_random_has_mx_randoms_samplers():
    # as in MXNet: two modules (mxnet.ndarray.random, mxnet.random), the same samplers
    assert dagnet.nd.random.normal is dagnet.random.normal
    assert dagnet.nd.random.__name__ == "dagnet.ndarray.random"
    dagnet.random.seed(5)
    a = dagnet.nd.random.normal(1, 2, shape=(3,)).asnumpy()
    dagnet.random.seed(5)
    np.testing.assert_array_equal(dagnet.random.normal(1, 2, shape=(3,)).asnumpy(), a)


def test_sym_random_nodes_draw_fresh_samples_each_forward():
    sym = dagnet.sym
    net = sym.random.uniform(-1, 1, shape=(2, 3)) + sym.var("x")
    assert net.list_arguments() == ["x"]
    assert net.get_internals().list_outputs()[0] == "_random_uniform0_output"
    executor = net.simple_bind(dagnet.cpu(), x=(2, 3))
    dagnet.random.seed(2)
    first = executor.forward(x=np.zeros((2, 3)))[0].asnumpy()
    second = executor.forward()[0].asnumpy()
    assert ((first >= -1) & (first < 1)).all() and not np.array_equal(first, second)
    dagnet.random.seed(2)
    np.testing.assert_array_equal(executor.forward()[0].asnumpy(), first)
    assert sym.random.randn(4, 2, loc=3).infer_shape()[1] == [(4, 2)]
    assert sym.random.normal(shape=(2,), dtype="float64").infer_type()[1] == [np.float64]
    with pytest.raises(dagnet.DagnetError, match="must all be numbers or all Symbols"):
        sym.random.uniform(sym.var("low"), 1)
