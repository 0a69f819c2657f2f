"""The errors of ``contrib.text``: each a ``DagnetError`` and the builtin MXNet 1.x raises in
the same place (its checks of vocabularies, embedding files and vectors are ``assert``
statements, hence :class:`TextAssertionError`)."""

from __future__ import annotations

from ..._errors import DagnetError

__all__ = ["TextAssertionError", "TextKeyError", "TextValueError"]


class TextAssertionError(DagnetError, AssertionError):
    """An argument that contradicts another (a reserved token that is the unknown token,
    vectors of the wrong length) or an embedding file in the wrong format."""


class TextValueError(DagnetError, ValueError):
    """A token or index that the vocabulary does not have."""


class TextKeyError(DagnetError, KeyError):
    """An unknown embedding or pre-trained file name."""

    def __str__(self) -> str:  # KeyError would print the message quoted
        return str(self.args[0]) if self.args else ""
