"""``dagnet im2rec`` end to end: PNG and JPEG files packed, then read back through
ImageRecordIter and ImageIter with their pixels and labels checked."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

import dagnet as mx
from dagnet.cli import main


@pytest.fixture
def image_set(tmp_path):
    """3 classes x 4 images of 16x16 from scikit-learn's digits (8x8, scaled up smoothly),
    as PNG in class folders, and the same images as JPEG in another tree."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    pixels = {}
    for fmt in ("png", "jpg"):
        for label in range(3):
            (tmp_path / fmt / f"class{label}").mkdir(parents=True)
    for label in range(3):
        chosen = np.nonzero(digits.target == label)[0][:4]
        for k, i in enumerate(chosen):
            small = Image.fromarray((digits.images[i] * 255 / 16).astype(np.uint8))
            gray = np.asarray(small.resize((16, 16), Image.Resampling.BILINEAR), np.float64)
            rgb = np.stack([gray, 0.5 * gray + 60, 200 - 0.5 * gray + 10 * label], axis=2)
            rgb = rgb.round().astype(np.uint8)
            name = f"class{label}/d{k}"
            pixels[name] = rgb
            Image.fromarray(rgb).save(tmp_path / "png" / f"{name}.png")
            Image.fromarray(rgb).save(tmp_path / "jpg" / f"{name}.jpg", quality=95)
    return tmp_path, pixels


def _names(lst_path):
    rows = [line.split("\t") for line in open(lst_path).read().splitlines()]
    return {int(r[0]): (float(r[1]), r[-1].rsplit(".", 1)[0]) for r in rows}


def _check(image_chw, expected, tolerance):
    """PNG: exact.  JPEG: stored twice at quality 95 with 4:2:0 chroma (the source file,
    then the record, as OpenCV and so MXNet's im2rec would too); on 16x16 digits the
    chroma edges cost about 12 levels on average."""
    diff = np.abs(image_chw.transpose(1, 2, 0) - expected)
    if tolerance == 0:
        assert diff.max() == 0
    else:
        assert diff.mean() <= tolerance and np.abs(diff.mean(axis=(0, 1))).max() <= 2 * tolerance


@pytest.mark.parametrize("fmt, encoding, tolerance", [("png", ".png", 0), ("jpg", ".jpg", 16)])
def test_im2rec_then_read_back(image_set, fmt, encoding, tolerance, capsys):
    root, pixels = image_set
    prefix = str(root / f"set_{fmt}")
    assert main(["im2rec", "--list", "--recursive", prefix, str(root / fmt),
                 "--exts", f".{fmt}"]) == 0
    listed = _names(prefix + ".lst")
    assert sorted(listed) == list(range(12))
    assert {label for label, _ in listed.values()} == {0.0, 1.0, 2.0}
    assert main(["im2rec", prefix, str(root / fmt), "--encoding", encoding,
                 "--num-thread", "2", "--quality", "95"]) == 0
    assert "12 records" in capsys.readouterr().out

    reader = mx.recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r")
    it = mx.io.ImageRecordIter(path_imgrec=prefix + ".rec", path_imgidx=prefix + ".idx",
                               data_shape=(3, 16, 16), batch_size=5, preprocess_threads=2)
    count = 0
    for batch in it:
        real = 5 - batch.pad
        for image, label, record in zip(batch.data[0].asnumpy()[:real],
                                        batch.label[0].asnumpy()[:real], batch.index[:real]):
            key = reader.keys[record]
            expected_label, name = listed[key]
            stored = mx.image.imdecode(mx.recordio.unpack(reader.read_idx(key))[1])
            np.testing.assert_array_equal(image, stored.asnumpy().transpose(2, 0, 1))
            assert label == expected_label
            _check(image, pixels[name], tolerance)
            count += 1
    assert count == 12

    by_path = {name: label for label, name in listed.values()}
    image_iter = mx.image.ImageIter(4, (3, 16, 16), path_imgrec=prefix + ".rec",
                                    path_imgidx=prefix + ".idx")
    seen = 0
    for batch in image_iter:
        for image, label in zip(batch.data[0].asnumpy(), batch.label[0].asnumpy()):
            key = reader.keys[seen]
            name = listed[key][1]
            assert label == by_path[name]
            _check(image, pixels[name], tolerance)
            seen += 1
    assert seen == 12


def test_im2rec_split_resize_and_bad_files(tmp_path, capsys):
    (tmp_path / "imgs").mkdir()
    for i in range(10):
        Image.fromarray(np.full((20, 30, 3), 10 * i, np.uint8)).save(tmp_path / "imgs" / f"{i}.png")
    (tmp_path / "imgs" / "broken.png").write_bytes(b"not an image")
    prefix = str(tmp_path / "split")
    assert main(["im2rec", "--list", "--train-ratio", "0.6", "--test-ratio", "0.2", prefix,
                 str(tmp_path / "imgs")]) == 0
    sizes = {part: len(open(f"{prefix}_{part}.lst").read().splitlines())
             for part in ("train", "val", "test")}
    assert sizes == {"train": 6, "val": 3, "test": 2}
    assert main(["im2rec", prefix + "_train.lst", str(tmp_path / "imgs"), "--resize", "10",
                 "--center-crop", "--no-progress"]) == 0
    reader = mx.recordio.MXRecordIO(prefix + "_train.rec", "r")
    header, image = mx.recordio.unpack_img(reader.read())
    assert image.shape == (10, 10, 3)
    names = open(prefix + "_train.lst").read()
    if "broken" in names:
        assert "skipped" in capsys.readouterr().err


def test_im2rec_pack_label_stores_every_label(tmp_path):
    (tmp_path / "imgs").mkdir()
    Image.fromarray(np.zeros((8, 8, 3), np.uint8)).save(tmp_path / "imgs" / "a.png")
    (tmp_path / "multi.lst").write_text("7\t1.5\t2.5\ta.png\n")
    assert main(["im2rec", str(tmp_path / "multi.lst"), str(tmp_path / "imgs"), "--pack-label",
                 "--encoding", ".png", "--no-progress"]) == 0
    reader = mx.recordio.MXIndexedRecordIO(str(tmp_path / "multi.idx"),
                                           str(tmp_path / "multi.rec"), "r")
    header, _ = mx.recordio.unpack(reader.read_idx(7))
    assert header.flag == 2 and header.id == 7
    np.testing.assert_array_equal(header.label, [1.5, 2.5])
