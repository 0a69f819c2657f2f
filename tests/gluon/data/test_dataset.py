"""gluon.data datasets and samplers."""

from __future__ import annotations

import gzip
import os
import struct

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon import data as gdata


def test_simple_dataset_views():
    a = gdata.SimpleDataset(list(range(10)))
    assert len(a.filter(lambda x: x % 3 == 0)) == 4
    assert list(a.transform(lambda x: x * 2).take(3)) == [0, 2, 4]
    assert len(a.take(None)) == 10 and len(a.take(100)) == 10
    shards = [list(a.shard(4, i)) for i in range(4)]
    assert shards == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    assert list(a.sample(gdata.SequentialSampler(3, 5))) == [5, 6, 7]
    eager = a.transform(lambda x: x + 1, lazy=False)
    assert isinstance(eager, gdata.SimpleDataset) and eager[0] == 1


def test_transform_first_keeps_label():
    ds = gdata.ArrayDataset(np.arange(4.0), np.arange(4) + 10)
    x, y = ds.transform_first(lambda v: v * 100)[2]
    assert x == 200 and y == 12
    only = gdata.ArrayDataset(np.arange(4.0)).transform_first(lambda v: -v)
    assert only[3] == -3


def test_array_dataset_checks_lengths_and_reads_1d_ndarrays():
    ds = gdata.ArrayDataset(mx.nd.arange(3), [[1, 2]] * 3)
    x, y = ds[1]
    assert isinstance(x, np.floating) and x == 1 and y == [1, 2]
    with pytest.raises(gdata.DatasetError, match="same length"):
        gdata.ArrayDataset(np.zeros(3), np.zeros(4))
    with pytest.raises(mx.MXNetError, match="at least one"):
        gdata.ArrayDataset()


def test_bad_shard_and_sample_arguments():
    a = gdata.SimpleDataset([1, 2, 3])
    with pytest.raises(gdata.DatasetError, match="index"):
        a.shard(2, 2)
    with pytest.raises(TypeError, match="Sampler"):
        a.sample([0, 1])


def test_samplers():
    assert list(gdata.SequentialSampler(4)) == [0, 1, 2, 3]
    np.random.seed(0)
    r = list(gdata.RandomSampler(10))
    assert sorted(r) == list(range(10)) and r != list(range(10))
    assert list(gdata.IntervalSampler(13, 3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    assert list(gdata.IntervalSampler(13, 3, rollover=False)) == [0, 3, 6, 9, 12]
    assert len(gdata.IntervalSampler(13, 3, rollover=False)) == 5
    seq = gdata.SequentialSampler(10)
    assert list(gdata.BatchSampler(seq, 3, "keep"))[-1] == [9]
    assert len(gdata.BatchSampler(seq, 3, "keep")) == 4
    assert len(gdata.BatchSampler(seq, 3, "discard")) == 3
    assert sum(gdata.BatchSampler(seq, 3, "discard"), []) == list(range(9))


def test_batch_sampler_rollover_carries_the_rest():
    roll = gdata.BatchSampler(gdata.SequentialSampler(5), 2, "rollover")
    assert list(roll) == [[0, 1], [2, 3]]
    assert len(roll) == 3  # the held-back 4 plus five more
    assert list(roll) == [[4, 0], [1, 2], [3, 4]]


def test_batch_sampler_rejects_bad_arguments():
    with pytest.raises(gdata.DatasetError, match="last_batch"):
        gdata.BatchSampler(gdata.SequentialSampler(3), 2, "drop")
    with pytest.raises(gdata.DatasetError, match="batch_size"):
        gdata.BatchSampler(gdata.SequentialSampler(3), 0)


def _write_idx(path, array, magic):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in array.shape))
        f.write(array.astype(np.uint8).tobytes())


def test_mnist_reads_the_idx_files(tmp_path):
    images = np.random.randint(0, 256, (5, 28, 28)).astype(np.uint8)
    labels = np.array([3, 1, 4, 1, 5], np.uint8)
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", images, 2051)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", labels, 2049)
    ds = gdata.vision.MNIST(root=str(tmp_path), train=False)
    assert len(ds) == 5
    x, y = ds[2]
    assert x.shape == (28, 28, 1) and x.dtype == np.uint8 and y == 4 and y.dtype == np.int32
    np.testing.assert_array_equal(x.asnumpy()[:, :, 0], images[2])


def test_missing_dataset_files_say_where_to_put_them(tmp_path):
    with pytest.raises(mx.MXNetError, match="train-images-idx3-ubyte.gz.*root="):
        gdata.vision.FashionMNIST(root=str(tmp_path))
    with pytest.raises(gdata.DatasetError, match="data_batch_1.bin"):
        gdata.vision.CIFAR10(root=str(tmp_path))


def test_cifar_binary_files(tmp_path):
    folder = tmp_path / "cifar-100-binary"
    folder.mkdir()
    rows = np.zeros((3, 3074), np.uint8)
    rows[:, 0] = [1, 2, 3]      # coarse
    rows[:, 1] = [40, 50, 60]   # fine
    rows[1, 2:2 + 1024] = 7     # red plane of image 1
    rows.tofile(folder / "test.bin")
    coarse = gdata.vision.CIFAR100(root=str(tmp_path), train=False)
    fine = gdata.vision.CIFAR100(root=str(tmp_path), train=False, fine_label=True)
    assert [coarse[i][1] for i in range(3)] == [1, 2, 3]
    assert [fine[i][1] for i in range(3)] == [40, 50, 60]
    img = coarse[1][0].asnumpy()
    assert img.shape == (32, 32, 3) and (img[:, :, 0] == 7).all() and (img[:, :, 1] == 0).all()
    (tmp_path / "bad").mkdir()
    np.zeros(10, np.uint8).tofile(tmp_path / "bad" / "test.bin")
    with pytest.raises(gdata.DatasetError, match="not a CIFAR binary"):
        gdata.vision.CIFAR100(root=str(tmp_path / "bad"), train=False)


def test_image_folder_lists_classes(tmp_path):
    for cls, names in {"cat": ["a.jpg", "b.png"], "dog": ["c.JPEG", "notes.txt"]}.items():
        (tmp_path / cls).mkdir()
        for n in names:
            (tmp_path / cls / n).write_bytes(b"")
    (tmp_path / "README").write_text("x")
    with pytest.warns(UserWarning):
        ds = gdata.vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["cat", "dog"]
    assert [(os.path.basename(p), y) for p, y in ds.items] == [("a.jpg", 0), ("b.png", 0),
                                                              ("c.JPEG", 1)]
    with pytest.raises(gdata.DatasetError, match="not a folder"):
        gdata.vision.ImageFolderDataset(str(tmp_path / "nothing"))


def test_record_file_dataset(tmp_path):
    recordio = pytest.importorskip("dagnet.recordio")
    idx, rec = str(tmp_path / "d.idx"), str(tmp_path / "d.rec")
    writer = recordio.MXIndexedRecordIO(idx, rec, "w")
    for i in range(4):
        writer.write_idx(i, recordio.pack((0, float(i), i, 0), b"payload%d" % i))
    writer.close()
    ds = gdata.RecordFileDataset(rec)
    assert len(ds) == 4
    header, payload = recordio.unpack(ds[2])
    assert header.label == 2 and payload == b"payload2"
    with pytest.raises(gdata.DatasetError, match="does not exist"):
        gdata.RecordFileDataset(str(tmp_path / "none.rec"))
