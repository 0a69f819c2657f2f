"""gluon.model_zoo.model_store: checksums registered by libraries (``_model_sha1``), the
file names they give (``short_hash``), verification, and fetching a missing file."""

from __future__ import annotations

import hashlib
import os
import zipfile

import pytest

from dagnet.gluon.model_zoo import model_store


@pytest.fixture
def registered(monkeypatch):
    """A registered model ``tiny_model`` whose file holds ``b"weights"``."""
    sha1 = hashlib.sha1(b"weights").hexdigest()
    monkeypatch.setitem(model_store._model_sha1, "tiny_model", sha1)
    return sha1


def test_short_hash_is_the_checksum_prefix(registered):
    assert model_store.short_hash("tiny_model") == registered[:8]
    with pytest.raises(ValueError, match="not available"):
        model_store.short_hash("never_registered")


def test_a_verified_file_is_returned(registered, tmp_path):
    path = tmp_path / f"tiny_model-{registered[:8]}.params"
    path.write_bytes(b"weights")
    assert model_store.get_model_file("tiny_model", root=str(tmp_path)) == str(path)


def test_a_missing_or_damaged_file_is_fetched_from_the_repository(registered, tmp_path,
                                                                   monkeypatch):
    name = f"tiny_model-{registered[:8]}"
    fetched = []

    def fake_download(url, path, overwrite=False, **kwargs):
        fetched.append(url)
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(name + ".params", b"weights")
        return path

    monkeypatch.setattr(model_store, "download", fake_download)
    monkeypatch.setenv("MXNET_GLUON_REPO", "https://example.org/repo")
    (tmp_path / f"{name}.params").write_bytes(b"damaged")
    path = model_store.get_model_file("tiny_model", root=str(tmp_path))
    assert open(path, "rb").read() == b"weights"
    assert fetched == [f"https://example.org/repo/gluon/models/{name}.zip"]
    assert sorted(os.listdir(tmp_path)) == [f"{name}.params"]  # no zip or folder left


def test_a_fetched_file_with_another_checksum_is_refused(registered, tmp_path, monkeypatch):
    def fake_download(url, path, overwrite=False, **kwargs):
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(f"tiny_model-{registered[:8]}.params", b"other")
        return path

    monkeypatch.setattr(model_store, "download", fake_download)
    with pytest.raises(ValueError, match="does not match its checksum"):
        model_store.get_model_file("tiny_model", root=str(tmp_path))


def test_unregistered_models_are_looked_up_by_name(tmp_path):
    (tmp_path / "plain-0123abcd.params").write_bytes(b"x")
    assert model_store.get_model_file("plain", root=str(tmp_path)).endswith(
        "plain-0123abcd.params")
    with pytest.raises(ValueError, match="does not download"):
        model_store.get_model_file("absent", root=str(tmp_path))


def test_an_offline_fetch_says_where_to_put_the_file(registered, tmp_path, monkeypatch):
    from dagnet.gluon.utils import DownloadError

    def offline(url, path, overwrite=False, **kwargs):
        raise DownloadError("no network")

    monkeypatch.setattr(model_store, "download", offline)
    with pytest.raises(DownloadError, match=f"tiny_model-{registered[:8]}.params"):
        model_store.get_model_file("tiny_model", root=str(tmp_path))
