"""dagnet.recordio: the dmlc-core RecordIO bytes, indexes, headers, and bad files."""

from __future__ import annotations

import os
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest

import dagnet as mx
from dagnet.recordio import IRHeader, MXIndexedRecordIO, MXRecordIO, RecordIOError

FIXTURES = Path(__file__).parent / "fixtures"
MAGIC = struct.pack("<I", 0xCED7230A)


def _chunks(data: bytes) -> list[tuple[int, int]]:
    """(cflag, length) of each chunk in a RecordIO byte string."""
    out, offset = [], 0
    while offset < len(data):
        magic, lrec = struct.unpack_from("<II", data, offset)
        assert magic == 0xCED7230A
        length = lrec & ((1 << 29) - 1)
        out.append((lrec >> 29, length))
        offset += 8 + length + (-length % 4)
    return out


def test_sequential_round_trip(tmp_path):
    path = tmp_path / "a.rec"
    records = [bytes([i]) * i for i in range(40)]
    with MXRecordIO(path, "w") as writer:
        for record in records:
            writer.write(record)
    reader = MXRecordIO(path, "r")
    assert [reader.read() for _ in records] == records
    assert reader.read() is None
    reader.reset()
    assert reader.read() == records[0]


def test_layout_is_dmlc_core_s(tmp_path):
    path = tmp_path / "a.rec"
    with MXRecordIO(path, "w") as writer:
        writer.write(b"abcde")
    data = path.read_bytes()
    assert data == MAGIC + struct.pack("<I", 5) + b"abcde\0\0\0"


@pytest.mark.parametrize("payload, flags", [
    (MAGIC, [(1, 0), (3, 0)]),
    (b"abcd" + MAGIC + b"efgh" + MAGIC, [(1, 4), (2, 4), (3, 0)]),
    (b"ab" + MAGIC + b"cd", [(0, 8)]),          # unaligned: not split
    (b"abcd" + MAGIC + b"x", [(1, 4), (3, 1)]),
])
def test_records_holding_the_magic_number_are_split(tmp_path, payload, flags):
    path = tmp_path / "a.rec"
    with MXRecordIO(path, "w") as writer:
        writer.write(payload)
        writer.write(b"after")
    assert _chunks(path.read_bytes())[:-1] == flags
    reader = MXRecordIO(path, "r")
    assert reader.read() == payload
    assert reader.read() == b"after"


def test_indexed_round_trip_and_index_file(tmp_path):
    rec, idx = tmp_path / "a.rec", tmp_path / "a.idx"
    writer = MXIndexedRecordIO(idx, rec, "w")
    for i in range(10):
        writer.write_idx(i, b"record_%d" % i)
    writer.close()
    lines = idx.read_text().splitlines()
    assert lines[:2] == ["0\t0", "1\t16"]
    reader = MXIndexedRecordIO(idx, rec, "r")
    assert reader.keys == list(range(10))
    for key in [7, 2, 9, 0]:
        assert reader.read_idx(key) == b"record_%d" % key


def test_pack_unpack_single_and_multi_label():
    header, payload = mx.recordio.unpack(mx.recordio.pack(IRHeader(0, 3.5, 7, 8), b"xyz"))
    assert header == IRHeader(0, 3.5, 7, 8) and payload == b"xyz"
    labels = np.arange(5, dtype=np.float32) / 3
    header, payload = mx.recordio.unpack(mx.recordio.pack((0, labels, 1, 2), b"img"))
    assert header.flag == 5 and payload == b"img"
    np.testing.assert_array_equal(header.label, labels)


def test_pack_img_round_trip_png_is_exact():
    image = np.random.RandomState(0).randint(0, 256, (9, 7, 3)).astype(np.uint8)
    packed = mx.recordio.pack_img(IRHeader(0, 1.0, 3, 0), image, quality=3, img_fmt=".png")
    header, decoded = mx.recordio.unpack_img(packed)
    assert header.id == 3
    np.testing.assert_array_equal(decoded, image)       # BGR in, BGR out, as with OpenCV
    gray = mx.recordio.unpack_img(packed, iscolor=0)[1]
    assert gray.shape == (9, 7)


def test_files_written_by_mxnet_read_identically():
    expected = np.load(FIXTURES / "mxnet_small_expected.npz")
    reader = MXIndexedRecordIO(FIXTURES / "mxnet_small.idx", FIXTURES / "mxnet_small.rec", "r")
    assert reader.keys == list(range(13))
    for i in range(8):
        header, payload = mx.recordio.unpack(reader.read_idx(i))
        np.testing.assert_array_equal(np.asarray(header.label, np.float32),
                                      expected[f"label_{i}"])
        assert header.id == int(expected[f"id_{i}"])
        np.testing.assert_array_equal(mx.image.imdecode(payload).asnumpy(),
                                      expected[f"pixels_{i}"])
    for j in range(8, 13):
        assert reader.read_idx(j) == expected[f"raw_{j}"].tobytes()


def test_files_written_here_match_mxnet_s_bytes(tmp_path):
    source = MXIndexedRecordIO(FIXTURES / "mxnet_small.idx", FIXTURES / "mxnet_small.rec", "r")
    writer = MXIndexedRecordIO(tmp_path / "b.idx", tmp_path / "b.rec", "w")
    for key in source.keys:
        writer.write_idx(key, source.read_idx(key))
    writer.close()
    assert (tmp_path / "b.rec").read_bytes() == (FIXTURES / "mxnet_small.rec").read_bytes()
    assert (tmp_path / "b.idx").read_bytes() == (FIXTURES / "mxnet_small.idx").read_bytes()


def test_record_offsets_match_the_index():
    offsets = mx.recordio.record_offsets(FIXTURES / "mxnet_small.rec")
    reader = MXIndexedRecordIO(FIXTURES / "mxnet_small.idx", FIXTURES / "mxnet_small.rec", "r")
    assert offsets == [reader.idx[k] for k in reader.keys]


def test_truncated_file_names_file_offset_and_record(tmp_path):
    data = (FIXTURES / "mxnet_small.rec").read_bytes()
    path = tmp_path / "cut.rec"
    path.write_bytes(data[:len(data) - 10])
    reader = MXRecordIO(path, "r")
    with pytest.raises(RecordIOError, match=r"cut\.rec.*truncated.*record 12"):
        while reader.read() is not None:
            pass
    with pytest.raises(mx.MXNetError, match="truncated"):
        mx.recordio.record_offsets(path)


def test_corrupt_file_names_the_record(tmp_path):
    path = tmp_path / "bad.rec"
    with MXRecordIO(path, "w") as writer:
        writer.write(b"good")
        writer.write(b"next")
    data = bytearray(path.read_bytes())
    data[12] ^= 0xFF  # the second record's magic number
    path.write_bytes(bytes(data))
    reader = MXRecordIO(path, "r")
    assert reader.read() == b"good"
    with pytest.raises(RecordIOError, match=r"corrupt at byte 12 \(record 1\)"):
        reader.read()


def test_missing_index_and_misuse_raise_clearly(tmp_path):
    with MXRecordIO(tmp_path / "a.rec", "w") as writer:
        writer.write(b"x")
        with pytest.raises(RecordIOError, match="encode text"):
            writer.write("text")
        with pytest.raises(RecordIOError, match="flag 'r'"):
            writer.read()
    with pytest.raises(RecordIOError, match="index file .*does not exist"):
        MXIndexedRecordIO(tmp_path / "a.idx", tmp_path / "a.rec", "r")
    with pytest.raises(RecordIOError, match="cannot open"):
        MXRecordIO(tmp_path / "missing.rec", "r")
    with pytest.raises(RecordIOError, match="invalid flag"):
        MXRecordIO(tmp_path / "a.rec", "a")


def test_pickling_reopens_at_the_same_place(tmp_path):
    path = tmp_path / "a.rec"
    with MXRecordIO(path, "w") as writer:
        for i in range(3):
            writer.write(b"%d" % i)
    reader = MXRecordIO(path, "r")
    reader.read()
    clone = pickle.loads(pickle.dumps(reader))
    assert clone.read() == b"1"
    assert os.fspath(clone.uri) == os.fspath(path)
