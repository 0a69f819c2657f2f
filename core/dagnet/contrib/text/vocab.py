"""Indexing text tokens: :class:`Vocabulary`."""

from __future__ import annotations

import collections
from collections.abc import Hashable
from typing import Any

from ._errors import TextAssertionError, TextValueError

__all__ = ["Vocabulary"]

UNKNOWN_IDX = 0  # the unknown token always has index 0


class Vocabulary:
    """Indices for the unknown token (0), then the ``reserved_tokens`` (in their order),
    then the keys of ``counter`` (a ``collections.Counter``) from the most to the least
    frequent, ties in sorted order.

    Only keys counted at least ``min_freq`` times are indexed, and at most
    ``most_freq_count`` of them (None: no limit; reserved tokens do not count).  Tokens
    may be any hashable values of one kind (str, int, tuple); ``reserved_tokens`` may not
    repeat a token or hold ``unknown_token``.
    """

    def __init__(self, counter: collections.Counter | None = None,
                 most_freq_count: int | None = None, min_freq: int = 1,
                 unknown_token: Hashable = "<unk>",
                 reserved_tokens: list[Hashable] | None = None) -> None:
        if not min_freq > 0:
            raise TextAssertionError(f"Vocabulary: min_freq must be positive, got {min_freq}")
        if reserved_tokens is not None:
            if unknown_token in reserved_tokens:
                raise TextAssertionError(f"Vocabulary: reserved_tokens may not hold the "
                                         f"unknown token {unknown_token!r}")
            if len(set(reserved_tokens)) != len(reserved_tokens):
                raise TextAssertionError(f"Vocabulary: reserved_tokens repeats a token: "
                                         f"{reserved_tokens!r}")
        self._index_unknown_and_reserved_tokens(unknown_token, reserved_tokens)
        if counter is not None:
            self._index_counter_keys(counter, unknown_token, reserved_tokens,
                                     most_freq_count, min_freq)

    def _index_unknown_and_reserved_tokens(self, unknown_token: Hashable,
                                           reserved_tokens: list[Hashable] | None) -> None:
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        self._idx_to_token = [unknown_token, *(reserved_tokens or [])]
        self._token_to_idx = {token: i for i, token in enumerate(self._idx_to_token)}

    def _index_counter_keys(self, counter: collections.Counter, unknown_token: Hashable,
                            reserved_tokens: list[Hashable] | None,
                            most_freq_count: int | None, min_freq: int) -> None:
        if not isinstance(counter, collections.Counter):
            raise TextAssertionError(f"Vocabulary: counter must be a collections.Counter, "
                                     f"got {type(counter).__name__}")
        special = {unknown_token, *(reserved_tokens or [])}
        # most frequent first; equally frequent tokens in sorted order
        ranked = sorted(sorted(counter.items(), key=lambda kv: kv[0]),
                        key=lambda kv: kv[1], reverse=True)
        limit = len(counter) if most_freq_count is None else most_freq_count
        taken = 0
        for token, freq in ranked:
            if freq < min_freq or taken == limit:
                break
            if token in special:
                continue
            self._token_to_idx[token] = len(self._idx_to_token)
            self._idx_to_token.append(token)
            taken += 1

    def __len__(self) -> int:
        return len(self._idx_to_token)

    @property
    def token_to_idx(self) -> dict[Hashable, int]:
        """Each indexed token's index."""
        return self._token_to_idx

    @property
    def idx_to_token(self) -> list[Hashable]:
        """The indexed tokens, by index."""
        return self._idx_to_token

    @property
    def unknown_token(self) -> Hashable:
        """What every token the vocabulary does not hold maps to (index 0)."""
        return self._unknown_token

    @property
    def reserved_tokens(self) -> list[Hashable] | None:
        """The tokens indexed whatever their count, or None."""
        return self._reserved_tokens

    def to_indices(self, tokens: Any) -> Any:
        """The index of a token, or the list of indices of a list of tokens (0 for
        tokens the vocabulary does not hold)."""
        if isinstance(tokens, list):
            return [self._token_to_idx.get(t, UNKNOWN_IDX) for t in tokens]
        return self._token_to_idx.get(tokens, UNKNOWN_IDX)

    def to_tokens(self, indices: Any) -> Any:
        """The token of an index, or the list of tokens of a list of indices."""
        single = not isinstance(indices, list)
        found = []
        for idx in [indices] if single else indices:
            if not isinstance(idx, int) or isinstance(idx, bool) or not \
                    0 <= idx < len(self._idx_to_token):
                raise TextValueError(f"Vocabulary.to_tokens: index {idx!r} is not a token "
                                     f"index; valid ones are 0 to "
                                     f"{len(self._idx_to_token) - 1}")
            found.append(self._idx_to_token[idx])
        return found[0] if single else found
