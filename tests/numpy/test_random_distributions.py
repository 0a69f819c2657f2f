"""mx.np.random's distributions and mx.npx.random: each sampler against its distribution
(Kolmogorov-Smirnov at a fixed seed, so a run cannot flake), parameters as broadcasting
arrays, the reparameterized gradients imperatively and in hybridized blocks, seeding,
shapes and dtypes, and MXNet's errors."""

from __future__ import annotations

import math

import numpy as onp
import pytest

import dagnet as mx
from dagnet import autograd, np, npx
from dagnet.gluon import HybridBlock

stats = pytest.importorskip("scipy.stats")

N = 20000

# (sampler, arguments, the scipy distribution the samples follow)
CASES = [
    ("uniform", (-1.0, 3.0), stats.uniform(-1.0, 4.0)),
    ("normal", (2.0, 0.5), stats.norm(2.0, 0.5)),
    ("lognormal", (0.3, 0.6), stats.lognorm(0.6, scale=math.exp(0.3))),
    ("logistic", (1.0, 2.0), stats.logistic(1.0, 2.0)),
    ("gumbel", (1.0, 2.0), stats.gumbel_r(1.0, 2.0)),
    ("exponential", (3.0,), stats.expon(scale=3.0)),
    ("rayleigh", (2.0,), stats.rayleigh(scale=2.0)),
    ("weibull", (1.5,), stats.weibull_min(1.5)),
    ("pareto", (3.0,), stats.lomax(3.0)),
    ("power", (3.0,), stats.powerlaw(3.0)),
    ("gamma", (2.5, 1.5), stats.gamma(2.5, scale=1.5)),
    ("beta", (2.0, 3.0), stats.beta(2.0, 3.0)),
    ("chisquare", (3.0,), stats.chi2(3.0)),
]


@pytest.fixture
def np_mode():
    npx.set_np()
    yield
    npx.reset_np()


@pytest.mark.parametrize("name,args,dist", CASES, ids=[c[0] for c in CASES])
def test_samples_follow_the_distribution(name, args, dist):
    npx.random.seed(11)
    samples = getattr(np.random, name)(*args, size=N)
    assert samples.shape == (N,) and samples.dtype == onp.float32
    assert stats.kstest(samples.asnumpy().astype(onp.float64), dist.cdf).pvalue > 1e-3


@pytest.mark.parametrize("name,args,dist", CASES, ids=[c[0] for c in CASES])
def test_seed_repeats_every_sampler(name, args, dist):
    sampler = getattr(np.random, name)
    npx.random.seed(seed=5)
    first = sampler(*args, size=(3, 4)).asnumpy()
    mx.random.seed(5)
    onp.testing.assert_array_equal(sampler(*args, size=(3, 4)).asnumpy(), first)


def test_array_parameters_broadcast_against_each_other_and_size():
    npx.random.seed(3)
    loc = np.array([[0.0], [100.0]])  # (2, 1)
    scale = np.array([1.0, 2.0, 3.0])  # (3,)
    samples = np.random.normal(loc, scale, size=(N // 2, 2, 3)).asnumpy()
    onp.testing.assert_allclose(samples.mean(axis=0), [[0] * 3, [100] * 3], atol=0.15)
    onp.testing.assert_allclose(samples.std(axis=0), [[1, 2, 3]] * 2, rtol=0.05)
    assert np.random.normal(loc, scale).shape == (2, 3)
    assert np.random.exponential(np.ones((4, 1)), size=(2, 4, 5)).shape == (2, 4, 5)
    means = np.random.exponential(np.array([1.0, 10.0]), size=(N, 2)).asnumpy().mean(axis=0)
    onp.testing.assert_allclose(means, [1, 10], rtol=0.05)
    with pytest.raises(ValueError, match="do not broadcast to size"):
        np.random.normal(np.zeros((2, 3)), 1.0, size=(3,))
    with pytest.raises(ValueError, match="do not broadcast"):
        np.random.gamma(np.ones(2), np.ones(3))


def test_shapes_dtypes_and_out(np_mode):
    assert np.random.normal().shape == () and np.random.normal(size=()).shape == ()
    assert np.random.weibull(1.0, size=4).shape == (4,)
    assert np.random.pareto(np.ones((4, 0, 5))).shape == (4, 0, 5)
    assert np.random.normal(size=(2, 0)).shape == (2, 0)
    for name in ["normal", "uniform"]:
        assert getattr(np.random, name)(size=2, dtype="float64").dtype == onp.float64
        assert getattr(np.random, name)(size=2, dtype="float16").dtype == onp.float16
    assert np.random.gamma(1.0, dtype="float64").dtype == onp.float64
    assert np.random.beta(1.0, 1.0, size=3, dtype="float64").dtype == onp.float64
    assert np.random.exponential(np.ones(2, dtype="float64")).dtype == onp.float32
    assert np.random.rand(2, 3, dtype="float64").dtype == onp.float64
    assert np.random.randn(2, 3).shape == (2, 3) and np.random.rand().shape == ()
    out = np.zeros((3, 2))
    assert np.random.exponential(np.ones(2), out=out) is out and (out.asnumpy() > 0).all()
    assert np.random.lognormal(out=out) is out and (out.asnumpy() > 0).all()
    with pytest.raises(TypeError):
        np.random.randn(2, loc=1.0)  # as MXNet: the keywords are normal's, after loc, scale


def _gradients(fn, *params, hybridize=False):
    """Samples of ``fn(*params)`` and the gradients of their sum w.r.t. the params."""

    class Sampler(HybridBlock):
        def hybrid_forward(self, F, *arrays):
            return fn(*arrays)

    block = Sampler()
    if hybridize:
        block.hybridize()
    for p in params:
        p.attach_grad()
    with autograd.record():
        out = block(*params)
    out.backward()
    return out.asnumpy().astype(onp.float64), [p.grad.asnumpy() for p in params]


@pytest.mark.parametrize("hybridize", [False, True])
def test_location_scale_gradients(np_mode, hybridize):
    for name in ["normal", "logistic", "gumbel"]:
        loc, scale = np.full((3, 1), 0.5), np.full((4,), 2.0)
        out, (d_loc, d_scale) = _gradients(
            lambda lo, sc, name=name: getattr(np.random, name)(lo, sc, size=(5, 3, 4)),
            loc, scale, hybridize=hybridize)
        noise = (out - 0.5) / 2.0
        onp.testing.assert_allclose(d_loc, onp.full((3, 1), 20.0))  # 5 * 4 samples each
        onp.testing.assert_allclose(d_scale, noise.sum(axis=(0, 1)), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("hybridize", [False, True])
def test_shape_and_scale_gradients(np_mode, hybridize):
    size = (6, 3)
    cases = [  # sampler, parameter value, d sample / d parameter from the sample
        (np.random.exponential, 2.0, lambda x: x / 2.0),
        (np.random.rayleigh, 2.0, lambda x: x / 2.0),
        (np.random.weibull, 1.5, lambda x: -x * onp.log(x) / 1.5),
        (np.random.pareto, 2.5, lambda x: -(x + 1) * onp.log1p(x) / 2.5),
    ]
    for sampler, value, slope in cases:
        param = np.full((3,), value)
        out, (grad,) = _gradients(lambda p, s=sampler: s(p, size=size), param,
                                  hybridize=hybridize)
        onp.testing.assert_allclose(grad, slope(out).sum(axis=0), rtol=1e-3, atol=1e-4)


def test_lognormal_gradients_flow_through_exp(np_mode):
    mean, sigma = np.zeros((2,)), np.ones((2,))
    out, (d_mean, d_sigma) = _gradients(lambda m, s: np.random.lognormal(m, s, size=(4, 2)),
                                        mean, sigma)
    onp.testing.assert_allclose(d_mean, out.sum(axis=0), rtol=1e-5)
    onp.testing.assert_allclose(d_sigma, (out * onp.log(out)).sum(axis=0), rtol=1e-4,
                                atol=1e-5)


def test_uniform_gamma_and_power_have_zero_gradients(np_mode):
    for fn in [lambda p: np.random.uniform(p, 2.0, size=(3, 2)),
               lambda p: np.random.gamma(p, size=(3, 2)),
               lambda p: np.random.power(p, size=(3, 2))]:
        _, (grad,) = _gradients(fn, np.ones((2,)))
        assert (grad == 0).all()


def test_out_of_range_parameters_are_value_errors_when_read():
    cases = [
        lambda: np.random.normal(0.0, -1.0),
        lambda: np.random.normal(np.zeros(2), -np.ones(2)),
        lambda: np.random.lognormal(sigma=-1),
        lambda: np.random.exponential(-1.0),
        lambda: np.random.rayleigh(np.array([1.0, -1.0])),
        lambda: np.random.weibull(0.0),
        lambda: np.random.pareto(-np.ones(3)),
        lambda: np.random.power(0.0),
        lambda: np.random.gamma(np.array(1.0), np.array(-1.0)),
        lambda: np.random.beta(0.0, 1.0),
        lambda: np.random.chisquare(0.0),
    ]
    for case in cases:
        result = case()  # pushed: the kernel fails
        with pytest.raises(ValueError, match="must be"):
            result.asnumpy()
    # zero scales are allowed, as in MXNet and NumPy
    assert np.random.exponential(0.0).item() == 0 and np.random.normal(1.0, 0.0).item() == 1


def test_multivariate_normal(np_mode):
    npx.random.seed(2)
    cov = onp.array([[2.0, 0.8], [0.8, 1.0]])
    samples = np.random.multivariate_normal(np.array([1.0, -1.0]), np.array(cov), size=N)
    assert samples.shape == (N, 2) and samples.dtype == onp.float32
    host = samples.asnumpy().astype(onp.float64)
    onp.testing.assert_allclose(host.mean(axis=0), [1, -1], atol=0.05)
    onp.testing.assert_allclose(onp.cov(host.T), cov, atol=0.06)
    batched = np.random.multivariate_normal(np.zeros((3, 2)), np.array(onp.eye(2)[None] *
                                                                        onp.ones((4, 1, 1, 1))),
                                            size=(5,))
    assert batched.shape == (5, 4, 3, 2)
    degenerate = np.random.multivariate_normal([0.0, 0.0], [[1.0, 1.0], [1.0, 1.0]], size=50)
    host = degenerate.asnumpy()
    onp.testing.assert_allclose(host[:, 0], host[:, 1], atol=1e-5)  # all on the diagonal
    assert np.random.multivariate_normal(np.zeros(2, dtype="float16"),
                                         np.eye(2, dtype="float16")).dtype == onp.float16
    with pytest.raises(NotImplementedError, match="check_valid"):
        np.random.multivariate_normal(np.zeros(2), np.eye(2), check_valid="raise")


def test_bernoulli(np_mode):
    npx.random.seed(4)
    prob = np.array([0.1, 0.5, 0.9])
    means = npx.random.bernoulli(prob=prob, size=(N, 3)).asnumpy().mean(axis=0)
    onp.testing.assert_allclose(means, [0.1, 0.5, 0.9], atol=0.015)
    logit = npx.random.bernoulli(logit=onp.log(0.9 / 0.1), size=N, dtype="bool")
    assert logit.dtype == onp.bool_ and abs(logit.asnumpy().mean() - 0.9) < 0.015
    assert npx.random.bernoulli(prob=0.5, dtype="int32").dtype == onp.int32
    assert npx.random.bernoulli(prob=0.5).shape == () and npx.random.bernoulli(
        prob=prob).shape == (3,)
    with pytest.raises(ValueError, match="either prob or logit"):
        npx.random.bernoulli(prob=prob, logit=prob)
    with pytest.raises(ValueError, match="either prob or logit"):
        npx.random.bernoulli()
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        npx.random.bernoulli(prob=prob + 1.0).asnumpy()


def test_uniform_n_and_normal_n_prepend_the_batch_shape(np_mode):
    assert npx.random.uniform_n(np.zeros((2,)), 1.0, batch_shape=(3,)).shape == (3, 2)
    assert npx.random.normal_n(0.0, 1.0, batch_shape=4).shape == (4,)
    assert npx.random.normal_n(np.zeros((2, 2)), np.ones((2,))).shape == (2, 2)


class _Checked(HybridBlock):
    def hybrid_forward(self, F, x):
        return x * F.npx.constraint_check(x > 0, "x must be positive")


@pytest.mark.parametrize("hybridize", [False, True])
def test_constraint_check(np_mode, hybridize):
    assert npx.constraint_check(np.ones((2, 3), dtype="bool")).item() is True
    block = _Checked()
    if hybridize:
        block.hybridize()
    x = np.array([1.0, 2.0])
    assert block(x).asnumpy().tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="x must be positive"):
        block(np.array([1.0, -2.0])).asnumpy()
    mx.nd.waitall()  # nothing left failing behind
