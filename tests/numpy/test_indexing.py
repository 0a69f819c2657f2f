"""mx.np indexing against numpy: basic keys (0-d results), integer and boolean arrays,
assignment."""

from __future__ import annotations

import numpy as onp
import pytest

import dagnet as mx
from dagnet import np

_A = onp.arange(24, dtype=onp.float32).reshape(2, 3, 4)

_KEYS = [
    1, -1, (0, 1), (1, 2, 3), (slice(None), 1), (Ellipsis, 0), (None, 0), (0, None, 1),
    slice(0, 1), (slice(None), slice(1, None, 2)), (0, Ellipsis, slice(None, None, -1)), (),
    onp.array([1, 0]), (slice(None), onp.array([2, 0])), (onp.array([0, 1]), onp.array([2, 1])),
    _A > 10, (0, _A[0, :, 0] > 4),
]


@pytest.mark.parametrize("key", _KEYS, ids=repr)
def test_getitem_matches_numpy(key):
    got = np.array(_A)[key]
    want = _A[key]
    assert isinstance(got, np.ndarray) and got.shape == want.shape
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_array_keys_may_be_mx_np_arrays():
    x = np.array(_A)
    assert x[np.array([1, 0], dtype="int64")].shape == (2, 3, 4)
    assert x[x > 10].shape == (13,)
    assert np.array([1, 2, 3], dtype="int32")[np.array([0, 2])].asnumpy().tolist() == [1, 3]


def test_zero_dim_arrays_index_and_assign():
    s = np.array(5)
    assert s.shape == () and s[()].shape == () and s[...].item() == 5
    s[()] = 7
    assert s.item() == 7
    with pytest.raises(IndexError):
        s[0] = 1


@pytest.mark.parametrize("key", [(0, 1), (slice(None), 2), 1, _A > 12, (0, onp.array([0, 2]))],
                         ids=repr)
def test_setitem_matches_numpy(key):
    want = _A.copy()
    want[key] = -1
    got = np.array(_A)
    got[key] = -1
    onp.testing.assert_array_equal(got.asnumpy(), want)


def test_setitem_with_an_array_value():
    x = np.zeros((2, 3))
    x[1] = np.array([1.0, 2.0, 3.0])
    x[0, 0] = np.array(9.0)
    assert x.asnumpy().tolist() == [[9, 0, 0], [1, 2, 3]]


def test_scalar_and_mismatched_boolean_keys():
    x = np.array(_A)
    assert x[True].shape == (1, 2, 3, 4) and x[onp.bool_(False)].shape == (0, 2, 3, 4)
    assert x[onp.int64(1), onp.int32(2)].shape == (4,)
    with pytest.raises(IndexError, match="boolean index of shape"):
        x[onp.array([True])]
    with pytest.raises(IndexError, match="scalar boolean inside an index tuple"):
        x[0, True]


def test_internal_boolean_mask_assign_writes_into_out():
    mx.npx.set_np()
    try:
        data = mx.np.zeros((2, 3))
        mask = mx.np.array([[True, False, True], [False, False, True]], dtype=bool)
        mx.np._internal.boolean_mask_assign_scalar(data, mask, 5.0, out=data)
        onp.testing.assert_allclose(data.asnumpy(), [[5, 0, 5], [0, 0, 5]])
        rows = mx.np.array([False, True], dtype=bool)
        got = mx.np._internal.boolean_mask_assign_tensor(data, rows, mx.np.ones((3,)),
                                                         start_axis=0)
        onp.testing.assert_allclose(got.asnumpy(), [[5, 0, 5], [1, 1, 1]])
        scalar = mx.np.array(2.0)
        scalar[mx.np.array(True, dtype=bool)] = 7.0
        scalar[mx.np.array(False, dtype=bool)] = 9.0
        assert float(scalar.item()) == 7.0
    finally:
        mx.npx.reset_np()
