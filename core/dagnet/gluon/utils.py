"""Helpers of ``mx.gluon.utils``: splitting a batch over devices, clipping gradients by
their global norm, file checksums and downloads, and the hook handles of blocks."""

from __future__ import annotations

import hashlib
import os
import urllib.request
import uuid
import warnings
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .. import ndarray
from .. import numpy as _mx_np
from ..ndarray import NDArray
from ._errors import GluonValueError

__all__ = ["split_data", "split_and_load", "clip_global_norm", "check_sha1", "download",
           "replace_file", "shape_is_known", "HookHandle", "DownloadError"]


class DownloadError(GluonValueError, OSError):
    """A file could not be downloaded (no network, a bad URL, a checksum mismatch)."""


def split_data(data: NDArray, num_slice: int, batch_axis: int = 0,
               even_split: bool = True) -> list[NDArray]:
    """``data`` cut into ``num_slice`` pieces along ``batch_axis``; with ``even_split`` the
    size along that axis must be a multiple of ``num_slice``, otherwise the first pieces get
    one more element each."""
    size = data.shape[batch_axis]
    if even_split and size % num_slice != 0:
        raise GluonValueError(
            f"data with shape {data.shape} cannot be evenly split into {num_slice} slices "
            f"along axis {batch_axis}. Use a batch size that's multiple of {num_slice} or set "
            f"even_split=False to allow uneven partitioning of data.")
    if num_slice > size and not even_split:
        raise GluonValueError(
            f"split_data: cannot split {size} element(s) along axis {batch_axis} into "
            f"{num_slice} non-empty slices; use fewer slices")
    each, extras = divmod(size, num_slice)
    bounds = np.cumsum([0] + [each + 1] * extras + [each] * (num_slice - extras)).tolist()
    if batch_axis == 0 or isinstance(data, _mx_np.ndarray):  # np arrays slice to np arrays
        lead = (slice(None),) * batch_axis
        return [data[lead + (slice(bounds[i], bounds[i + 1]),)] for i in range(num_slice)]
    return [ndarray.slice_axis(data, axis=batch_axis, begin=bounds[i], end=bounds[i + 1])
            for i in range(num_slice)]


def split_and_load(data: Any, ctx_list: Sequence[Any], batch_axis: int = 0,
                   even_split: bool = True) -> list[NDArray]:
    """``data`` (an NDArray or anything ``mx.nd.array`` takes) split along ``batch_axis``
    into one piece per context of ``ctx_list``, each piece copied to its context."""
    if not isinstance(data, NDArray):
        data = ndarray.array(data, ctx=ctx_list[0])
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    slices = split_data(data, len(ctx_list), batch_axis, even_split)
    return [piece.as_in_context(ctx) for piece, ctx in zip(slices, ctx_list)]


def _squared_norm(array: NDArray) -> NDArray:
    """The sum of the squares of ``array``'s elements (of a sparse array's stored values)."""
    if array.stype == "default":
        flat = array.reshape((-1,))
        return ndarray.dot(flat, flat)
    return ndarray.square(ndarray.norm(array)).reshape((1,))


def clip_global_norm(arrays: Sequence[NDArray], max_norm: float,
                     check_isfinite: bool = True) -> Any:
    """Scale ``arrays`` in place so that the 2-norm of all of them together is at most
    ``max_norm``; returns that norm before scaling (a float, or with ``check_isfinite=False``
    an NDArray, so that nothing waits for it).  A non-finite norm warns."""
    if len(arrays) == 0:
        raise GluonValueError("clip_global_norm: arrays is empty; pass the gradients to clip")
    ctx = arrays[0].context
    squares = [_squared_norm(a).as_in_context(ctx) for a in arrays]
    total_norm = ndarray.sqrt(ndarray.add_n(*squares))
    if check_isfinite and not np.isfinite(total_norm.asscalar()):
        warnings.warn(UserWarning("nan or inf is detected. Clipping results will be undefined."),
                      stacklevel=2)
    scale = max_norm / (total_norm + 1e-8)
    scale = ndarray.min(ndarray.concat(scale, ndarray.ones(1, ctx=ctx), dim=0))
    for array in arrays:
        array *= scale.as_in_context(array.context)
    return total_norm.asscalar() if check_isfinite else total_norm


def check_sha1(filename: str, sha1_hash: str) -> bool:
    """Whether the SHA-1 of the file's contents is ``sha1_hash`` (hex digits)."""
    digest = hashlib.sha1()
    with open(filename, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest() == sha1_hash


def download(url: str, path: str | None = None, overwrite: bool = False,
             sha1_hash: str | None = None, retries: int = 5, verify_ssl: bool = True) -> str:
    """Download ``url`` to ``path`` (a file, or a folder to put it in; default: the URL's
    last part in the working folder) unless the file is there already (and matches
    ``sha1_hash``); returns the file name.  Retries ``retries`` times, then raises
    :class:`DownloadError` saying why (for example that there is no network)."""
    if path is None:
        fname = url.split("/")[-1]
        if not fname:
            raise DownloadError(f"download: cannot make a file name from the URL {url!r}; "
                                f"pass path=")
    else:
        path = os.path.expanduser(path)
        fname = os.path.join(path, url.split("/")[-1]) if os.path.isdir(path) else path
    if retries < 0:
        raise GluonValueError(f"Number of retries should be at least 0, currently it's "
                              f"{retries}")
    if not verify_ssl:
        warnings.warn("Unverified HTTPS request is being made (verify_ssl=False). Adding "
                      "certificate verification is strongly advised.", stacklevel=2)
    if not (overwrite or not os.path.exists(fname)
            or (sha1_hash and not check_sha1(fname, sha1_hash))):
        return fname
    folder = os.path.dirname(os.path.abspath(fname))
    os.makedirs(folder, exist_ok=True)
    last_error: Exception | None = None
    for _ in range(retries + 1):
        # a temporary name of its own, so that processes downloading at once never mix
        temporary = f"{fname}.{uuid.uuid4()}"
        try:
            with open(temporary, "wb") as f:
                for block in _fetch(url, verify_ssl):
                    f.write(block)
            replace_file(temporary, fname)
        except Exception as err:  # network errors differ by client; all are retried
            last_error = err
            if os.path.exists(temporary):
                os.remove(temporary)
            continue
        if sha1_hash and not check_sha1(fname, sha1_hash):
            raise DownloadError(f"File {fname} is downloaded but the content hash does not "
                                f"match. The repo may be outdated or download may be "
                                f"incomplete.")
        return fname
    raise DownloadError(f"download: could not get {url} after {retries + 1} attempt(s): "
                        f"{last_error!r}; check the network (this machine may be offline) or "
                        f"put the file at {fname} yourself") from last_error


def replace_file(src: str, dst: str) -> None:
    """Move ``src`` over ``dst`` in one step (what a finished download does); if that
    fails, ``src`` is removed and :class:`OSError` says to retry."""
    try:
        os.replace(src, dst)
    except OSError as err:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError(f"Moving downloaded temp file - {src}, to {dst} failed. Please retry "
                      f"the download.") from err


_DEFAULT_REPO = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


def _get_repo_url() -> str:
    """Where pretrained files are downloaded from: ``MXNET_GLUON_REPO`` if set (MXNet's
    variable), else Apache MXNet's repository; always ending in ``/``."""
    url = os.environ.get("MXNET_GLUON_REPO", _DEFAULT_REPO)
    return url if url.endswith("/") else url + "/"


def _get_repo_file_url(namespace: str, filename: str) -> str:
    """The download URL of ``filename`` in the repository folder ``namespace``."""
    return f"{_get_repo_url()}{namespace}/{filename}"


def _fetch(url: str, verify_ssl: bool) -> Iterator[bytes]:
    """The body of ``url`` in blocks: through ``requests`` when it is installed (as MXNet
    downloads), else through the standard library."""
    try:
        import requests
    except ImportError:
        requests = None
    if requests is not None:
        response = requests.get(url, stream=True, verify=verify_ssl)
        if response.status_code != 200:
            raise DownloadError(f"Failed downloading url {url}: HTTP status "
                                f"{response.status_code}")
        yield from (block for block in response.iter_content(chunk_size=1 << 16) if block)
        return
    context = None
    if not verify_ssl:
        import ssl

        context = ssl._create_unverified_context()
    with urllib.request.urlopen(url, context=context) as response:
        yield from iter(lambda: response.read(1 << 16), b"")


def shape_is_known(shape: Any) -> bool:
    """Whether every dimension of ``shape`` is known (``None`` and 0 dimensions are not)."""
    if shape is None:
        return False
    return all(int(d) > 0 for d in shape) if len(shape) else True


class HookHandle:
    """What ``register_forward_hook`` returns: ``detach()`` removes the hook (also usable as
    ``with handle:``)."""

    def __init__(self) -> None:
        self._hooks_dict_ref: Any = None
        self._id: int | None = None

    def attach(self, hooks_dict: dict, hook: Any) -> None:
        """Add ``hook`` to ``hooks_dict`` (a dict the handle refers to weakly)."""
        if self._hooks_dict_ref is not None:
            raise GluonValueError("The same handle cannot be attached twice.")
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self) -> None:
        """Remove the hook (again is harmless)."""
        hooks_dict = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks_dict is not None and self._id in hooks_dict:
            del hooks_dict[self._id]

    def __getstate__(self) -> tuple:
        return (self._hooks_dict_ref() if self._hooks_dict_ref is not None else None, self._id)

    def __setstate__(self, state: tuple) -> None:
        if state[0] is None:
            self._hooks_dict_ref = weakref.ref(dict())
        else:
            self._hooks_dict_ref = weakref.ref(state[0])
        self._id = state[1]

    def __enter__(self) -> HookHandle:
        return self

    def __exit__(self, *args: Any) -> None:
        self.detach()


def indent(text: str, spaces: int) -> str:
    """``text`` with every line but the first indented by ``spaces`` (for nested reprs)."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return "\n".join([lines[0]] + [" " * spaces + line for line in lines[1:]])


def brief_print_list(items: Any, limit: int = 7) -> str:
    """The items quoted and comma-separated, the middle elided past ``limit``."""
    items = list(items)
    if len(items) > limit:
        return (brief_print_list(items[:limit // 2], limit) + ", ..., "
                + brief_print_list(items[-limit // 2:], limit))
    return ", ".join(f"'{item}'" for item in items)
