"""``mx.nd.image`` crop and flips beyond the conformance suite: uint8 stays uint8, and
shapes outside what MXNet accepts fail with the operator's name."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def test_uint8_images_keep_their_dtype():
    x = np.arange(60, dtype=np.uint8).reshape(5, 4, 3)
    for op, want in ((mx.nd.image.flip_left_right, x[:, ::-1]),
                     (mx.nd.image.flip_top_bottom, x[::-1]),
                     (lambda a: mx.nd.image.crop(a, 1, 2, 3, 2), x[2:4, 1:4])):
        got = op(mx.nd.array(x, dtype="uint8"))
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got.asnumpy(), want)
    batch = mx.nd.array(np.arange(120).reshape(2, 5, 4, 3))
    assert mx.nd.image.crop(batch, 0, 0, 2, 3).shape == (2, 3, 2, 3)


@pytest.mark.parametrize("call, message", [
    (lambda: mx.nd.image.flip_left_right(mx.nd.ones((2, 5, 4, 3))), "one image"),
    (lambda: mx.nd.image.crop(mx.nd.ones((5, 4, 3)), 3, 0, 2, 1), "exceeds the image width"),
    (lambda: mx.nd.image.crop(mx.nd.ones((5, 4, 3)), 0, 0, 0, 1), "must be > 0"),
    (lambda: mx.nd.image.crop(mx.nd.ones((5, 4)), 0, 0, 1, 1), "_image_crop"),
])
def test_bad_shapes_are_refused(call, message):
    with pytest.raises(mx.base.MXNetError, match=message):
        call().wait_to_read()
