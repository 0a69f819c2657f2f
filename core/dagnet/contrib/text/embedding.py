"""Token embeddings: vectors for the tokens of a vocabulary, read from a pre-trained
embedding file (:class:`CustomEmbedding` for one of your own; :class:`GloVe` and
:class:`FastText` download theirs), or concatenated from several embeddings
(:class:`CompositeEmbedding`).

An embedding is a :class:`~.vocab.Vocabulary` whose ``idx_to_vec`` holds one row per
indexed token; row 0 is the unknown token's vector: the file's vector for
``unknown_token`` when it has one, else ``init_unknown_vec(shape=vec_len)``.
"""

from __future__ import annotations

import logging
import os
import tarfile
import warnings
import zipfile
from collections.abc import Callable
from typing import Any

from ... import base, registry
from ... import ndarray as nd
from ...util import is_np_array
from . import _pretrained_files as files
from . import vocab
from ._errors import TextAssertionError, TextDecodeError, TextKeyError, TextValueError

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText",
           "CustomEmbedding", "CompositeEmbedding"]

UNKNOWN_IDX = vocab.UNKNOWN_IDX
_DEFAULT_REPO = "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/"


def _array_module() -> Any:
    """``mx.np`` in numpy mode (``npx.set_np()``), else ``mx.nd``."""
    if is_np_array():
        from ... import numpy as mx_np

        return mx_np
    return nd


def register(embedding_cls: type) -> type:
    """Register a token embedding class (a subclass of ``_TokenEmbedding``) under its
    lower-cased class name, for :func:`create` and :func:`get_pretrained_file_names`."""
    return registry.get_register_func(_TokenEmbedding, "token embedding")(embedding_cls)


def create(embedding_name: str, **kwargs: Any) -> Any:
    """An instance of the token embedding registered as ``embedding_name`` (case does not
    matter), such as ``create('glove', pretrained_file_name='glove.6B.50d.txt')``."""
    return registry.get_create_func(_TokenEmbedding, "token embedding")(embedding_name,
                                                                        **kwargs)


def get_pretrained_file_names(embedding_name: str | None = None) -> Any:
    """The pre-trained files the embedding ``embedding_name`` can load (a list), or, when
    None, a dict of every registered embedding's list."""
    known = registry.get_registry(_TokenEmbedding)
    if embedding_name is None:
        return {name: list(cls.pretrained_file_name_sha1) for name, cls in known.items()}
    cls = known.get(str(embedding_name).lower())
    if cls is None:
        raise TextKeyError(f"unknown token embedding {embedding_name!r}; expected one of "
                           f"{', '.join(sorted(known))}")
    return list(cls.pretrained_file_name_sha1)



def _lines(path: str, encoding: str):
    """``(line number, line)`` of a text file; a byte the encoding cannot decode is a
    :class:`TextDecodeError` naming the file and the lines read before it."""
    line_num = 0
    with open(path, encoding=encoding) as fin:
        try:
            for line_num, line in enumerate(fin, start=1):
                yield line_num, line
        except UnicodeDecodeError as error:
            raise TextDecodeError(path, line_num, error) from None

class _TokenEmbedding(vocab.Vocabulary):
    """Base of the token embeddings (see the module's documentation).

    A subclass for externally hosted files sets ``pretrained_file_name_sha1`` (file name
    to SHA-1, and ``pretrained_archive_name_sha1`` when files come in archives), checks
    the requested name with ``_check_pretrained_file_names``, fetches it with
    ``_get_pretrained_file`` and reads it with ``_load_embedding``.
    """

    pretrained_file_name_sha1: dict[str, str] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._vec_len: int | None = None
        self._idx_to_vec: Any = None

    # -- files ---------------------------------------------------------------------------
    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file_url(cls, pretrained_file_name: str) -> str:
        repo = os.environ.get("MXNET_GLUON_REPO", _DEFAULT_REPO)
        if not repo.endswith("/"):
            repo += "/"
        return (f"{repo}gluon/embeddings/{cls.__name__.lower()}/"
                f"{cls._get_download_file_name(pretrained_file_name)}")

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name: str) -> None:
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            name = cls.__name__.lower()
            raise TextKeyError(f"{name} has no pre-trained file {pretrained_file_name!r}; "
                               f"see text.embedding.get_pretrained_file_names({name!r}) for "
                               f"the {len(cls.pretrained_file_name_sha1)} it has")

    @classmethod
    def _get_pretrained_file(cls, embedding_root: str, pretrained_file_name: str) -> str:
        """The path of ``pretrained_file_name`` under ``embedding_root``, downloaded (and
        unpacked) first unless a copy with the right SHA-1 is there."""
        from ...gluon.utils import check_sha1, download

        folder = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(folder, pretrained_file_name)
        file_sha1 = cls.pretrained_file_name_sha1[pretrained_file_name]
        if os.path.exists(path) and check_sha1(path, file_sha1):
            return path
        url = cls._get_pretrained_file_url(pretrained_file_name)
        downloaded = os.path.join(folder, os.path.basename(url))
        archives = getattr(cls, "pretrained_archive_name_sha1", None)
        sha1 = archives[os.path.basename(url)] if archives else file_sha1
        download(url, downloaded, sha1_hash=sha1)
        if downloaded.endswith(".zip"):
            with zipfile.ZipFile(downloaded) as archive:
                archive.extractall(folder)
        elif downloaded.endswith((".tar.gz", ".tgz")):
            with tarfile.open(downloaded, "r:gz") as archive:
                archive.extractall(folder, filter="data")
        return path

    def _load_pretrained(self, pretrained_file_name: str, embedding_root: str | None,
                         init_unknown_vec: Callable[..., Any],
                         vocabulary: vocab.Vocabulary | None) -> None:
        """Fetch (or find) a registered pre-trained file under ``embedding_root`` and
        load it, restricted to ``vocabulary`` when given."""
        path = self._get_pretrained_file(embedding_root or _default_root(),
                                         pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)

    def _load_embedding(self, pretrained_file_path: str, elem_delim: str,
                        init_unknown_vec: Callable[..., Any], encoding: str = "utf8") -> None:
        """Index the tokens of the embedding file (one ``token<delim>v1<delim>...vk``
        line per token) and set ``idx_to_vec``.  A repeated token keeps its first vector;
        a line with one number (a fastText header) is skipped."""
        path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(path):
            raise TextValueError(f"no pre-trained embedding file at {path!r}")
        logging.info("Loading pre-trained token embedding vectors from %s", path)
        vec_len = None
        rows: list[list[float]] = []
        loaded_unknown = None
        for line_num, line in _lines(path, encoding):
            elems = line.rstrip().split(elem_delim)
            if len(elems) < 2:
                raise TextAssertionError(
                    f"{path}, line {line_num}: expected a token and its vector "
                    f"separated by {elem_delim!r}, got {line.rstrip()!r}")
            try:
                token, values = elems[0], [float(v) for v in elems[1:]]
            except ValueError as error:
                raise TextAssertionError(
                    f"{path}, line {line_num}: the vector of {elems[0]!r} is not numbers "
                    f"({error}); each line is a token, then its numbers separated by "
                    f"{elem_delim!r}") from None
            if token == self.unknown_token and loaded_unknown is None:
                loaded_unknown = values
            elif token in self._token_to_idx:
                warnings.warn(f"{path}, line {line_num}: token {token!r} seen before; "
                              f"keeping its first vector", stacklevel=2)
            elif len(values) == 1:
                warnings.warn(f"{path}, line {line_num}: {token!r} with a 1-dimensional "
                              f"vector {values} looks like a header; skipped",
                              stacklevel=2)
            else:
                if vec_len is None:
                    vec_len = len(values)
                elif len(values) != vec_len:
                    raise TextAssertionError(
                        f"{path}, line {line_num}: token {token!r} has a vector of "
                        f"length {len(values)}, the tokens before it {vec_len}; every "
                        f"vector must have the same length")
                rows.append(values)
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)
        if vec_len is None:
            raise TextAssertionError(f"{path} holds no token vectors")
        if loaded_unknown is not None and len(loaded_unknown) != vec_len:
            raise TextAssertionError(f"{path}: the unknown token {self.unknown_token!r} has "
                                     f"a vector of length {len(loaded_unknown)}, the other "
                                     f"tokens {vec_len}")
        xp = _array_module()
        # rows of the tokens indexed before the file's (unknown, reserved) start at 0
        first = len(self._idx_to_token) - len(rows)
        table = xp.array([[0.0] * vec_len] * first + rows)
        if loaded_unknown is None:
            unknown = init_unknown_vec(shape=vec_len)
            if is_np_array() and hasattr(unknown, "as_np_ndarray"):
                unknown = unknown.as_np_ndarray()
        else:
            unknown = xp.array(loaded_unknown)
        table[UNKNOWN_IDX] = unknown
        self._vec_len = vec_len
        self._idx_to_vec = table

    # -- vocabularies --------------------------------------------------------------------
    def _index_tokens_from_vocabulary(self, vocabulary: vocab.Vocabulary) -> None:
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        reserved = vocabulary.reserved_tokens
        self._reserved_tokens = None if reserved is None else list(reserved)

    def _set_idx_to_vec_by_embeddings(self, token_embeddings: list[Any], vocab_len: int,
                                      vocab_idx_to_token: list[Any]) -> None:
        """Rows for ``vocab_idx_to_token``: each embedding's vectors side by side (its
        unknown vector for row 0 and for the tokens it does not have)."""
        xp = _array_module()
        width = sum(embed.vec_len for embed in token_embeddings)
        table = xp.zeros((vocab_len, width))
        start = 0
        for embed in token_embeddings:
            end = start + embed.vec_len
            table[0, start:end] = embed.idx_to_vec[UNKNOWN_IDX]
            if vocab_len > 1:
                table[1:, start:end] = embed.get_vecs_by_tokens(list(vocab_idx_to_token[1:]))
            start = end
        self._vec_len = width
        self._idx_to_vec = table

    def _build_embedding_for_vocabulary(self, vocabulary: vocab.Vocabulary | None) -> None:
        if vocabulary is None:
            return
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise TextAssertionError(f"vocabulary must be a text.vocab.Vocabulary, got "
                                     f"{type(vocabulary).__name__}")
        self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
        self._index_tokens_from_vocabulary(vocabulary)

    # -- vectors -------------------------------------------------------------------------
    @property
    def vec_len(self) -> int | None:
        """The length of every token's vector."""
        return self._vec_len

    @property
    def idx_to_vec(self) -> Any:
        """The vectors, one row per token index (row 0: the unknown token's)."""
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens: Any, lower_case_backup: bool = False) -> Any:
        """The vector of a token (1-D), or the vectors of a list of tokens (2-D); tokens
        not indexed get the unknown vector.  With ``lower_case_backup`` a token not found
        is looked up lower-cased too."""
        single = not isinstance(tokens, list)
        indices = []
        for token in [tokens] if single else tokens:
            idx = self._token_to_idx.get(token)
            if idx is None and lower_case_backup and isinstance(token, str):
                idx = self._token_to_idx.get(token.lower())
            indices.append(UNKNOWN_IDX if idx is None else idx)
        if is_np_array():
            from ... import numpy_extension as npx

            xp, lookup = _array_module(), npx.embedding
        else:
            xp, lookup = nd, nd.Embedding
        rows, width = self._idx_to_vec.shape
        vecs = lookup(xp.array(indices), self._idx_to_vec, rows, width)
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens: Any, new_vectors: Any) -> None:
        """Set the vectors of indexed ``tokens`` (one token and a 1-D or 2-D array, or a
        list of tokens and a 2-D array with a row for each).  The unknown token's vector
        changes only when ``unknown_token`` itself is named."""
        if self._idx_to_vec is None:
            raise TextAssertionError("update_token_vectors: this embedding has no vectors yet")
        ndim = len(getattr(new_vectors, "shape", ()))
        if not isinstance(new_vectors, nd.NDArray) and not (
                is_np_array() and hasattr(new_vectors, "shape")):
            raise TextAssertionError(f"update_token_vectors: new_vectors must be an NDArray, "
                                     f"got {type(new_vectors).__name__}")
        if not isinstance(tokens, list) or len(tokens) == 1:
            if ndim not in (1, 2):
                raise TextAssertionError(f"update_token_vectors: for one token, new_vectors "
                                         f"must be 1-D or 2-D, got shape {new_vectors.shape}")
            tokens = tokens if isinstance(tokens, list) else [tokens]
            if ndim == 1:
                new_vectors = new_vectors.reshape((1, -1))
        elif ndim != 2:
            raise TextAssertionError(f"update_token_vectors: for several tokens, new_vectors "
                                     f"must be 2-D, got shape {new_vectors.shape}")
        if tuple(new_vectors.shape) != (len(tokens), self._vec_len):
            raise TextAssertionError(
                f"update_token_vectors: new_vectors has shape {tuple(new_vectors.shape)}, "
                f"expected ({len(tokens)}, {self._vec_len}): a row of length vec_len per "
                f"token")
        indices = []
        for token in tokens:
            if token not in self._token_to_idx:
                raise TextValueError(
                    f"update_token_vectors: token {token!r} is not indexed; to change the "
                    f"unknown vector, name the unknown token "
                    f"{self._idx_to_token[UNKNOWN_IDX]!r} explicitly")
            indices.append(self._token_to_idx[token])
        self._idx_to_vec[_array_module().array(indices, dtype="int64")] = new_vectors


def _default_root() -> str:
    return os.path.join(base.data_dir(), "embeddings")


@register
class GloVe(_TokenEmbedding):
    """GloVe word vectors (Pennington, Socher and Manning, 2014;
    https://nlp.stanford.edu/projects/glove/), downloaded to
    ``embedding_root/glove`` (default ``$MXNET_HOME/embeddings``).  See
    ``get_pretrained_file_names('glove')`` for the files; ``vocabulary`` restricts the
    indexed tokens to a vocabulary's."""

    pretrained_archive_name_sha1 = files.GLOVE_ARCHIVES
    pretrained_file_name_sha1 = files.GLOVE_FILES

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        # glove.<corpus>.<dim>d.txt comes in the archive of its corpus
        corpus = pretrained_file_name.split(".")[1]
        return next(a for a in cls.pretrained_archive_name_sha1 if a.split(".")[1] == corpus)

    def __init__(self, pretrained_file_name: str = "glove.840B.300d.txt",
                 embedding_root: str | None = None, init_unknown_vec: Any = nd.zeros,
                 vocabulary: vocab.Vocabulary | None = None, **kwargs: Any) -> None:
        self._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        self._load_pretrained(pretrained_file_name, embedding_root, init_unknown_vec,
                              vocabulary)


@register
class FastText(_TokenEmbedding):
    """fastText word vectors (Bojanowski et al., 2017; https://fasttext.cc/), downloaded
    to ``embedding_root/fasttext`` (default ``$MXNET_HOME/embeddings``).  See
    ``get_pretrained_file_names('fasttext')`` for the files; ``vocabulary`` restricts the
    indexed tokens to a vocabulary's."""

    pretrained_archive_name_sha1 = files.FASTTEXT_ARCHIVES
    pretrained_file_name_sha1 = files.FASTTEXT_FILES

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name: str) -> str:
        return os.path.splitext(pretrained_file_name)[0] + ".zip"

    def __init__(self, pretrained_file_name: str = "wiki.simple.vec",
                 embedding_root: str | None = None, init_unknown_vec: Any = nd.zeros,
                 vocabulary: vocab.Vocabulary | None = None, **kwargs: Any) -> None:
        self._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        self._load_pretrained(pretrained_file_name, embedding_root, init_unknown_vec,
                              vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """Vectors read from your own file at ``pretrained_file_path``: one line per token,
    the token then its vector's elements, separated by ``elem_delim``.  Keyword
    arguments (``unknown_token``, ``reserved_tokens``) go to the Vocabulary;
    ``vocabulary`` restricts the indexed tokens to a vocabulary's."""

    def __init__(self, pretrained_file_path: str, elem_delim: str = " ",
                 encoding: str = "utf8", init_unknown_vec: Any = nd.zeros,
                 vocabulary: vocab.Vocabulary | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of ``vocabulary``, each with the vectors of ``token_embeddings`` (one
    embedding or a list) side by side."""

    def __init__(self, vocabulary: vocab.Vocabulary, token_embeddings: Any) -> None:
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise TextAssertionError(f"CompositeEmbedding: vocabulary must be a "
                                     f"text.vocab.Vocabulary, got "
                                     f"{type(vocabulary).__name__}")
        embeds = token_embeddings if isinstance(token_embeddings, list) else [token_embeddings]
        for embed in embeds:
            if not isinstance(embed, _TokenEmbedding):
                raise TextAssertionError(f"CompositeEmbedding: token_embeddings must be token "
                                         f"embeddings (text.embedding.CustomEmbedding, GloVe, "
                                         f"...), got {type(embed).__name__}")
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(embeds, len(self), self.idx_to_token)
