"""mx.io.CSVIter, LibSVMIter and MNISTIter: MXNet's batches from local files."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import dagnet as mx


@pytest.fixture
def csv_files(tmp_path):
    data = tmp_path / "d.csv"
    label = tmp_path / "l.csv"
    data.write_text("".join(f"{3 * i + 1},{3 * i + 2},{3 * i + 3}\n" for i in range(5)))
    label.write_text("".join(f"{i}\n" for i in range(5)))
    return str(data), str(label)


def test_csv_round_batch_as_mxnet(csv_files):
    data, label = csv_files
    it = mx.io.CSVIter(data_csv=data, data_shape=(3,), label_csv=label, batch_size=2)
    assert it.provide_data[0].shape == (2, 3) and it.provide_label[0].shape == (2,)
    epoch = [(b.data[0].asnumpy()[:, 0].tolist(), b.label[0].asnumpy().tolist(), b.pad)
             for b in it]
    # the values MXNet 1.9.1 gives for these files
    assert epoch == [([1, 4], [0, 1], 0), ([7, 10], [2, 3], 0), ([13, 1], [4, 0], 1)]
    it.reset()
    second = [b.label[0].asnumpy().tolist() for b in it]
    assert second == [[1, 2], [3, 4]]   # the next epoch starts after the borrowed example
    it = mx.io.CSVIter(data_csv=data, data_shape=(3,), label_csv=label, batch_size=2,
                       round_batch=False)
    last = list(it)[-1]
    assert last.pad == 1 and last.label[0].asnumpy().tolist() == [4, 3]


def test_csv_dtypes_shapes_and_getdata(tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("".join(",".join(["2147483648"] * 4) + "\n" for _ in range(6)))
    it = mx.io.CSVIter(data_csv=str(path), data_shape=(2, 2), batch_size=3, dtype="int64")
    assert it.iter_next()
    data = it.getdata()
    assert data.dtype == np.int64 and data.shape == (3, 2, 2)
    assert (data.asnumpy() == 2147483648).all()
    assert (it.getlabel().asnumpy() == 0).all()
    with pytest.raises(mx.MXNetError, match="line 1 .* 4 values; the shape \\(3,\\) needs 3"):
        mx.io.CSVIter(data_csv=str(path), data_shape=(3,), batch_size=2)
    with pytest.raises(mx.MXNetError, match="dtype"):
        mx.io.CSVIter(data_csv=str(path), data_shape=(4,), batch_size=2, dtype="uint8")


def test_libsvm_dense_batches(tmp_path):
    data = tmp_path / "data.t"
    label = tmp_path / "label.t"
    data.write_text("1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n")
    label.write_text("1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n")
    it = mx.io.LibSVMIter(data_libsvm=str(data), data_shape=(3,), batch_size=3)
    first, second = list(it)
    np.testing.assert_allclose(first.data[0].asnumpy(),
                               [[0.5, 0, 1.2], [0, 0, 0], [0.6, 2.4, 1.2]])
    np.testing.assert_allclose(second.data[0].asnumpy(), [[0, 0, -1.2], [0.5, 0, 1.2], [0, 0, 0]])
    assert first.label[0].asnumpy().tolist() == [1.0, -2.0, -3.0] and second.pad == 2
    assert first.data[0].stype == "csr" and first.label[0].stype == "default"  # as MXNet
    np.testing.assert_array_equal(first.data[0].indptr.asnumpy(), [0, 2, 2, 5])
    it = mx.io.LibSVMIter(data_libsvm=str(data), data_shape=(3,), label_libsvm=str(label),
                          label_shape=(3,), batch_size=2)
    labels = next(it).label[0]
    assert labels.stype == "csr"
    np.testing.assert_allclose(labels.asnumpy(), [[0, 0, 0], [0.125, 0, 0]])
    data.write_text("1 -1:0.6\n")
    with pytest.raises(mx.MXNetError, match="line 1 .*index -1"):
        mx.io.LibSVMIter(data_libsvm=str(data), data_shape=(3,), batch_size=1)


def _write_idx(path, array):
    header = struct.pack(">HBB", 0, 8, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    path.write_bytes(header + array.astype(np.uint8).tobytes())


def test_mnist_iter_reads_idx_files(tmp_path):
    images = np.random.RandomState(0).randint(0, 256, (25, 28, 28))
    labels = np.arange(25) % 10
    _write_idx(tmp_path / "img", images)
    _write_idx(tmp_path / "lab", labels)
    it = mx.io.MNISTIter(image=str(tmp_path / "img"), label=str(tmp_path / "lab"),
                         batch_size=10, shuffle=False)
    batches = list(it)
    assert len(batches) == 2  # the partial last batch is dropped
    np.testing.assert_allclose(batches[0].data[0].asnumpy(), images[:10, None] / 255.0,
                               rtol=1e-6)
    assert batches[1].label[0].asnumpy().tolist() == labels[10:20].tolist()
    flat = mx.io.MNISTIter(image=str(tmp_path / "img"), label=str(tmp_path / "lab"),
                           batch_size=5, flat=True, seed=3)
    flat.iter_next()
    first = flat.getlabel().asnumpy()
    assert flat.getdata().shape == (5, 784)
    flat.reset()
    flat.iter_next()
    np.testing.assert_array_equal(flat.getlabel().asnumpy(), first)  # shuffled once, as MXNet
    (tmp_path / "bad").write_bytes(b"\0\0\x08\x03" + b"\0" * 4)
    with pytest.raises(mx.MXNetError, match="bad"):
        mx.io.MNISTIter(image=str(tmp_path / "bad"), label=str(tmp_path / "lab"))
