"""``mx.contrib.text``: counting tokens (:mod:`.utils`), indexing them
(:class:`.vocab.Vocabulary`) and giving them vectors from pre-trained embedding files
(:mod:`.embedding`)."""

from __future__ import annotations

from . import embedding, utils, vocab

__all__ = ["embedding", "utils", "vocab"]
