"""``test_utils.check_gluon_hybridize_consistency``: a numpy-mode HybridBlock checked
imperatively against hybridized, with gradients, and against a NumPy function."""

from __future__ import annotations

import numpy as onp
import pytest

import dagnet as mx
from dagnet.gluon import HybridBlock, nn
from dagnet.test_utils import check_gluon_hybridize_consistency, use_np


@use_np
class _DenseSquared(HybridBlock):
    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        with self.name_scope():
            self.dense = nn.Dense(3, in_units=4)

    def hybrid_forward(self, F, x):
        return self.dense(x) * self.dense(x)


@use_np
class _Square(HybridBlock):
    def hybrid_forward(self, F, x):
        return x * x


@use_np
class _Differs(HybridBlock):
    """Adds one only when traced into a graph: imperative and hybridized outputs differ."""

    def hybrid_forward(self, F, x):
        return x + 1 if mx.autograd.active_tracer() is not None else x


def test_block_with_parameters_is_consistent():
    x = mx.np.array(onp.random.uniform(-1, 1, (2, 4)).astype("float32"))
    check_gluon_hybridize_consistency(_DenseSquared, [x])


def test_numpy_func_is_compared():
    x = mx.np.array([[1.0, -2.0], [3.0, 0.5]])
    check_gluon_hybridize_consistency(_Square, [x], numpy_func=lambda a: a * a)
    with pytest.raises(AssertionError):
        check_gluon_hybridize_consistency(_Square, [x], numpy_func=lambda a: a + a)


def test_inconsistent_block_fails():
    x = mx.np.array([1.0, 2.0])
    with pytest.raises(AssertionError):
        check_gluon_hybridize_consistency(_Differs, [x], test_grad=False)
