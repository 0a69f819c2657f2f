"""The errors of ``contrib.text``: each a ``DagnetError`` and the builtin MXNet 1.x raises in
the same place (its checks of vocabularies, embedding files and vectors are ``assert``
statements, hence :class:`TextAssertionError`)."""

from __future__ import annotations

from ..._errors import DagnetError

__all__ = ["TextAssertionError", "TextDecodeError", "TextKeyError", "TextValueError"]


class TextAssertionError(DagnetError, AssertionError):
    """An argument that contradicts another (a reserved token that is the unknown token,
    vectors of the wrong length) or an embedding file in the wrong format."""


class TextValueError(DagnetError, ValueError):
    """A token or index that the vocabulary does not have."""


class TextKeyError(DagnetError, KeyError):
    """An unknown embedding or pre-trained file name."""

    def __str__(self) -> str:  # KeyError would print the message quoted
        return str(self.args[0]) if self.args else ""


class TextDecodeError(DagnetError, UnicodeDecodeError):
    """An embedding file that is not text in the encoding given (a ``UnicodeDecodeError``,
    as MXNet raises, that names the file and the lines read before it)."""

    def __init__(self, path: str, lines_read: int, error: UnicodeDecodeError) -> None:
        UnicodeDecodeError.__init__(self, error.encoding, error.object, error.start, error.end,
                                    error.reason)
        self.path, self.lines_read = path, lines_read

    def __str__(self) -> str:
        where = f"after line {self.lines_read}" if self.lines_read else "from its start"
        return (f"{self.path}: not {self.encoding} text {where} "
                f"({UnicodeDecodeError.__str__(self)}); pass the file's encoding= or check that "
                f"it is a text embedding file (one token and its numbers per line)")
