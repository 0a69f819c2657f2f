"""Sentence data for recurrent language models: ``encode_sentences`` turns tokens into
integer ids and ``BucketSentenceIter`` batches sentences by length."""

from __future__ import annotations

import bisect
import random
import warnings
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from .. import ndarray
from .._errors import DagnetError
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter", "UnknownTokenError"]


class UnknownTokenError(DagnetError, KeyError):
    """A token is not in the given vocabulary and no ``unknown_token`` stands for it."""


def encode_sentences(sentences: Sequence[Sequence[Hashable]], vocab: dict | None = None,
                     invalid_label: int = -1, invalid_key: Hashable = "\n",
                     start_label: int = 0, unknown_token: Hashable | None = None
                     ) -> tuple[list[list[int]], dict]:
    """Each sentence (a list of tokens) as a list of integer ids, and the vocabulary.

    Without ``vocab`` a new one is built (``invalid_key`` maps to ``invalid_label``,
    and new tokens get ids counting up from ``start_label``, skipping
    ``invalid_label``).  With ``vocab``, it is extended in place: a token not in it
    is encoded as ``unknown_token`` (added once, with the next id) or, without one,
    raises :class:`UnknownTokenError`.  With a new vocabulary and ``unknown_token``,
    every token not yet seen is encoded as ``unknown_token``, as in MXNet.
    """
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    next_id = start_label
    encoded = []
    for sentence in sentences:
        ids = []
        for token in sentence:
            if token not in vocab:
                if not new_vocab and unknown_token is None:
                    raise UnknownTokenError(
                        f"encode_sentences: token {token!r} is not in the vocabulary; pass "
                        f"unknown_token= to encode such tokens as one id")
                if unknown_token is not None:
                    token = unknown_token
                if token not in vocab:
                    if next_id == invalid_label:
                        next_id += 1
                    vocab[token] = next_id
                    next_id += 1
            ids.append(vocab[token])
        encoded.append(ids)
    return encoded, vocab


class BucketSentenceIter(DataIter):
    """Batches of encoded sentences for a language model, each batch from one bucket.

    A sentence goes to the smallest bucket (a length) it fits, padded with
    ``invalid_label``; longer sentences are dropped with a warning.  Without
    ``buckets``, every length that at least ``batch_size`` sentences have is one.
    The label of each step is the next token (``invalid_label`` after the last).
    Layout ``'NT'`` gives ``(batch_size, length)`` arrays, ``'TN'`` the transpose;
    each batch carries its ``bucket_key`` (the bucket's length) for
    :class:`~dagnet.mod.BucketingModule`.  Every ``reset`` shuffles the batches.
    """

    def __init__(self, sentences: Sequence[Sequence[int]], batch_size: int,
                 buckets: Sequence[int] | None = None, invalid_label: int = -1,
                 data_name: str = "data", label_name: str = "softmax_label",
                 dtype: Any = "float32", layout: str = "NT"):
        super().__init__(batch_size)
        if layout not in ("NT", "TN"):
            raise ValueError(f"BucketSentenceIter: layout must be 'NT' (batch major) or 'TN' "
                             f"(time major), got {layout!r}")
        if not buckets:
            counts = np.bincount([len(s) for s in sentences]) if sentences else []
            buckets = [length for length, n in enumerate(counts) if n >= batch_size]
        buckets = sorted(buckets)
        if not buckets:
            raise ValueError(f"BucketSentenceIter: no bucket: no sentence length occurs "
                             f"batch_size={batch_size} times; give buckets= explicitly")
        rows: list[list[np.ndarray]] = [[] for _ in buckets]
        discarded = 0
        for sentence in sentences:
            which = bisect.bisect_left(buckets, len(sentence))
            if which == len(buckets):
                discarded += 1
                continue
            row = np.full((buckets[which],), invalid_label, dtype=dtype)
            row[:len(sentence)] = sentence
            rows[which].append(row)
        if discarded:
            warnings.warn(f"BucketSentenceIter: discarded {discarded} sentences longer than "
                          f"the largest bucket ({buckets[-1]})", stacklevel=2)
        self.data = [np.asarray(r, dtype=dtype).reshape(len(r), length)
                     for r, length in zip(rows, buckets)]
        self.buckets = buckets
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.layout = layout
        self.major_axis = layout.find("N")
        self.default_bucket_key = max(buckets)
        shape = (batch_size, self.default_bucket_key)
        if layout == "TN":
            shape = shape[::-1]
        self.provide_data = [DataDesc(name=data_name, shape=shape, layout=layout)]
        self.provide_label = [DataDesc(name=label_name, shape=shape, layout=layout)]
        self.idx = [(i, j) for i, bucket in enumerate(self.data)
                    for j in range(0, len(bucket) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.nddata: list[Any] = []
        self.ndlabel: list[Any] = []
        self.reset()

    def reset(self) -> None:
        """Shuffle the batches and the sentences within each bucket."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for bucket in self.data:
            np.random.shuffle(bucket)
        self.nddata, self.ndlabel = [], []
        for bucket in self.data:
            label = np.empty_like(bucket)
            label[:, :-1] = bucket[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(bucket, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self) -> DataBatch:
        """The next batch; StopIteration at the end of the epoch."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.layout == "TN":
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape,
                                                 layout=self.layout)])
