"""``mx.nd.moveaxis`` and the legacy ``mx.nd.onehot_encode``."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


@pytest.mark.parametrize("source, destination", [
    (0, 2), (2, 0), (0, -1), (-1, 0), ([0, 1], [-1, -2]), ((0, 2), (1, 0)), ([], []),
])
def test_moveaxis_is_numpys(source, destination):
    data = np.arange(24.0).reshape(2, 3, 4)
    got = mx.nd.moveaxis(mx.nd.array(data), source, destination)
    np.testing.assert_array_equal(got.asnumpy(), np.moveaxis(data, source, destination))


@pytest.mark.parametrize("source, destination, message", [
    (3, 0, "source 3 is out of range"), (-4, 0, "source -4 is out of range"),
    (0, 5, "destination 5 is out of range"), ([0, 1], [0], "must name as many axes"),
    ([0, 0], [1, 2], "repeated axis"),
])
def test_moveaxis_refuses_bad_axes(source, destination, message):
    with pytest.raises(ValueError, match=message):
        mx.nd.moveaxis(mx.nd.ones((2, 3, 4)), source, destination)


def test_onehot_encode_writes_into_out():
    out = mx.nd.zeros((3, 4))
    assert mx.nd.onehot_encode(mx.nd.array([1, 0, 3]), out) is out
    np.testing.assert_array_equal(out.asnumpy(), np.eye(4)[[1, 0, 3]])
    with pytest.raises(ValueError, match="2-D NDArray"):
        mx.nd.onehot_encode(mx.nd.array([1]), mx.nd.zeros((4,)))
