"""mx.np's sort, argsort, unique, nonzero, average, percentile/quantile, histogram and
bincount against numpy (MXNet's dtypes and shapes, 0-d and zero-size arrays), the
gradients of sort and average against central differences, and their errors."""

from __future__ import annotations

import numpy as onp
import pytest

from dagnet import autograd, np, npx
from dagnet.base import MXNetError

RNG = onp.random.default_rng(7)


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 0, 3), (2, 3, 4)])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float32", "float64"])
def test_sort_and_argsort_match_numpy(shape, dtype):
    values = RNG.permutation(max(1, int(onp.prod(shape))))[:int(onp.prod(shape))]
    values = values.reshape(shape).astype(dtype)
    x = np.array(values)
    for axis in [None, *range(-len(shape), len(shape))]:
        result = np.sort(x, axis=axis, kind="heapsort")
        assert result.dtype == onp.dtype(dtype)
        onp.testing.assert_array_equal(result.asnumpy(), onp.sort(values, axis=axis))
        order = np.argsort(x, axis=axis)
        assert order.dtype == onp.int64
        onp.testing.assert_array_equal(order.asnumpy(), onp.argsort(values, axis=axis))
    onp.testing.assert_array_equal(x.argsort().asnumpy(), onp.argsort(values))
    onp.testing.assert_array_equal(x.sort().asnumpy(), onp.sort(values))


def test_sort_of_0d_arrays():
    x = np.array(3.0)
    assert np.sort(x, axis=None).shape == (1,)
    assert np.argsort(x, axis=None).asnumpy().tolist() == [0]
    with pytest.raises(MXNetError, match="axis=None"):
        np.sort(x)
    with pytest.raises(NotImplementedError):
        np.sort(np.array([2.0, 1.0]), order="x")


def test_sort_gradient_goes_back_to_each_element():
    values = onp.array([[3.0, 1.0, 2.0], [0.5, 5.0, 4.0]])
    x = np.array(values, dtype="float64")
    x.attach_grad()
    head = onp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with autograd.record():
        y = np.sort(x, axis=1)
    y.backward(np.array(head, dtype="float64"))
    order = onp.argsort(values, axis=1)
    expected = onp.zeros_like(values)
    onp.put_along_axis(expected, order, head, axis=1)
    onp.testing.assert_array_equal(x.grad.asnumpy(), expected)


@pytest.mark.parametrize("shape, axis", [((), None), ((6,), None), ((5, 4), None),
                                         ((5, 4), 0), ((5, 4), -1), ((0, 0, 0), None)])
def test_unique_matches_numpy_with_a_flat_inverse(shape, axis):
    host = RNG.integers(-3, 3, shape).astype("float32")
    values, index, inverse, counts = np.unique(np.array(host), True, True, True, axis=axis)
    want = onp.unique(host, True, True, True, axis=axis)
    onp.testing.assert_array_equal(values.asnumpy(), want[0])
    for got, expected in zip((index, inverse, counts), want[1:]):
        assert got.dtype == onp.int64
        onp.testing.assert_array_equal(got.asnumpy(), expected.reshape(-1))
    assert inverse.ndim == 1  # MXNet's (and NumPy 1.x's) inverse is 1-d
    assert isinstance(np.unique(np.array([3, 1, 1])), np.ndarray)


def test_unique_inverse_rebuilds_the_input():
    values = RNG.integers(0, 4, (3, 5)).astype("int32")
    unique, inverse = np.unique(np.array(values), return_inverse=True)
    onp.testing.assert_array_equal(unique.asnumpy()[inverse.asnumpy()].reshape(3, 5), values)
    with pytest.raises(MXNetError):
        np.unique(np.array(values), axis=2)


def test_nonzero_and_npx_nonzero():
    values = onp.array([[0, 1.5, 0], [2, 0, 3]], dtype="float32")
    rows = np.nonzero(np.array(values))
    assert len(rows) == 2 and all(r.dtype == onp.int64 for r in rows)
    for got, want in zip(rows, onp.nonzero(values)):
        onp.testing.assert_array_equal(got.asnumpy(), want)
    onp.testing.assert_array_equal(np.array(values).nonzero()[1].asnumpy(), [1, 0, 2])
    indices = npx.nonzero(np.array(values))
    assert indices.dtype == onp.int64
    onp.testing.assert_array_equal(indices.asnumpy(), onp.argwhere(values))
    assert npx.nonzero(np.array(2.0)).asnumpy().tolist() == [[0]]
    assert npx.nonzero(np.array(0.0)).shape == (0, 1)
    assert npx.nonzero(np.zeros((1, 0))).shape == (0, 2)


def _average_grads(a_value, w_value, axis):
    a, w = np.array(a_value, dtype="float64"), np.array(w_value, dtype="float64")
    a.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = np.average(a, axis=axis, weights=w).sum()
    y.backward()

    def f(av, wv):
        return onp.average(av, axis=axis, weights=wv).sum()

    numeric = []
    for i, value in enumerate((a_value, w_value)):
        grad = onp.zeros_like(value)
        for index in onp.ndindex(*value.shape):
            args = [a_value.copy(), w_value.copy()]
            args[i][index] += 1e-6
            up = f(*args)
            args[i][index] -= 2e-6
            grad[index] = (up - f(*args)) / 2e-6
        numeric.append(grad)
    return [a.grad.asnumpy(), w.grad.asnumpy()], numeric


@pytest.mark.parametrize("a_shape, w_shape, axis", [((3, 4), (3, 4), None),
                                                    ((2, 3, 4), (2, 3, 4), (0, 2)),
                                                    ((2, 3, 4), (3,), 1),
                                                    ((2, 3, 4), (4,), -1)])
def test_average_forward_and_gradients(a_shape, w_shape, axis):
    a_value = RNG.uniform(-1, 1, a_shape)
    w_value = RNG.uniform(0.5, 1, w_shape)
    got = np.average(np.array(a_value), axis=axis, weights=np.array(w_value))
    want = onp.average(a_value, axis=axis, weights=w_value)
    assert got.shape == want.shape and got.dtype == onp.float64
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    analytic, numeric = _average_grads(a_value, w_value, axis)
    for got, want in zip(analytic, numeric):
        onp.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_average_returned_and_errors():
    a = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    avg, total = np.average(a, axis=0, returned=True)
    assert avg.asnumpy().tolist() == [1.5, 3.0, 3.0] and total.shape == () and total.item() == 2
    avg, total = np.average(a, axis=1, weights=np.array([1.0, 2.0, 3.0]), returned=True)
    assert total.shape == () and total.item() == 6
    full = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    _, total = np.average(a, axis=1, weights=full, returned=True)
    assert total.asnumpy().tolist() == [6.0, 15.0]
    ints = np.array([[3, 1, 2], [0, 5, 4]], dtype="int32")
    assert np.average(ints).dtype == onp.int32 and np.average(ints).item() == 2
    assert onp.isinf(np.average(a, axis=1, weights=np.array([1.0, -1.0, 0.0])).asnumpy()).all()
    out = np.zeros(())
    assert np.average(a, out=out) is out and out.item() == 2.5
    with pytest.raises(MXNetError, match="axis must be given"):
        np.average(a, weights=np.array([1.0, 2.0, 3.0]))
    with pytest.raises(MXNetError, match="length of weights"):
        np.average(a, axis=0, weights=np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, True), ((0, 2), False),
                                            ((-1, -2), True)])
def test_percentile_and_quantile_match_numpy(interpolation, axis, keepdims):
    values = RNG.uniform(-10, 10, (2, 3, 5))
    q = onp.array([0.0, 13.0, 47.0, 99.0, 100.0])  # no position halfway (see 'nearest')
    x = np.array(values, dtype="float64")
    want = onp.percentile(values, q, axis=axis, method=interpolation, keepdims=keepdims)
    got = np.percentile(x, np.array(q, dtype="float64"), axis=axis,
                        interpolation=interpolation, keepdims=keepdims)
    assert got.shape == want.shape and got.dtype == onp.float64
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)
    got = np.quantile(x, 0.37, axis=axis, interpolation=interpolation, keepdims=keepdims)
    want = onp.quantile(values, 0.37, axis=axis, method=interpolation, keepdims=keepdims)
    assert got.shape == want.shape
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12)


def test_percentile_dtypes_rounding_and_errors():
    ints = np.array([[3, 1, 2], [0, 5, 4]], dtype="int32")
    assert np.quantile(ints, 0.3).dtype == onp.float32
    assert np.quantile(ints.astype("float16"), 0.3).dtype == onp.float32
    # 'nearest' rounds a half position away from zero, as MXNet's kernel
    got = np.quantile(np.array([0.0, 1.0, 2.0, 3.0, 4.0]), np.array([0.125, 0.375, 0.625]),
                      interpolation="nearest")
    assert got.asnumpy().tolist() == [1.0, 2.0, 3.0]
    for bad in (1.3, -0.1):
        with pytest.raises(ValueError, match="valid range"):
            np.quantile(ints, bad).asnumpy()
    with pytest.raises(ValueError, match="valid range"):
        np.percentile(ints, np.array([50.0, 130.0])).asnumpy()
    with pytest.raises(MXNetError, match="interpolation"):
        np.quantile(ints, 0.3, interpolation="foo")
    with pytest.raises(MXNetError, match="at most one dimension"):
        np.quantile(ints, np.array([[0.3]]))
    with pytest.raises(NotImplementedError):
        np.percentile(ints, 30, overwrite_input=True)


def test_histogram():
    values = RNG.uniform(0, 10, (3, 4)).astype("float32")
    counts, edges = np.histogram(np.array(values), bins=20, range=(0.0, 10.0))
    want_counts, want_edges = onp.histogram(values, bins=20, range=(0.0, 10.0))
    assert counts.dtype == onp.int64 and edges.dtype == onp.float32
    onp.testing.assert_array_equal(counts.asnumpy(), want_counts)
    onp.testing.assert_allclose(edges.asnumpy(), want_edges, rtol=1e-6)
    bins = onp.array([0.0, 2.0, 5.0, 10.0], dtype="float32")
    counts, edges = np.histogram(np.array(values), bins=np.array(bins))
    onp.testing.assert_array_equal(counts.asnumpy(), onp.histogram(values, bins)[0])
    counts, _ = np.histogram(np.array(3.0), bins=4, range=(0.0, 5.0))
    assert counts.asnumpy().tolist() == [0, 0, 1, 0]
    with pytest.raises(NotImplementedError, match="range"):
        np.histogram(np.array(values), bins=4)
    with pytest.raises(NotImplementedError):
        np.histogram(np.array(values), bins=4, range=(0.0, 1.0), density=True)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_bincount_counts_in_the_input_dtype(dtype):
    values = RNG.integers(0, 10, (20,)).astype(dtype)
    counts = np.bincount(np.array(values), minlength=12)
    assert counts.dtype == onp.dtype(dtype)
    onp.testing.assert_array_equal(counts.asnumpy(), onp.bincount(values, minlength=12))
    weights = RNG.uniform(0, 1, (20,)).astype("float16")
    summed = np.bincount(np.array(values), np.array(weights))
    assert summed.dtype == onp.float16
    onp.testing.assert_allclose(summed.asnumpy(), onp.bincount(values, weights), rtol=1e-2)
    assert np.bincount(np.array([], dtype=dtype), minlength=3).asnumpy().tolist() == [0, 0, 0]


def test_bincount_errors():
    with pytest.raises(MXNetError, match="non-negative"):
        np.bincount(np.array([-1, 2], dtype="int32"))
    with pytest.raises(TypeError, match="integer"):
        np.bincount(np.array([1.0, 2.0]))
    with pytest.raises(MXNetError, match="1-d"):
        np.bincount(np.array([[1, 2]], dtype="int32"))
    with pytest.raises(MXNetError, match="minlength"):
        np.bincount(np.array([1], dtype="int32"), minlength=-1)
