"""The ``random_pdf_<d>`` operators against densities written out with ``math`` (the
conformance suite checks them against their numpy reference and central-difference
gradients): shapes, ``is_log``, parameters per leading element, and the gradients MXNet
defines (zero for the samples of discrete distributions)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dagnet
from dagnet import autograd, nd


def _nb(x, k, p):
    return math.exp(math.lgamma(x + k) - math.lgamma(x + 1) - math.lgamma(k) + k * math.log(p)
                    + x * math.log(1 - p))


DENSITIES = {
    "uniform": (lambda x, lo, hi: 1 / (hi - lo), [0.5, 1.5], [[0.0, 1.0], [1.0, 4.0]]),
    "normal": (lambda x, m, s: math.exp(-0.5 * ((x - m) / s) ** 2) / (math.sqrt(2 * math.pi) * s),
               [0.3, -1.2], [[0.0, 1.0], [1.0, 2.0]]),
    "gamma": (lambda x, a, b: b ** a * x ** (a - 1) * math.exp(-b * x) / math.gamma(a),
              [0.7, 2.5], [[2.0, 0.5], [1.5, 3.0]]),
    "exponential": (lambda x, lam: lam * math.exp(-lam * x), [0.2, 1.3], [[2.0, 0.5]]),
    "poisson": (lambda x, lam: lam ** x * math.exp(-lam) / math.factorial(int(x)),
                [0.0, 3.0], [[2.5, 4.0]]),
    "negative_binomial": (_nb, [0.0, 4.0], [[3.0, 1.5], [0.4, 0.7]]),
    "generalized_negative_binomial": (
        lambda x, mu, a: _nb(x, 1 / a, 1 / (1 + mu * a)), [1.0, 2.0], [[2.0, 1.3], [0.3, 0.8]]),
}


@pytest.mark.parametrize("name", list(DENSITIES))
@pytest.mark.parametrize("is_log", [False, True])
def test_matches_the_written_out_density(name, is_log):
    density, samples, params = DENSITIES[name]
    # two distributions (parameters of shape (2,)), three samples under each
    x = np.array([[samples[0]] * 3, [samples[1]] * 3]) + np.array([0.0, 0.0, 0.0])
    if name not in ("poisson", "negative_binomial", "generalized_negative_binomial"):
        x = x + np.array([0.0, 0.1, 0.2])
    fn = getattr(nd, f"random_pdf_{name}")
    out = fn(nd.array(x, dtype="float64"), *[nd.array(p, dtype="float64") for p in params],
             is_log=is_log).asnumpy()
    expected = np.array([[density(x[i, j], *[p[i] for p in params]) for j in range(3)]
                         for i in range(2)])
    np.testing.assert_allclose(out, np.log(expected) if is_log else expected, rtol=1e-10)


def test_dirichlet_shapes_and_values():
    alpha = np.array([[1.5, 2.0, 0.8], [3.0, 1.0, 2.0]])             # B=(2,), k=3
    x = np.random.default_rng(0).dirichlet([1, 1, 1], size=(2, 4))    # B + S + (k,)
    out = nd.random_pdf_dirichlet(nd.array(x, dtype="float64"), nd.array(alpha, dtype="float64"),
                                  is_log=True).asnumpy()
    assert out.shape == (2, 4)
    for b in range(2):
        a = alpha[b]
        norm = math.lgamma(a.sum()) - sum(math.lgamma(v) for v in a)
        for s in range(4):
            want = norm + sum((a[j] - 1) * math.log(x[b, s, j]) for j in range(3))
            assert abs(out[b, s] - want) < 1e-10
    single = nd.random_pdf_dirichlet(nd.array([0.2, 0.8]), nd.array([2.0, 3.0]))
    assert single.shape == (1,) and abs(single.asscalar() - 12 * 0.2 * 0.8 ** 2) < 1e-5


def test_parameter_gradients_sum_over_their_samples():
    x = nd.array([[0.1, -0.3, 0.7]], dtype="float64")
    mu, sigma = nd.array([0.2], dtype="float64"), nd.array([1.5], dtype="float64")
    for a in (x, mu, sigma):
        a.attach_grad()
    with autograd.record():
        logp = nd.random_pdf_normal(x, mu, sigma, is_log=True)
    logp.backward()
    xs, m, s = x.asnumpy()[0], 0.2, 1.5
    np.testing.assert_allclose(mu.grad.asnumpy(), [((xs - m) / s ** 2).sum()])
    np.testing.assert_allclose(sigma.grad.asnumpy(), [(((xs - m) ** 2 - s * s) / s ** 3).sum()])
    np.testing.assert_allclose(x.grad.asnumpy()[0], (m - xs) / s ** 2)


def test_discrete_samples_get_no_gradient():
    x, lam = nd.array([[1.0, 3.0]], dtype="float64"), nd.array([2.0], dtype="float64")
    x.attach_grad()
    lam.attach_grad()
    with autograd.record():
        p = nd.random_pdf_poisson(x, lam)
    p.backward()
    assert (x.grad.asnumpy() == 0).all()
    pmf = p.asnumpy()[0]
    np.testing.assert_allclose(lam.grad.asnumpy(), [(pmf * (np.array([1.0, 3.0]) / 2 - 1)).sum()])


def test_shape_errors_name_the_operator():
    with pytest.raises(dagnet.base.MXNetError, match="_random_pdf_normal"):
        nd.random_pdf_normal(nd.ones((3, 2)), nd.ones((2,)), nd.ones((2,)))
    with pytest.raises(dagnet.base.MXNetError, match="_random_pdf_dirichlet"):
        nd.random_pdf_dirichlet(nd.ones((3, 2)), nd.ones((3, 3)))


def test_symbol_with_mxnet_input_names():
    node = dagnet.sym.random_pdf_gamma(dagnet.sym.var("v0"), dagnet.sym.var("v1"),
                                       dagnet.sym.var("v2"), is_log=True)
    assert node.list_arguments() == ["v0", "v1", "v2"]
    op = dagnet.operator.get_op("random_pdf_gamma")
    assert op.name == "_random_pdf_gamma"
    assert op.list_inputs(op.parse_params({})) == ["sample", "alpha", "beta"]
