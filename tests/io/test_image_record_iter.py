"""mx.io.ImageRecordIter: MXNet's pixels and labels, sharding, prefetching, bad input."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import dagnet as mx
from dagnet.recordio import IRHeader, MXIndexedRecordIO, pack

FIXTURES = Path(__file__).parents[1] / "recordio" / "fixtures"


def _png(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(array).save(out, format="PNG")
    return out.getvalue()


def _write_rec(tmp_path: Path, n: int, labels=None, size=(20, 24), bad=()) -> tuple[str, str]:
    rng = np.random.RandomState(3)
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    writer = MXIndexedRecordIO(idx, rec, "w")
    for i in range(n):
        label = float(i) if labels is None else labels[i]
        payload = b"broken" if i in bad else _png(
            rng.randint(0, 256, size + (3,)).astype(np.uint8))
        writer.write_idx(i, pack(IRHeader(0, label, i, 0), payload))
    writer.close()
    return rec, idx


def _workers() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("dagnet-imagerecord")}


def test_reads_mxnet_s_file_as_mxnet_does():
    expected = np.load(FIXTURES / "mxnet_small_expected.npz")
    it = mx.io.ImageRecordIter(path_imgrec=str(FIXTURES / "mxnet_single.rec"),
                               data_shape=(3, 16, 16), batch_size=3, mean_r=5.0, std_b=2.0,
                               preprocess_threads=2)
    assert it.provide_data[0].shape == (3, 3, 16, 16)
    assert it.provide_label[0].shape == (3,)
    batches = list(it)
    assert len(batches) == 2
    for k, batch in enumerate(batches):
        np.testing.assert_array_equal(batch.data[0].asnumpy(), expected[f"iter_data_{k}"])
        np.testing.assert_array_equal(batch.label[0].asnumpy(), expected[f"iter_label_{k}"])
        assert batch.pad == int(expected[f"iter_pad_{k}"])
    it.close()


def test_crop_mirror_normalize_pixels(tmp_path):
    rec, _ = _write_rec(tmp_path, 4)
    raw = mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 12, 12), batch_size=4)
    pixels = next(raw).data[0].asnumpy()
    assert pixels.dtype == np.uint8
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 12, 12), batch_size=4,
                               mirror=True, mean_r=1, mean_g=2, mean_b=3, std_r=2, std_g=4,
                               std_b=8, scale=0.5)
    got = it.next().data[0].asnumpy()
    mean = np.array([1, 2, 3], np.float32).reshape(3, 1, 1)
    std = np.array([2, 4, 8], np.float32).reshape(3, 1, 1)
    np.testing.assert_allclose(got, (pixels[:, :, :, ::-1] - mean) / std * 0.5, rtol=1e-6)


def test_seeded_augmentation_is_reproducible_and_threads_do_not_matter(tmp_path):
    rec, idx = _write_rec(tmp_path, 10)

    def run(threads, seed_aug):
        it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 10, 10),
                                   batch_size=4, rand_crop=True, rand_mirror=True,
                                   shuffle=True, seed=5, seed_aug=seed_aug,
                                   preprocess_threads=threads)
        return [(b.data[0].asnumpy(), b.label[0].asnumpy()) for b in it]

    one, two = run(1, 7), run(3, 7)
    for (d1, l1), (d2, l2) in zip(one, two):
        np.testing.assert_array_equal(d1, d2)
        np.testing.assert_array_equal(l1, l2)
    other = run(2, 8)
    assert any(not np.array_equal(a[0], b[0]) for a, b in zip(one, other))


def test_epochs_reshuffle_and_cover_every_record(tmp_path):
    rec, idx = _write_rec(tmp_path, 9)
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 8, 8),
                               batch_size=3, shuffle=True, seed=1)
    epochs = []
    for _ in range(2):
        epochs.append([lab for b in it for lab in b.label[0].asnumpy().tolist()])
        it.reset()
    assert sorted(epochs[0]) == sorted(epochs[1]) == [float(i) for i in range(9)]
    assert epochs[0] != epochs[1]


@pytest.mark.parametrize("use_index", [True, False])
def test_parts_are_disjoint_and_complete(tmp_path, use_index):
    rec, idx = _write_rec(tmp_path, 11)
    seen = []
    for part in range(3):
        it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx if use_index else "",
                                   data_shape=(3, 8, 8), batch_size=2, num_parts=3,
                                   part_index=part, round_batch=False)
        labels = []
        for batch in it:
            kept = batch.label[0].asnumpy()[:2 - batch.pad]
            labels.extend(kept.tolist())
        seen.append(labels)
    flat = [x for part in seen for x in part]
    assert sorted(flat) == [float(i) for i in range(11)]
    assert len(flat) == len(set(flat))


def test_round_batch_pads_from_the_start(tmp_path):
    rec, _ = _write_rec(tmp_path, 5)
    batches = list(mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=3))
    assert [b.pad for b in batches] == [0, 1]
    assert batches[1].label[0].asnumpy().tolist() == [3.0, 4.0, 0.0]
    plain = list(mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=3,
                                       round_batch=False))
    assert plain[1].pad == 1 and not plain[1].data[0].asnumpy()[2].any()


def test_multi_label_records_and_width_mismatch(tmp_path):
    labels = [[float(i), float(i) + 0.5] for i in range(4)]
    rec, _ = _write_rec(tmp_path, 4, labels=labels)
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                               label_width=2)
    assert it.provide_label[0].shape == (2, 2)
    np.testing.assert_array_equal(next(it).label[0].asnumpy(), np.array(labels[:2], np.float32))
    it.close()
    before = _workers()
    bad = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2)
    with pytest.raises(mx.MXNetError, match=r"record 0 of .*d\.rec.*2 labels.*label_width=1"):
        next(bad)
    assert _workers() <= before


def test_undecodable_images_are_skipped_and_counted(tmp_path):
    rec, _ = _write_rec(tmp_path, 6, bad={2})
    # the decoding threads start with the iterator: make it inside the block that
    # catches their warning
    with pytest.warns(UserWarning, match=r"skipped record 2 of .*d\.rec"):
        it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=3)
        batches = list(it)
    assert it.skipped_records == 1
    assert batches[0].label[0].asnumpy().tolist() == [0.0, 1.0, 3.0]


def test_truncated_file_raises_naming_file_and_record(tmp_path):
    rec, idx = _write_rec(tmp_path, 6)
    data = Path(rec).read_bytes()
    Path(rec).write_bytes(data[:len(data) - 40])
    before = _workers()
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 8, 8),
                               batch_size=2, preprocess_threads=2)
    with pytest.raises(mx.MXNetError, match=r"d\.rec.*truncated.*record 5"):
        list(it)
    assert _workers() <= before
    with pytest.raises(mx.MXNetError, match="truncated"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2)


def test_bad_parameters_raise(tmp_path):
    rec, _ = _write_rec(tmp_path, 2)
    with pytest.raises(mx.MXNetError, match="path_imgidx .*does not exist"):
        mx.io.ImageRecordIter(path_imgrec=rec, path_imgidx=str(tmp_path / "no.idx"),
                              data_shape=(3, 8, 8), batch_size=2)
    with pytest.raises(mx.MXNetError, match="data_shape"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(5, 8, 8), batch_size=2)
    with pytest.raises(mx.MXNetError, match="random_resized_crop"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                              random_resized_crop=True)
    with pytest.raises(mx.MXNetError, match="part_index"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                              num_parts=2, part_index=2)
    with pytest.warns(UserWarning, match="and_mirror"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                              and_mirror=False).close()


def test_small_images_are_scaled_up_and_mean_image_is_made(tmp_path):
    rec, _ = _write_rec(tmp_path, 3, size=(6, 8))
    mean_path = str(tmp_path / "mean.bin")
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 10, 10), batch_size=3,
                               mean_img=mean_path)
    assert Path(mean_path).exists()
    data = next(it).data[0].asnumpy()
    assert data.shape == (3, 3, 10, 10)
    np.testing.assert_allclose(data.mean(axis=0), 0, atol=1e-3)
    again = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 10, 10), batch_size=3,
                                  mean_img=mean_path)
    np.testing.assert_allclose(next(again).data[0].asnumpy(), data, atol=1e-4)


def test_close_leaves_no_thread_behind(tmp_path):
    rec, _ = _write_rec(tmp_path, 12)
    before = _workers()
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                               preprocess_threads=3, prefetch_buffer=1)
    next(it)
    assert _workers() - before
    it.close()
    assert _workers() <= before
    dropped = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                                    preprocess_threads=2, prefetch_buffer=1)
    next(dropped)
    del dropped  # no close(): collecting the iterator stops its threads
    assert _workers() <= before


def test_image_list_labels_override_the_records(tmp_path):
    rec, _ = _write_rec(tmp_path, 3)
    lst = tmp_path / "d.lst"
    lst.write_text("".join(f"{i}\t{10 + i}\t{20 + i}\tx{i}.png\n" for i in range(3)))
    it = mx.io.ImageRecordIter(path_imgrec=rec, path_imglist=str(lst), label_width=2,
                               data_shape=(3, 8, 8), batch_size=3)
    np.testing.assert_array_equal(next(it).label[0].asnumpy(),
                                  [[10, 20], [11, 21], [12, 22]])
    with pytest.raises(mx.MXNetError, match="line 1 .* 2 labels but label_width=1"):
        mx.io.ImageRecordIter(path_imgrec=rec, path_imglist=str(lst), data_shape=(3, 8, 8),
                              batch_size=3)


@pytest.mark.slow
def test_dagnet_launch_workers_read_disjoint_parts_that_cover_the_file(tmp_path):
    pytest.importorskip("distributed", reason="dagnet launch runs on Dask distributed")
    import os
    import subprocess
    import sys

    rec, _ = _write_rec(tmp_path, 13)
    job = Path(__file__).parent / "shard_job.py"
    result = subprocess.run([sys.executable, "-m", "dagnet.cli", "launch", "-n", "2",
                             sys.executable, str(job), rec, str(tmp_path)],
                            capture_output=True, text=True, timeout=180, env=dict(os.environ))
    assert result.returncode == 0, result.stdout + result.stderr
    parts = [[int(v) for v in (tmp_path / f"rank{k}.txt").read_text().split()]
             for k in range(2)]
    assert sorted(parts[0] + parts[1]) == list(range(13))
    assert not set(parts[0]) & set(parts[1]) and len(parts[0]) in (6, 7)


def test_affine_rotation_and_random_contrast(tmp_path):
    rec, _ = _write_rec(tmp_path, 2, size=(8, 8))
    plain = next(mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 8, 8),
                                            batch_size=2)).data[0].asnumpy()
    turned = next(mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 8, 8),
                                             batch_size=2, rotate=90,
                                             fill_value=0)).data[0].asnumpy()
    # MXNet's matrix for 90 degrees: output (x, y) reads input (8 - y, x), so the
    # first row falls outside the input and takes fill_value (cos 90 is 6e-17, not 0, so
    # the bilinear weights may round one level off)
    for y in range(1, 8):
        for x in range(8):
            np.testing.assert_allclose(turned[:, :, y, x].astype(int),
                                       plain[:, :, x, 8 - y].astype(int), atol=1)
    assert not turned[:, :, 0, :].any()
    base = dict(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, mean_r=100, mean_g=100,
                mean_b=100)
    normal = next(mx.io.ImageRecordIter(**base)).data[0].asnumpy()
    jittered = next(mx.io.ImageRecordIter(max_random_contrast=0.5, max_random_illumination=3,
                                          **base)).data[0].asnumpy()
    for k in range(2):  # an affine change of the normalized values per image
        slope, offset = np.polyfit(normal[k].ravel(), jittered[k].ravel(), 1)
        assert 0.5 <= slope <= 1.5 and abs(offset) <= 3 + 1e-3
        np.testing.assert_allclose(jittered[k], normal[k] * slope + offset, atol=1e-3)
    scaled = mx.io.ImageRecordIter(max_random_scale=1.5, min_random_scale=1.2,
                                   max_shear_ratio=0.2, max_rotate_angle=20, pca_noise=0.1,
                                   rand_crop=True, **base)
    assert next(scaled).data[0].shape == (2, 3, 8, 8)


def test_hls_lightness_shift_moves_gray_pixels_evenly(tmp_path):
    rec, idx = str(tmp_path / "g.rec"), str(tmp_path / "g.idx")
    writer = MXIndexedRecordIO(idx, rec, "w")
    gray = np.repeat(np.arange(64, 128, dtype=np.uint8).reshape(8, 8, 1), 3, axis=2)
    for i in range(4):
        writer.write_idx(i, pack(IRHeader(0, float(i), i, 0), _png(gray)))
    writer.close()
    batch = next(mx.io.ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 8, 8),
                                            batch_size=4, random_l=40, seed_aug=3))
    source = gray.transpose(2, 0, 1).astype(int)
    shifts = set()
    for image in batch.data[0].asnumpy().astype(int):
        delta = image - source
        assert (delta == delta.flat[0]).all() and abs(delta.flat[0]) <= 40  # gray stays gray
        shifts.add(int(delta.flat[0]))
    assert len(shifts) > 1


def test_output_dtype(tmp_path):
    rec, _ = _write_rec(tmp_path, 2)
    it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                               dtype="float16")
    assert it.provide_data[0].dtype == np.float16
    assert next(it).data[0].dtype == np.float16
    with pytest.raises(mx.MXNetError, match="float16, float32 or float64"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                              dtype="int32")
