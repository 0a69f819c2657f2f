"""mx.np's shares_memory/may_share_memory, logspace and the windows, eye's errors,
moveaxis with sequences, random.choice with weights, ndarray.clip's keywords,
mxnet._numpy_op_doc, and the new functions in a hybridized block: the differentiable
ones trace into the graph (no fallback) and give the imperative gradients."""

from __future__ import annotations

import warnings

import numpy as onp
import pytest

import dagnet as mx
from dagnet import autograd, np
from dagnet.base import MXNetError
from dagnet.gluon import HybridBlock


@pytest.mark.parametrize("op", [np.shares_memory, np.may_share_memory])
def test_views_share_memory_and_copies_do_not(op):
    x = np.zeros((4, 5, 6))
    assert op(x, x)
    assert op(x[1], x) and not op(x[0], x[1])
    assert op(x[0, 0, 2:5], x[0, 0, 3:4]) and not op(x[0, 0, 2:3], x[0, 0, 3:4])
    assert not op(x[2:4, 0, 0], x[3:4, 0, 0])  # strided parts are copies
    assert not op(x.copy(), x)
    assert not op(x, np.ones((5, 0))) and not op(np.ones((5, 0)), np.ones((0, 3)))
    with pytest.raises(TypeError):
        op(x, onp.zeros(3))


@pytest.mark.parametrize("dtype", [None, "float32", "float64"])
def test_logspace(dtype):
    for start, stop, num, endpoint, base in [(0.0, 1.0, 20, True, 10.0), (2, 8, 0, False, 2),
                                             (22, 11, 1, True, 5), (-1, 1, 3, True, 0)]:
        with onp.errstate(divide="ignore"):
            want = onp.logspace(start, stop, num, endpoint=endpoint, base=base)
        got = np.logspace(start, stop, num, endpoint, base, dtype)
        assert got.dtype == onp.dtype(dtype or "float32")
        onp.testing.assert_allclose(got.asnumpy(), want.astype(got.dtype), rtol=1e-6)
    with pytest.raises(NotImplementedError):
        np.logspace(0, 1, 3, axis=1)
    with pytest.raises(MXNetError, match="non-negative"):
        np.logspace(0, 1, -1)


@pytest.mark.parametrize("name", ["hanning", "hamming", "blackman"])
def test_windows(name):
    for m in (-3, 0, 1, 6, 11):
        got = getattr(np, name)(m)
        assert got.dtype == onp.float32
        onp.testing.assert_allclose(got.asnumpy(), getattr(onp, name)(m), atol=1e-6)
    assert getattr(np, name)(5, dtype="float64").dtype == onp.float64
    with pytest.raises(MXNetError):
        getattr(np, name)(4.5)


def test_eye_refuses_negative_dimensions():
    for args in [(-1,), (-2, None), (1, -1), (0, -1)]:
        with pytest.raises(MXNetError, match="negative"):
            np.eye(*args)
    assert np.eye(2, 2, 5).asnumpy().tolist() == [[0, 0], [0, 0]]
    assert np.eye(0, 3).shape == (0, 3)


def test_moveaxis_with_sequences_matches_numpy():
    values = onp.arange(2 * 3 * 4 * 5, dtype="float32").reshape(2, 3, 4, 5)
    x = np.array(values)
    for source, destination in [(0, -1), ([0, 1], [2, 0]), ((3, 0, 1), (0, 1, 2)), ([], []),
                                ([-1, 1], [1, -1])]:
        onp.testing.assert_array_equal(np.moveaxis(x, source, destination).asnumpy(),
                                       onp.moveaxis(values, source, destination))
    for source, destination in [([0, 1], [2]), ([0, 0], [1, 2]), (4, 0)]:
        with pytest.raises(MXNetError):
            np.moveaxis(x, source, destination)
    assert np.moveaxis(np.array(1.0), [], []).shape == ()


def test_choice_with_weights():
    mx.random.seed(3)
    weights = np.array([0.5, 0.3, 0.2, 0.0])
    for replace in (True, False):
        picks = np.random.choice(4, 3, replace=replace, p=weights)
        assert picks.dtype == onp.int64 and picks.shape == (3,)
        assert 3 not in picks.asnumpy().tolist()
    distinct = np.random.choice(np.arange(4), 4, replace=False, p=weights).asnumpy()
    assert sorted(distinct.tolist()) == [0, 1, 2, 3] and distinct[-1] == 3
    first = [int(np.random.choice(4, 1, replace=False, p=weights).item()) for _ in range(600)]
    onp.testing.assert_allclose(onp.bincount(first, minlength=4) / 600, [0.5, 0.3, 0.2, 0.0],
                                atol=0.07)
    with pytest.raises(MXNetError, match="larger sample"):
        np.random.choice(4, 5, replace=False, p=weights)


def test_ndarray_clip_takes_min_and_max():
    x = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    assert x.clip(min=1, max=2).asnumpy().tolist() == [[2, 1, 2], [1, 2, 2]]
    assert x.clip(1).asnumpy().min() == 1
    out = np.zeros((2, 3))
    assert x.clip(max=2, out=out) is out and out.asnumpy().max() == 2
    with pytest.raises(ValueError):
        x.clip()


def test_numpy_op_doc_documents_np_operators_by_their_functions():
    from mxnet import _numpy_op_doc

    assert _numpy_op_doc._np_sum is np.sum
    assert getattr(_numpy_op_doc, "_np_no_such_function", None) is None
    assert getattr(_numpy_op_doc, "sum", None) is None


class _Composed(HybridBlock):
    """The differentiable new functions, each a graph of operators."""

    def hybrid_forward(self, F, a, w):
        ordered = F.np.sort(a, axis=1)
        weighted = F.np.average(a, axis=1, weights=w)
        curve = F.np.polyval(w, a)
        angles = F.np.arctan2(a, w) + F.np.copysign(a, -1.0) + F.np.ldexp(a, w)
        cleaned = F.np.nan_to_num(a / w)
        middle = F.np.quantile(a, 0.5, axis=1)  # zero gradient, but a graph node
        return (ordered * 2).sum() + weighted.sum() + curve.sum() + angles.sum() \
            + cleaned.sum() + middle.sum() + F.np.around(a, 1).sum()


def _run(block, a_value, w_value):
    a, w = np.array(a_value, dtype="float64"), np.array(w_value, dtype="float64")
    a.attach_grad()
    w.attach_grad()
    with autograd.record():
        out = block(a, w)
    out.backward()
    return out.asnumpy(), a.grad.asnumpy(), w.grad.asnumpy()


def test_new_functions_trace_into_a_hybridized_block():
    mx.npx.set_np()
    try:
        rng = onp.random.default_rng(1)
        a_value, w_value = rng.uniform(0.5, 1.5, (4, 3)), rng.uniform(0.5, 1.5, (3,))
        block = _Composed()
        expected = _run(block, a_value, w_value)
        block.hybridize()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a fallback to imperative would warn
            got = _run(block, a_value, w_value)
        assert block._cached_op is not None
        for have, want in zip(got, expected):
            onp.testing.assert_allclose(have, want, rtol=1e-10)
    finally:
        mx.npx.reset_np()
