"""Where pretrained parameter files are looked for: ``root`` (default
``$MXNET_HOME/models``, else ``~/.mxnet/models``) holding ``<name>-<anything>.params`` or
``<name>.params`` as MXNet's model store saves them.  dagnet bundles no weights.

Libraries written for MXNet (GluonNLP, for one) register the SHA-1 checksums of their own
pretrained files in :data:`_model_sha1` (``name -> sha1``), as they do with MXNet's store.
A registered model is ``<name>-<first 8 hex digits>.params``: it is checked against its
checksum and, when it is missing or differs, downloaded from the repository
(``MXNET_GLUON_REPO``) as MXNet does; without a network the error says where to put it."""

from __future__ import annotations

import glob
import logging
import os
import shutil
import tempfile
import uuid
import zipfile

from .._errors import GluonValueError
from ..utils import DownloadError, check_sha1, download, replace_file

__all__ = ["get_model_file", "default_root", "purge", "short_hash"]

#: SHA-1 checksums of the pretrained files libraries register (``name -> sha1 hex``).
_model_sha1: dict[str, str] = {}

_URL_FORMAT = "{repo_url}gluon/models/{file_name}.zip"
_APACHE_REPO = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


def _repo_url() -> str:
    """``MXNET_GLUON_REPO`` (MXNet's variable) or Apache MXNet's repository, ending in ``/``."""
    url = os.environ.get("MXNET_GLUON_REPO", _APACHE_REPO)
    return url if url.endswith("/") else url + "/"


def default_root() -> str:
    """The folder pretrained parameters are looked for in."""
    home = os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet"))
    return os.path.join(os.path.expanduser(home), "models")


def short_hash(name: str) -> str:
    """The first 8 hex digits of the registered checksum of model ``name`` (the suffix of
    its file name); ``ValueError`` when no checksum is registered for it."""
    if name not in _model_sha1:
        raise GluonValueError(f"Pretrained model for {name} is not available: no checksum "
                              f"is registered for it in model_store._model_sha1")
    return _model_sha1[name][:8]


def get_model_file(name: str, root: str | None = None) -> str:
    """The path of the pretrained parameters of model ``name`` under ``root``.

    A model with a registered checksum is verified (and downloaded when missing or
    damaged); any other is looked up by name alone, with an error saying where to put the
    file when there is none."""
    root = os.path.expanduser(root or default_root())
    if name in _model_sha1:
        return _registered_model_file(name, root)
    found = sorted(glob.glob(os.path.join(root, f"{name}-*.params")))
    exact = os.path.join(root, f"{name}.params")
    if os.path.exists(exact):
        return exact
    if found:
        return found[-1]
    raise GluonValueError(f"no pretrained parameters for model {name!r} in {root}: dagnet does "
                          f"not download model weights; copy {name}-<hash>.params from MXNet's "
                          f"model store into that folder (or pass root=), or create the model "
                          f"with pretrained=False and load_parameters() your own file")


def _registered_model_file(name: str, root: str) -> str:
    """``root/<name>-<short hash>.params`` checked against its checksum, fetched from the
    repository's zip when missing or different."""
    file_name = f"{name}-{short_hash(name)}"
    file_path = os.path.join(root, file_name + ".params")
    sha1_hash = _model_sha1[name]
    if os.path.exists(file_path):
        if check_sha1(file_path, sha1_hash):
            return file_path
        logging.warning("Mismatch in the content of model file %s detected. Downloading "
                        "again.", file_path)
    else:
        logging.info("Model file not found. Downloading to %s.", file_path)
    os.makedirs(root, exist_ok=True)
    # a name of its own for the zip, so that processes fetching at once never mix
    zip_path = os.path.join(root, f"{file_name}.zip{uuid.uuid4()}")
    url = _URL_FORMAT.format(repo_url=_repo_url(), file_name=file_name)
    try:
        download(url, path=zip_path, overwrite=True)
    except DownloadError as error:
        raise DownloadError(f"pretrained model {name!r}: could not download {url} ({error}); "
                            f"without a network, put {file_name}.params (SHA-1 {sha1_hash}) "
                            f"into {root}") from error
    try:
        with zipfile.ZipFile(zip_path) as archive:
            unpacked = tempfile.mkdtemp(dir=root)
            try:
                archive.extractall(unpacked)
                replace_file(os.path.join(unpacked, file_name + ".params"), file_path)
            finally:
                shutil.rmtree(unpacked, ignore_errors=True)
    finally:
        os.remove(zip_path)
    if not check_sha1(file_path, sha1_hash):
        raise GluonValueError(f"the downloaded {file_path} does not match its checksum "
                              f"{sha1_hash}; download it again")
    return file_path


def purge(root: str | None = None) -> None:
    """Delete every ``.params`` file under ``root``."""
    root = os.path.expanduser(root or default_root())
    for path in glob.glob(os.path.join(root, "*.params")):
        os.remove(path)
