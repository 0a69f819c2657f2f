"""mx.np indexing against numpy: basic keys (0-d results), integer and boolean arrays,
assignment."""

from __future__ import annotations

import numpy as onp
import pytest

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
