"""The log-uniform (Zipfian) samplers ``_sample_unique_zipfian`` and
``contrib.rand_zipfian``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dagnet
from dagnet import nd


def test_unique_zipfian_draws_distinct_classes():
    dagnet.random.seed(3)
    classes, trials = nd._internal._sample_unique_zipfian(1000, shape=(3, 200))
    assert classes.dtype == np.int64 and trials.dtype == np.int64 and trials.shape == (3,)
    values = classes.asnumpy()
    assert ((values >= 0) & (values < 1000)).all()
    for row in values:
        assert np.unique(row).size == 200
    assert (trials.asnumpy() >= 200).all()
    # small classes are likelier: the first 10 of 1000 hold about a third of the mass
    assert (values < 10).mean() > 0.03
    with pytest.raises(dagnet.base.MXNetError, match="distinct"):
        nd._internal._sample_unique_zipfian(5, shape=(1, 6))


def test_unique_zipfian_trial_count_matches_sequential_drawing():
    # drawing until 50 of range_max=60 classes are distinct takes, on average, the sum of
    # the waiting times; compare the mean trial count with a direct simulation
    dagnet.random.seed(5)
    _, trials = nd._internal._sample_unique_zipfian(60, shape=(200, 50))
    rng = np.random.default_rng(0)
    simulated = []
    for _ in range(200):
        seen, tries = set(), 0
        while len(seen) < 50:
            seen.add(int(round(math.exp(rng.random() * math.log(60)))) - 1)
            tries += 1
        simulated.append(tries)
    mean, sim = trials.asnumpy().mean(), np.mean(simulated)
    assert abs(mean - sim) < 0.1 * sim


def test_rand_zipfian_expected_counts():
    dagnet.random.seed(7)
    true_classes = nd.array([0, 3, 19], dtype="int32")
    sampled, count_true, count_sampled = nd.contrib.rand_zipfian(true_classes, 1000, 20)
    assert sampled.dtype == np.int64 and sampled.shape == (1000,)
    assert count_true.dtype == np.float64 and count_true.shape == (3,)
    prob = np.log((np.arange(20) + 2) / (np.arange(20) + 1)) / np.log(21)
    np.testing.assert_allclose(count_true.asnumpy(), prob[[0, 3, 19]] * 1000)
    np.testing.assert_allclose(count_sampled.asnumpy(), prob[sampled.asnumpy()] * 1000)
    freq = np.bincount(sampled.asnumpy(), minlength=20) / 1000
    assert np.abs(freq - prob).max() < 0.06


def test_rand_zipfian_symbol():
    # mx.sym.contrib.rand_zipfian is this operator under the contrib namespace
    node = dagnet.sym._contrib_rand_zipfian(dagnet.sym.var("true_classes"), 50, 10)
    assert len(node.list_outputs()) == 3
    exe = node.bind(dagnet.cpu(), {"true_classes": nd.array([1, 2], dtype="int32")})
    sampled, count_true, _ = exe.forward()
    assert sampled.shape == (50,) and count_true.shape == (2,)
