"""The samplers through ``dagnet.random`` (= ``mx.nd.random``) and ``mx.sym.random``: each
distribution's moments with scalar parameters (``_random_<d>``), with a shape like an
array (``_random_<d>_like``) and per element of parameter arrays (``_sample_<d>``);
dtypes, shapes, reproducibility and errors."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet
from dagnet import nd
from dagnet import random as rnd

# (function, scalar parameters, mean, variance)
CASES = [
    (rnd.uniform, {"low": -1.5, "high": 3.0}, 0.75, 4.5 ** 2 / 12),
    (rnd.normal, {"loc": 10.0, "scale": 0.5}, 10.0, 0.25),
    (rnd.gamma, {"alpha": 9.0, "beta": 0.5}, 4.5, 9.0 * 0.25),
    (rnd.exponential, {"scale": 0.25}, 0.25, 0.0625),
    (rnd.poisson, {"lam": 4.0}, 4.0, 4.0),
    (rnd.negative_binomial, {"k": 3, "p": 0.4}, 3 * 0.6 / 0.4, 3 * 0.6 / 0.16),
    (rnd.generalized_negative_binomial, {"mu": 2.0, "alpha": 0.3}, 2.0, 2.0 + 0.3 * 4),
]
IDS = [c[0].__name__ for c in CASES]


def _close(samples, mean, var):
    samples = samples.astype(np.float64).ravel()
    n = samples.size
    # generous bounds (6 standard errors; the variance's from the sample's fourth moment,
    # heavy tails included), but far tighter than a wrong distribution
    assert abs(samples.mean() - mean) < 6 * np.sqrt(var / n) + 1e-3
    fourth = np.mean((samples - samples.mean()) ** 4)
    assert abs(samples.var() - var) < 6 * np.sqrt(max(fourth - var * var, 0) / n) + 1e-3


@pytest.mark.parametrize("fn,params,mean,var", CASES, ids=IDS)
def test_scalar_parameters(fn, params, mean, var):
    dagnet.random.seed(128)
    first = fn(**params, shape=(200, 100), dtype="float64")
    assert first.shape == (200, 100) and first.dtype == np.float64
    _close(first.asnumpy(), mean, var)
    dagnet.random.seed(128)
    np.testing.assert_array_equal(fn(**params, shape=(200, 100), dtype="float64").asnumpy(),
                                  first.asnumpy())
    assert fn(**params).shape == (1,) and fn(**params).dtype == np.float32


@pytest.mark.parametrize("fn,params,mean,var", CASES, ids=IDS)
def test_like_takes_shape_and_dtype(fn, params, mean, var):
    like = getattr(rnd, f"{fn.__name__}_like")
    if fn is rnd.exponential:
        params = {"lam": 1 / params["scale"]}
    data = dagnet.nd.ones((100, 200), dtype="float64")
    dagnet.random.seed(3)
    out = like(data, **params)
    assert out.shape == (100, 200) and out.dtype == np.float64
    _close(out.asnumpy(), mean, var)
    assert dagnet.nd.random.uniform_like is rnd.uniform_like  # MXNet: two modules, one sampler
    assert rnd.uniform_like(dagnet.nd.zeros((2,))).shape == (2,)


PER_ELEMENT = [
    (rnd.uniform, [[0.0, 2.5], [-9.75, -1.0]], [[1.0, 3.7], [4.2, 10.5]],
     lambda a, b: ((a + b) / 2, (b - a) ** 2 / 12)),
    (rnd.normal, [[0.0, 2.5], [-9.75, -7.0]], [[1.0, 3.7], [4.2, 1.5]],
     lambda a, b: (a, b * b)),
    (rnd.gamma, [[0.1, 2.5], [9.75, 11.0]], [[1.0, 0.7], [0.5, 0.3]],
     lambda a, b: (a * b, a * b * b)),
    (rnd.negative_binomial, [[3, 4], [5, 6]], [[0.4, 0.77], [0.5, 0.84]],
     lambda k, p: (k * (1 - p) / p, k * (1 - p) / p ** 2)),
    (rnd.generalized_negative_binomial, [[2.0, 2.5], [1.3, 1.9]], [[1.0, 0.1], [0.2, 0.5]],
     lambda m, a: (m, m + a * m * m)),
]


@pytest.mark.parametrize("fn,first,second,moments", PER_ELEMENT,
                         ids=[c[0].__name__ for c in PER_ELEMENT])
def test_one_distribution_per_element(fn, first, second, moments):
    a, b = dagnet.nd.array(first), dagnet.nd.array(second)
    dagnet.random.seed(128)
    out = fn(a, b, shape=(100, 100))
    assert out.shape == (2, 2, 100, 100) and out.dtype == np.float32
    values = out.asnumpy()
    for i in range(2):
        for j in range(2):
            _close(values[i, j], *moments(first[i][j], second[i][j]))
    dagnet.random.seed(128)
    np.testing.assert_array_equal(fn(a, b, shape=(100, 100)).asnumpy(), values)
    assert fn(a, b).shape == (2, 2)  # one sample per distribution


def test_single_parameter_per_element_and_dtype():
    lam = dagnet.nd.array([[25.0, 8.5], [2.7, 0.5]], dtype="float64")
    out = rnd.poisson(lam, shape=(50, 100), dtype="float64")
    assert out.dtype == np.float64
    for (i, j), rate in np.ndenumerate(lam.asnumpy()):
        _close(out.asnumpy()[i, j], rate, rate)
    scale = dagnet.nd.array([1.0, 1 / 8.5])
    values = rnd.exponential(scale, shape=5000).asnumpy()  # the mean is the scale
    _close(values[0], 1.0, 1.0)
    _close(values[1], 1 / 8.5, 1 / 8.5 ** 2)


def test_randint():
    dagnet.random.seed(128)
    out = rnd.randint(-1, 3, shape=(500, 50))
    assert out.dtype == np.int32 and out.shape == (500, 50)
    counts = np.bincount(out.asnumpy().ravel() + 1, minlength=4)
    assert counts.size == 4 and (abs(counts / out.size - 0.25) < 0.02).all()
    dagnet.random.seed(128)
    np.testing.assert_array_equal(rnd.randint(-1, 3, shape=(500, 50)).asnumpy(), out.asnumpy())
    big = rnd.randint(low=50000000, high=50000010, dtype="int64")
    assert big.dtype == np.int64 and big.shape == (1,) and 50000000 <= big.asscalar() < 50000010
    with pytest.raises(dagnet.base.MXNetError, match="must be below"):
        rnd.randint(3, 3).asnumpy()


# As in MXNet, the kernels check parameter values: the error comes at the next wait.
@pytest.mark.parametrize("call,match", [
    (lambda: rnd.normal(0, -1.0, shape=2).asnumpy(), "scale .* must be >= 0"),
    (lambda: rnd.gamma(0.0, 1.0, shape=2).asnumpy(), "alpha .* must be > 0"),
    (lambda: rnd.uniform(2.0, 1.0, shape=2).asnumpy(), "low must not exceed high"),
    (lambda: rnd.uniform_like(nd.ones((2,)), low=2.0, high=1.0).asnumpy(),
     "low must not exceed high"),
    (lambda: rnd.uniform(nd.array([0.0, 2.0]), nd.array([1.0, 1.0])).asnumpy(),
     "low must not exceed high"),
    (lambda: rnd.negative_binomial(2, 1.5, shape=2).asnumpy(), "p .* must be .*<= 1"),
    (lambda: rnd.poisson(dagnet.nd.array([1.0, -2.0])).asnumpy(), "lam .* must be >= 0"),
    (lambda: rnd.uniform(dagnet.nd.array([1.0]), 2.0), "must all be numbers or all NDArrays"),
    (lambda: rnd.uniform("a", 2.0), "must be numbers or NDArrays"),
])
def test_bad_parameters_are_refused(call, match):
    with pytest.raises(dagnet.base.MXNetError, match=match):
        call()


def test_a_bad_parameter_fails_at_the_wait_not_the_call():
    bad = rnd.normal(0, -1, shape=(2, 2))  # MXNet's exception tests rely on this
    product = nd.dot(bad, bad)
    with pytest.raises(dagnet.base.MXNetError, match="scale"):
        product.asnumpy()


def test_symbol_nodes():
    sym = dagnet.sym
    mu, sigma = sym.var("mu"), sym.var("sigma")
    node = sym.random.normal(mu, sigma, shape=(3,))
    assert node.list_arguments() == ["mu", "sigma"]
    assert node.infer_shape(mu=(2,), sigma=(2,))[1] == [(2, 3)]
    out = node.bind(dagnet.cpu(), {"mu": dagnet.nd.array([0.0, 100.0]),
                                   "sigma": dagnet.nd.array([1.0, 1.0])}).forward()[0]
    assert (abs(out.asnumpy()[1] - 100) < 10).all() and (abs(out.asnumpy()[0]) < 10).all()
    assert sym.random.poisson(sym.var("lam")).get_internals().list_outputs()[0] == "lam"
    like = sym.random.gamma_like(sym.var("x"), alpha=2.0)
    assert like.infer_shape(x=(4, 5))[1] == [(4, 5)]
    assert sym.random.randint(0, 5, shape=(2,)).infer_type()[1] == [np.int32]
    with pytest.raises(dagnet.base.MXNetError, match="must all be numbers or all Symbols"):
        sym.random.gamma(mu, 1.0)
