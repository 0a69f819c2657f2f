"""gluon.data.vision.transforms."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon.data.vision import transforms as T

pytest.importorskip("dagnet.image")


def _img(h=6, w=8, dtype="uint8", seed=0):
    rng = np.random.RandomState(seed)
    return mx.nd.array(rng.randint(0, 256, (h, w, 3)), dtype=dtype)


def test_to_tensor_and_normalize_hybridize():
    x = _img()
    t = T.ToTensor()(x)
    assert t.shape == (3, 6, 8) and t.dtype == np.float32
    np.testing.assert_allclose(t.asnumpy(), x.asnumpy().transpose(2, 0, 1) / 255.0, rtol=1e-6)
    assert T.ToTensor()(mx.nd.stack(x, x)).shape == (2, 3, 6, 8)
    with pytest.raises(mx.MXNetError, match="3 or 4-D"):
        T.ToTensor()(mx.nd.ones((2, 2)))
    norm = T.Normalize(mean=(0.5, 0.25, 0.0), std=(0.5, 1.0, 2.0))
    want = (t.asnumpy() - np.array([0.5, 0.25, 0.0])[:, None, None]) \
        / np.array([0.5, 1.0, 2.0])[:, None, None]
    np.testing.assert_allclose(norm(t).asnumpy(), want, rtol=1e-5)
    chain = T.HybridCompose([T.ToTensor(), T.Normalize(mean=(0.5, 0.25, 0.0),
                                                       std=(0.5, 1.0, 2.0))])
    chain.hybridize()
    np.testing.assert_allclose(chain(x).asnumpy(), want, rtol=1e-5)
    with pytest.raises(mx.MXNetError, match="4 channels"):
        norm(mx.nd.ones((4, 2, 2)))


def test_resize_and_crops():
    x = _img(30, 20)
    assert T.Resize(10)(x).shape == (10, 10, 3)
    assert T.Resize(10, keep_ratio=True)(x).shape == (15, 10, 3)
    assert T.Resize((12, 5))(x).shape == (5, 12, 3)
    np.testing.assert_array_equal(T.Resize((12, 5))(x).asnumpy(),
                                  mx.image.imresize(x, 12, 5, 1).asnumpy())
    with pytest.raises(mx.MXNetError, match="positive"):
        T.Resize(-3)(x)
    crop = T.CropResize(2, 3, 4, 5)(x)
    np.testing.assert_array_equal(crop.asnumpy(), x.asnumpy()[3:8, 2:6])
    assert T.CropResize(2, 3, 4, 5, size=(7, 7))(mx.nd.stack(x, x)).shape == (2, 7, 7, 3)
    with pytest.raises(mx.MXNetError, match="leaves the 20x30 image"):
        T.CropResize(18, 0, 5, 5)(x)
    assert T.CenterCrop(8)(x).shape == (8, 8, 3)
    assert T.RandomResizedCrop((9, 7))(x).shape == (7, 9, 3)


def test_random_flips_flip_about_half_the_time():
    np.random.seed(3)
    x = _img()
    flips = [np.array_equal(T.RandomFlipLeftRight()(x).asnumpy(), x.asnumpy()[:, ::-1])
             for _ in range(40)]
    assert 8 < sum(flips) < 32
    ups = [np.array_equal(T.RandomFlipTopBottom()(x).asnumpy(), x.asnumpy()[::-1])
           for _ in range(40)]
    assert 8 < sum(ups) < 32


def test_colour_transforms():
    x = _img(dtype="float32")
    values = x.asnumpy()
    for zero in (T.RandomBrightness(0), T.RandomContrast(0), T.RandomSaturation(0),
                 T.RandomHue(0), T.RandomLighting(0), T.RandomColorJitter()):
        np.testing.assert_allclose(zero(x).asnumpy(), values, rtol=1e-4, atol=1e-3)
    ratio = T.RandomBrightness(0.2)(x).asnumpy() / np.maximum(values, 1e-3)
    ratio = ratio[values > 1]
    assert np.allclose(ratio, ratio[0], rtol=1e-4) and 0.8 <= ratio[0] <= 1.2
    gray = T.RandomSaturation(1.0)(mx.nd.full((2, 2, 3), 7.0)).asnumpy()
    np.testing.assert_allclose(gray, 7.0, rtol=1e-5)  # grey stays grey
    out = T.RandomColorJitter(0.1, 0.1, 0.1, 0.1)(_img())
    assert out.dtype == np.uint8 and out.shape == (6, 8, 3)
    with pytest.raises(mx.MXNetError, match="RGB"):
        T.RandomHue(0.1)(mx.nd.ones((2, 2, 4)))


def test_rotations_and_random_apply():
    with pytest.raises(TypeError, match="float32"):
        T.Rotate(10)(mx.nd.ones((3, 4, 4), dtype="uint8"))
    with pytest.raises(ValueError, match="rotate_with_proba"):
        T.RandomRotation((-10, 10), rotate_with_proba=2)
    x = mx.nd.random.uniform(shape=(3, 5, 5))
    np.testing.assert_array_equal(T.RandomRotation((-90, 90), rotate_with_proba=0)(x).asnumpy(),
                                  x.asnumpy())
    assert T.Rotate(30)(x).shape == (3, 5, 5)
    always = T.RandomApply(T.Compose([T.Resize(3)]), p=1.0)
    never = T.RandomApply(T.Compose([T.Resize(3)]), p=0.0)
    assert always(_img()).shape == (3, 3, 3) and never(_img()).shape == (6, 8, 3)
    pipeline = T.Compose([T.Resize(16), T.CenterCrop(12), T.RandomFlipLeftRight(),
                          T.ToTensor(), T.Normalize(0.5, 0.25)])
    assert pipeline(_img()).shape == (3, 12, 12)
