"""mx.io.ImageDetRecordIter: MXNet's padded label rows, mirrored boxes, errors."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

import dagnet as mx
from dagnet.recordio import IRHeader, MXIndexedRecordIO, pack


@pytest.fixture
def det_rec(tmp_path):
    """5 images (30x40) with 1, 2, 3, 1, 2 boxes of class i % 3."""
    rec, idx = str(tmp_path / "det.rec"), str(tmp_path / "det.idx")
    writer = MXIndexedRecordIO(idx, rec, "w")
    rng = np.random.RandomState(0)
    for i in range(5):
        out = io.BytesIO()
        Image.fromarray(rng.randint(0, 256, (30, 40, 3)).astype(np.uint8)).save(out, "PNG")
        objects = [[i % 3, 0.1, 0.2, 0.5, 0.6]] * (1 + i % 3)
        label = [2, 5] + [v for obj in objects for v in obj]
        writer.write_idx(i, pack(IRHeader(0, label, i, 0), out.getvalue()))
    writer.close()
    return rec


def test_label_rows_as_mxnet(det_rec):
    it = mx.io.ImageDetRecordIter(path_imgrec=det_rec, data_shape=(3, 20, 20), batch_size=2)
    assert it.provide_label[0].shape == (2, 21)  # the widest record: 2 + 3 * 5 labels, + 4
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    first = batches[0].label[0].asnumpy()
    # the rows MXNet 1.9.1 gives for this file
    np.testing.assert_allclose(first[0], [3, 20, 20, 7, 2, 5, 0, .1, .2, .5, .6] + [-1] * 10)
    np.testing.assert_allclose(first[1][:16], [3, 20, 20, 12, 2, 5, 1, .1, .2, .5, .6,
                                               1, .1, .2, .5, .6])
    assert batches[0].data[0].shape == (2, 3, 20, 20)


def test_mirror_flips_boxes_and_pad_width(det_rec):
    it = mx.io.ImageDetRecordIter(path_imgrec=det_rec, data_shape=(3, 20, 20), batch_size=2,
                                  label_pad_width=24, rand_mirror_prob=1.0)
    assert it.provide_label[0].shape == (2, 28)
    row = next(it).label[0].asnumpy()[0]
    np.testing.assert_allclose(row[6:11], [0, 0.5, 0.2, 0.9, 0.6], rtol=1e-6)
    with pytest.raises(mx.MXNetError, match="label_pad_width 4 is smaller"):
        mx.io.ImageDetRecordIter(path_imgrec=det_rec, data_shape=(3, 20, 20), batch_size=2,
                                 label_pad_width=4)
    with pytest.raises(mx.MXNetError, match="rand_crop_prob"):
        mx.io.ImageDetRecordIter(path_imgrec=det_rec, data_shape=(3, 20, 20), batch_size=2,
                                 rand_crop_prob=0.5)
