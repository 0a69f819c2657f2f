"""``_shuffle`` (``mx.random.shuffle``): rows permuted, contents kept, orders uniform."""

from __future__ import annotations

import itertools
import math

import numpy as np

import dagnet
from dagnet import nd


def test_shuffle_permutes_rows_and_keeps_their_contents():
    data = nd.arange(0, 18).reshape((6, 3))
    out = dagnet.random.shuffle(data).asnumpy()
    assert out.shape == (6, 3)
    np.testing.assert_array_equal(np.sort(out[:, 0]), np.arange(0, 18, 3))
    np.testing.assert_array_equal(out - out[:, :1], np.tile([0, 1, 2], (6, 1)))
    np.testing.assert_array_equal(data.asnumpy(), np.arange(18).reshape(6, 3))  # unchanged


def test_shuffle_orders_are_uniform():
    dagnet.random.seed(0)
    counts = dict.fromkeys(itertools.permutations(range(3)), 0)
    data = nd.arange(0, 3)
    trials = 3000
    for _ in range(trials):
        counts[tuple(int(v) for v in dagnet.random.shuffle(data).asnumpy())] += 1
    expected = trials / math.factorial(3)
    # Pearson's statistic with 5 degrees of freedom: 20.5 is its 0.999 quantile
    assert sum((c - expected) ** 2 / expected for c in counts.values()) < 20.5


def test_shuffle_symbol_and_single_row():
    a = dagnet.sym.var("a")
    node = dagnet.sym.sort(dagnet.sym.random.shuffle(dagnet.sym.random.shuffle(a)), axis=0)
    data = nd.arange(0, 5)
    np.testing.assert_array_equal(node.eval(a=data, ctx=dagnet.cpu())[0].asnumpy(),
                                  data.asnumpy())
    one = nd.array([[1.0, 2.0]])
    np.testing.assert_array_equal(dagnet.random.shuffle(one).asnumpy(), [[1.0, 2.0]])
