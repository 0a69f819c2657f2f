"""mx.np.random (NumPy's argument names, MXNet's TypeError for legacy ones) and the
mx.npx operator functions."""

from __future__ import annotations

import numpy as onp
import pytest

import dagnet as mx
from dagnet import np, npx


@pytest.mark.parametrize("name", ["uniform", "normal", "randint", "choice"])
def test_legacy_shape_argument_is_a_type_error(name):
    sampler = getattr(np.random, name)
    for bad in [{"shape": ()}, {"shape": None}]:
        with pytest.raises(TypeError, match="shape"):
            sampler(**bad)


def test_samplers_shapes_dtypes_and_ranges():
    u = np.random.uniform(2, 3, size=(1000,))
    assert u.dtype == onp.float32 and 2 <= u.min().item() and u.max().item() < 3
    assert np.random.uniform().shape == () and np.random.normal(size=4).shape == (4,)
    r = np.random.randint(0, 5, size=(200,))
    assert r.dtype == onp.int64 and set(r.asnumpy().tolist()) <= set(range(5))
    n = np.random.normal(10, 0.1, size=(2000,))
    assert abs(n.mean().item() - 10) < 0.05
    low = np.array([0.0, 10.0])
    assert (np.random.uniform(low, low + 1).asnumpy() >= [0, 10]).all()
    c = np.random.choice(np.array([1.0, 2.0, 3.0]), size=(2, 2))
    assert c.shape == (2, 2) and set(c.asnumpy().ravel()) <= {1.0, 2.0, 3.0}
    picks = np.random.choice(5, size=5, replace=False).asnumpy()
    assert sorted(picks.tolist()) == [0, 1, 2, 3, 4]


def test_seed_repeats_draws():
    npx.random.seed(7)
    first = np.random.uniform(size=(5,)).asnumpy()
    mx.random.seed(7)
    assert (np.random.uniform(size=(5,)).asnumpy() == first).all()


def test_npx_operators_give_np_arrays():
    x = np.array([[-1.0, 2.0], [3.0, -4.0]])
    relu = npx.relu(x)
    assert isinstance(relu, np.ndarray) and relu.asnumpy().tolist() == [[0, 2], [3, 0]]
    onp.testing.assert_allclose(npx.softmax(x).asnumpy().sum(axis=1), [1, 1], rtol=1e-6)
    fc = npx.fully_connected(x, np.ones((3, 2)), np.zeros((3,)), num_hidden=3)
    assert isinstance(fc, np.ndarray) and fc.asnumpy().tolist() == [[1, 1, 1], [-1, -1, -1]]
    assert npx.one_hot(np.array([0, 2]), 3).asnumpy().tolist() == [[1, 0, 0], [0, 0, 1]]
    assert npx.pick(x, np.array([1, 0])).asnumpy().tolist() == [2, 3]
    assert npx.activation(x, act_type="relu").asnumpy().tolist() == [[0, 2], [3, 0]]
    npx.waitall()


def test_npx_save_and_load(tmp_path):
    path = str(tmp_path / "arrays.params")
    npx.save(path, {"w": np.array([1.0, 2.0])})
    loaded = npx.load(path)
    assert isinstance(loaded["w"], np.ndarray) and loaded["w"].asnumpy().tolist() == [1, 2]


def test_samplers_outside_the_subset_say_so():
    with pytest.raises(AttributeError, match="does not provide 'seed' yet"):
        np.random.seed  # noqa: B018


def test_multinomial_counts():
    counts = np.random.multinomial(20000, [0.1, 0.2, 0.7], size=(2, 3))
    assert counts.shape == (2, 3, 3) and counts.dtype == onp.int64
    assert (counts.sum(axis=-1).asnumpy() == 20000).all()
    onp.testing.assert_allclose(counts.asnumpy() / 20000, onp.broadcast_to([0.1, 0.2, 0.7],
                                                                            (2, 3, 3)), atol=0.03)
    assert np.random.multinomial(5, np.array([0.5, 0.5])).shape == (2,)
    assert np.random.multinomial(5, [0.5, 0.5], size=(0, 2)).shape == (0, 2, 2)
