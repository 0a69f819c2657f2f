"""gluon.utils: splitting batches, clipping by the global norm, checksums, downloads."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon import utils


def test_split_data_and_load():
    x = mx.nd.arange(12).reshape((6, 2))
    parts = utils.split_data(x, 3)
    assert [p.shape for p in parts] == [(2, 2)] * 3
    uneven = utils.split_data(mx.nd.arange(7), 3, even_split=False)
    assert [p.shape[0] for p in uneven] == [3, 2, 2]
    with pytest.raises(ValueError, match="cannot be evenly split"):
        utils.split_data(mx.nd.arange(7), 3)
    cols = utils.split_data(x, 2, batch_axis=1)
    np.testing.assert_array_equal(cols[1].asnumpy(), x.asnumpy()[:, 1:])
    loaded = utils.split_and_load(np.ones((4, 2)), [mx.cpu(0), mx.cpu(1)])
    assert [a.context for a in loaded] == [mx.cpu(0), mx.cpu(1)]


def test_clip_global_norm():
    arrays = [mx.nd.ones((2, 2)) * 3, mx.nd.ones((1,)) * 4]
    norm = utils.clip_global_norm(arrays, 1.0)
    assert norm == pytest.approx(np.sqrt(4 * 9 + 16))
    total = np.sqrt(sum((a.asnumpy() ** 2).sum() for a in arrays))
    assert total == pytest.approx(1.0, rel=1e-5)
    with pytest.warns(UserWarning, match="nan or inf"):
        utils.clip_global_norm([mx.nd.array([np.inf])], 1.0)


def test_check_sha1_and_download_errors(tmp_path):
    f = tmp_path / "x.bin"
    f.write_bytes(b"dagnet")
    assert utils.check_sha1(str(f), hashlib.sha1(b"dagnet").hexdigest())
    assert not utils.check_sha1(str(f), "0" * 40)
    assert utils.download("http://example.invalid/x.bin", path=str(f)) == str(f)  # present
    with pytest.raises(utils.DownloadError, match="could not get"):
        utils.download("http://localhost:9/missing.bin", path=str(tmp_path), retries=0)
    assert list(tmp_path.iterdir()) == [f]  # no temporary file left behind


def test_repo_urls_follow_mxnet_gluon_repo(monkeypatch):
    from dagnet.gluon.utils import _get_repo_file_url, _get_repo_url

    monkeypatch.delenv("MXNET_GLUON_REPO", raising=False)
    assert _get_repo_url() == "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://mirror.example/mx")
    assert _get_repo_url() == "http://mirror.example/mx/"
    assert _get_repo_file_url("gluon/dataset", "a.zip") == "http://mirror.example/mx/gluon/dataset/a.zip"


def test_replace_file_moves_over_and_cleans_up(tmp_path):
    from dagnet.gluon.utils import replace_file

    src, dst = tmp_path / "new", tmp_path / "old"
    src.write_text("new")
    dst.write_text("old")
    replace_file(str(src), str(dst))
    assert dst.read_text() == "new" and not src.exists()
    src.write_text("again")
    with pytest.raises(OSError, match="Please retry the download"):
        replace_file(str(src), str(tmp_path / "missing-folder" / "x"))
    assert not src.exists()
