"""``_sample_multinomial`` (``mx.random.multinomial``): shapes, dtypes, frequencies, the
log-probability output and its REINFORCE gradient, and the dtype bound check."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet
from dagnet import autograd, nd


def test_shapes_dtypes_and_outputs():
    probs = nd.array([[0.125, 0.25, 0.625], [0.5, 0.25, 0.25]])
    out = dagnet.random.multinomial(probs, shape=(4, 5))
    assert isinstance(out, nd.NDArray) and out.shape == (2, 4, 5) and out.dtype == np.int32
    samples, logp = dagnet.random.multinomial(probs, shape=7, get_prob=True, dtype="float64")
    assert samples.dtype == np.float64 and logp.dtype == np.float32 and logp.shape == (2, 7)
    chosen = np.take_along_axis(probs.asnumpy(), samples.asnumpy().astype(int), axis=1)
    np.testing.assert_allclose(logp.asnumpy(), np.log(chosen), rtol=1e-6)
    assert dagnet.random.multinomial(nd.array([0.3, 0.7])).shape == (1,)


@pytest.mark.parametrize("dtype", ["uint8", "float16", "int32"])
def test_frequencies_follow_the_probabilities(dtype):
    probs = [0.1, 0.2, 0.3, 0.05, 0.15, 0.2]
    dagnet.random.seed(1)
    samples = dagnet.random.multinomial(nd.array(probs), shape=60000, dtype=dtype).asnumpy()
    freq = np.bincount(samples.astype(int), minlength=6) / samples.size
    # about 6 standard errors of a frequency near 0.3 from 60000 draws
    np.testing.assert_allclose(freq, probs, atol=0.012)


def test_same_seed_same_draws():
    probs = nd.array([0.125, 0.25, 0.25, 0.0625, 0.125, 0.1875])
    dagnet.random.seed(1234)
    first = dagnet.random.multinomial(probs, shape=1000).asnumpy()
    dagnet.random.seed(1234)
    np.testing.assert_array_equal(dagnet.random.multinomial(probs, shape=1000).asnumpy(), first)


def test_log_probability_gradient_is_reinforce():
    x = nd.array([[0.0, 0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1, 0.0]])
    x.attach_grad()
    with autograd.record():
        y, logp = dagnet.random.multinomial(x, shape=2000, get_prob=True)
        loss = logp * 5
    loss.backward()
    drawn = y.asnumpy().astype(int)
    expected = np.zeros((2, 5))
    for row in range(2):
        counts = np.bincount(drawn[row], minlength=5)
        nonzero = x.asnumpy()[row] > 0
        expected[row, nonzero] = 5 * counts[nonzero] / x.asnumpy()[row, nonzero]
        assert counts[~nonzero].sum() == 0  # a category of probability 0 is never drawn
    np.testing.assert_allclose(x.grad.asnumpy(), expected, rtol=1e-5)


def test_without_get_prob_the_gradient_is_zero():
    x = nd.array([0.5, 0.5])
    x.attach_grad()
    with autograd.record():
        y = dagnet.random.multinomial(x, shape=10, dtype="float32")
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [0.0, 0.0])


@pytest.mark.parametrize("dtype,k", [("uint8", 257), ("float16", 2050)])
def test_a_dtype_too_narrow_for_the_categories_is_refused(dtype, k):
    with pytest.raises(dagnet.base.MXNetError, match=f"dtype={dtype}"):
        dagnet.random.multinomial(nd.zeros(k), dtype=dtype)
    assert dagnet.random.multinomial(nd.ones(k - 1) / (k - 1), dtype=dtype).shape == (1,)


def test_symbol_multinomial():
    p = dagnet.sym.var("P")
    both = dagnet.sym.random.multinomial(p, shape=3)  # get_prob defaults to True here
    assert both.list_outputs() == ["_sample_multinomial0_output0",
                                   "_sample_multinomial0_output1"]
    only = dagnet.sym.random.multinomial(data=p, shape=100, get_prob=False)
    exe = only.bind(dagnet.cpu(), {"P": nd.array([0.0, 1.0])})
    assert (exe.forward()[0].asnumpy() == 1).all()
