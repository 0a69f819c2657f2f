"""dagnet.image: decoding, geometry, augmenters and ImageIter."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest
from PIL import Image

import dagnet as mx


def _png(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(array).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def pixels():
    return np.random.RandomState(1).randint(0, 256, (30, 40, 3)).astype(np.uint8)


def test_imdecode_rgb_bgr_gray(pixels):
    png = _png(pixels)
    img = mx.image.imdecode(png)
    assert img.dtype == np.uint8 and img.shape == (30, 40, 3)
    np.testing.assert_array_equal(img.asnumpy(), pixels)
    np.testing.assert_array_equal(mx.image.imdecode(bytearray(png), to_rgb=0).asnumpy(),
                                  pixels[:, :, ::-1])
    gray = mx.image.imdecode(np.frombuffer(png, np.uint8), flag=0).asnumpy()
    assert gray.shape == (30, 40, 1)
    expected = (pixels @ np.array([0.299, 0.587, 0.114])).round()
    assert np.abs(gray[:, :, 0] - expected).max() <= 1


def test_imdecode_and_imread_errors(tmp_path):
    with pytest.raises(mx.MXNetError, match="empty"):
        mx.image.imdecode(b"")
    with pytest.raises(mx.MXNetError, match="cannot decode"):
        mx.image.imdecode(b"clearly not image content")
    with pytest.raises(mx.MXNetError, match="encode text"):
        mx.image.imdecode("text")
    with pytest.raises(mx.MXNetError, match="missing.jpg"):
        mx.image.imread(str(tmp_path / "missing.jpg"))


def test_imread_matches_imdecode(tmp_path, pixels):
    path = tmp_path / "a.png"
    path.write_bytes(_png(pixels))
    np.testing.assert_array_equal(mx.image.imread(str(path)).asnumpy(), pixels)
    np.testing.assert_array_equal(mx.img.image.imread(str(path), to_rgb=0).asnumpy(),
                                  pixels[:, :, ::-1])


def test_jpeg_decodes_within_tolerance():
    y, x = np.mgrid[0:32, 0:48]
    smooth = np.stack([x * 5, y * 7, (x + y) * 3], axis=2).astype(np.uint8)
    jpg = mx.image.encode_image(smooth, ".jpg", 95)
    decoded = mx.image.imdecode(jpg).asnumpy().astype(int)
    assert np.abs(decoded - smooth).mean() < 3


def test_scale_down_and_crops(pixels):
    assert mx.image.scale_down((640, 480), (720, 120)) == (640, 106)
    assert mx.image.scale_down((360, 1000), (480, 500)) == (360, 375)
    img = mx.nd.array(pixels, dtype=np.uint8)
    out, box = mx.image.center_crop(img, (20, 10))
    assert box == (10, 10, 20, 10)
    np.testing.assert_array_equal(out.asnumpy(), pixels[10:20, 10:30])
    random.seed(0)
    out, (x0, y0, w, h) = mx.image.random_crop(img, (16, 16))
    np.testing.assert_array_equal(out.asnumpy(), pixels[y0:y0 + 16, x0:x0 + 16])
    out = mx.image.fixed_crop(img, 2, 3, 10, 8, size=(5, 4))
    assert out.shape == (4, 5, 3)
    out, (x0, y0, w, h) = mx.image.random_size_crop(img, (12, 12), 0.3, (0.75, 1.33))
    assert out.shape == (12, 12, 3) and x0 + w <= 40 and y0 + h <= 30


def test_resizes(pixels):
    img = mx.nd.array(pixels, dtype=np.uint8)
    assert mx.image.resize_short(img, 15).shape == (15, 20, 3)
    out = mx.nd.zeros((7, 9, 3), dtype=np.uint8)
    mx.image.imresize(img, 9, 7, interp=1, out=out)
    assert out.asnumpy().any()
    flat = mx.nd.full((10, 10, 3), 77, dtype=np.uint8)
    for interp in (0, 1, 2, 3, 4, 9):
        assert (mx.image.imresize(flat, 23, 5, interp=interp).asnumpy() == 77).all()
    floats = mx.image.imresize(mx.nd.full((4, 4, 2), 0.5), 8, 8)
    assert floats.dtype == np.float32 and np.allclose(floats.asnumpy(), 0.5)
    with pytest.raises(mx.MXNetError, match="interpolation"):
        mx.image.imresize(img, 5, 5, interp=7)


def test_copy_make_border_modes():
    img = mx.nd.array(np.arange(12).reshape(3, 4, 1), dtype=np.int32)
    const = mx.image.copyMakeBorder(img, 1, 1, 2, 0, type=0, values=[9]).asnumpy()[:, :, 0]
    assert const.shape == (5, 6) and const[0].tolist() == [9] * 6
    assert const[1].tolist() == [9, 9, 0, 1, 2, 3]
    replicate = mx.image.copyMakeBorder(img, 0, 0, 2, 0, type=3).asnumpy()[0, :, 0]
    assert replicate.tolist() == [0, 0, 0, 1, 2, 3]
    reflect101 = mx.image.copyMakeBorder(img, 0, 0, 2, 0, type=2).asnumpy()[0, :, 0]
    assert reflect101.tolist() == [2, 1, 0, 1, 2, 3]


def test_color_normalize_and_augmenters(pixels):
    src = pixels.astype(np.float32)
    mean, std = np.array([10.0, 20.0, 30.0]), np.array([2.0, 4.0, 5.0])
    out = mx.image.ColorNormalizeAug(mx.nd.array(mean), std)(mx.nd.array(src))
    np.testing.assert_allclose(out.asnumpy(), (src - mean) / std, rtol=1e-5)
    flipped = mx.image.HorizontalFlipAug(1.0)(mx.nd.array(src))
    np.testing.assert_array_equal(flipped.asnumpy(), src[:, ::-1])
    gray = mx.image.RandomGrayAug(1.0)(mx.nd.array(src)).asnumpy()
    np.testing.assert_allclose(gray[:, :, 0], gray[:, :, 2], rtol=1e-5)
    augs = mx.image.CreateAugmenter((3, 16, 16), resize=20, rand_crop=True, rand_resize=True,
                                    rand_mirror=True, mean=True, std=True, brightness=0.1,
                                    contrast=0.1, saturation=0.1, hue=0.1, pca_noise=0.1,
                                    rand_gray=0.2)
    names = [type(a).__name__ for a in augs]
    assert names[:3] == ["ResizeAug", "RandomSizedCropAug", "HorizontalFlipAug"]
    assert names[-1] == "ColorNormalizeAug"
    image = mx.nd.array(pixels, dtype=np.uint8)
    for aug in augs:
        image = aug(image)
    assert image.shape == (16, 16, 3) and image.dtype == np.float32
    assert '"resizeaug"' in augs[0].dumps()
    with pytest.raises(mx.MXNetError, match="rand_crop"):
        mx.image.CreateAugmenter((3, 8, 8), rand_resize=True)


def test_imrotate_matches_a_direct_rotation():
    img = np.zeros((1, 9, 9), np.float32)
    img[0, 4, 6] = 1.0  # right of the centre
    rotated = mx.image.imrotate(mx.nd.array(img), 90).asnumpy()[0]
    assert rotated.shape == (9, 9)
    assert np.unravel_index(rotated.argmax(), rotated.shape) in {(2, 4), (6, 4)}
    batch = mx.nd.array(np.stack([img, img]))
    assert mx.image.imrotate(batch, mx.nd.array([0, 90])).shape == (2, 1, 9, 9)
    np.testing.assert_allclose(mx.image.imrotate(mx.nd.array(img), 0).asnumpy(), img,
                               atol=1e-6)
    with pytest.raises(ValueError):
        mx.image.imrotate(mx.nd.array(img), 5, zoom_in=True, zoom_out=True)
    with pytest.raises(TypeError):
        mx.image.imrotate(mx.nd.array(img), mx.nd.array([1, 2]))
    assert mx.image.random_rotate(batch, (-5, 5)).shape == (2, 1, 9, 9)


def test_image_iter_from_list_last_batch_modes(tmp_path, pixels):
    paths = []
    for i in range(5):
        path = tmp_path / f"{i}.png"
        path.write_bytes(_png(np.roll(pixels, i, axis=1)))
        paths.append([float(i), path.name])
    def make(**kw):
        return mx.image.ImageIter(2, (3, 16, 16), imglist=paths, path_root=str(tmp_path), **kw)
    batches = list(make())
    assert len(batches) == 3 and batches[-1].pad == 1
    assert batches[0].data[0].shape == (2, 3, 16, 16)
    assert batches[0].label[0].asnumpy().tolist() == [0.0, 1.0]
    first = batches[0].data[0].asnumpy()[0]
    np.testing.assert_array_equal(first, pixels[7:23, 12:28].transpose(2, 0, 1))
    assert len(list(make(last_batch_handle="discard"))) == 2
    roll = make(last_batch_handle="roll_over")
    assert len(list(roll)) == 2
    roll.reset()
    assert next(roll).label[0].asnumpy().tolist() == [4.0, 0.0]
    with pytest.raises(mx.MXNetError, match="3-channel"):
        mx.image.ImageIter(2, (1, 16, 16), imglist=paths)


def test_image_iter_names_a_broken_image(tmp_path):
    (tmp_path / "bad.png").write_bytes(b"not a png")
    it = mx.image.ImageIter(1, (3, 4, 4), imglist=[[0.0, "bad.png"]], path_root=str(tmp_path))
    with pytest.raises(mx.MXNetError, match="bad.png"):
        next(it)


def test_bilinear_resize_matches_mxnet_s_opencv():
    from pathlib import Path

    expected = np.load(Path(__file__).parents[1] / "recordio" / "fixtures"
                       / "mxnet_small_expected.npz")
    source = mx.nd.array(expected["resize_source"], dtype=np.uint8)
    for w, h in [(5, 7), (40, 31), (8, 6), (17, 26)]:
        np.testing.assert_array_equal(mx.image.imresize(source, w, h, interp=1).asnumpy(),
                                      expected[f"resize_{w}x{h}"])
