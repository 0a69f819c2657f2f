"""Counting the tokens of a text."""

from __future__ import annotations

import collections
import re
from collections import Counter

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(source_str: str, token_delim: str = " ", seq_delim: str = "\n",
                          to_lower: bool = False,
                          counter_to_update: Counter | None = None) -> Counter:
    """Count the tokens of ``source_str``, which ``token_delim`` and ``seq_delim`` (both
    regular expressions: escape special characters, as in ``'\\\\*'``) split into tokens;
    empty pieces are not tokens.  With ``to_lower`` tokens are counted lower-cased.  The
    counts are added to ``counter_to_update`` (and it is returned) when given, else to a
    new ``collections.Counter``.

    >>> count_tokens_from_str(' Life is great ! \\n life is good . \\n', to_lower=True)['life']
    2
    """
    tokens = [t for t in re.split(f"{token_delim}|{seq_delim}", source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
