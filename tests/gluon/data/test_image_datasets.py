"""Image datasets decoding real files: ImageFolderDataset and ImageRecordDataset,
through a DataLoader with worker processes."""

from __future__ import annotations

import io

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon import data as gdata

PIL = pytest.importorskip("PIL.Image")
pytest.importorskip("dagnet.image")


def _png(color, size=(5, 4)):
    buf = io.BytesIO()
    PIL.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def test_image_folder_decodes_images(tmp_path):
    for cls, color in (("blue", (0, 0, 255)), ("red", (255, 0, 0))):
        (tmp_path / cls).mkdir()
        (tmp_path / cls / "a.png").write_bytes(_png(color))
    ds = gdata.vision.ImageFolderDataset(str(tmp_path))
    img, label = ds[1]
    assert ds.synsets == ["blue", "red"] and label == 1
    assert img.shape == (4, 5, 3) and img.dtype == np.uint8
    assert (img.asnumpy()[..., 0] == 255).all()
    grey = gdata.vision.ImageFolderDataset(str(tmp_path), flag=0)[0][0]
    assert grey.shape == (4, 5, 1)


def test_image_record_dataset_through_worker_processes(tmp_path):
    idx, rec = str(tmp_path / "img.idx"), str(tmp_path / "img.rec")
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(6):
        writer.write_idx(i, mx.recordio.pack((0, float(i), i, 0), _png((i * 40, 0, 0))))
    writer.close()
    ds = gdata.vision.ImageRecordDataset(rec).transform_first(gdata.vision.transforms.ToTensor())
    loader = gdata.DataLoader(ds, batch_size=2, num_workers=2)
    seen = []
    for x, y in loader:
        assert x.shape == (2, 3, 4, 5)
        seen.extend(y.asnumpy().tolist())
        np.testing.assert_allclose(x.asnumpy()[:, 0, 0, 0], np.array(y.asnumpy()) * 40 / 255,
                                   rtol=1e-6)
    assert seen == [0, 1, 2, 3, 4, 5]
