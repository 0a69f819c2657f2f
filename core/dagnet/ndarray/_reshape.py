"""MXNet's reshape codes, read into a concrete shape.

Each entry of the target says what to do with the next input dimension(s):

=====  ==================================================================
``d``  (d > 0) this size; uses up one input dimension
``0``  copy the input dimension
``-1`` infer this size from the remaining elements (at most one ``-1``)
``-2`` copy all remaining input dimensions
``-3`` merge the next two input dimensions into one
``-4`` split the input dimension into the next two entries ``a, b``
       (one of them may be ``-1``)
=====  ==================================================================

With ``reverse=True`` the entries are matched to the input dimensions from
the right: ``(10, 5, 4)`` with ``(-1, 0)`` gives ``(40, 5)`` forwards and
``(50, 4)`` reversed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .._errors import ShapeError

__all__ = ["infer_reshape"]


def _tokens(target: Sequence[int]) -> list[tuple]:
    tokens = []
    i = 0
    while i < len(target):
        code = int(target[i])
        if code == -4:
            if i + 2 >= len(target):
                raise ShapeError(f"reshape {tuple(target)}: -4 must be followed by two sizes")
            tokens.append(("split", int(target[i + 1]), int(target[i + 2])))
            i += 3
            continue
        if code > 0:
            tokens.append(("dim", code))
        elif code in (0, -1, -2, -3):
            tokens.append(({0: "copy", -1: "infer", -2: "rest", -3: "merge"}[code],))
        else:
            raise ShapeError(f"reshape {tuple(target)}: {code} is not a size or one of the "
                             f"codes 0, -1, -2, -3, -4")
        i += 1
    return tokens


def infer_reshape(src: Sequence[int], target: Sequence[int],
                  reverse: bool = False) -> tuple[int, ...]:
    """The shape ``target`` (with MXNet's codes) gives an array of shape ``src``."""
    src = tuple(int(d) for d in src)
    tokens = _tokens(target)
    if reverse:
        src = src[::-1]
        tokens = [("split", t[2], t[1]) if t[0] == "split" else t for t in reversed(tokens)]
    out: list[int] = []
    infer_at = None
    i = 0

    def take(what: str) -> int:
        nonlocal i
        if i >= len(src):
            raise ShapeError(f"reshape {tuple(target)}: {what} needs an input dimension, but "
                             f"the input shape {tuple(src)} has only {len(src)}")
        i += 1
        return src[i - 1]

    for token in tokens:
        kind = token[0]
        if kind == "dim":
            out.append(token[1])
            i += 1
        elif kind == "copy":
            out.append(take("0"))
        elif kind == "infer":
            if infer_at is not None:
                raise ShapeError(f"reshape {tuple(target)}: only one dimension can be -1")
            infer_at = len(out)
            out.append(1)
            i += 1
        elif kind == "rest":
            out.extend(src[i:])
            i = len(src)
        elif kind == "merge":
            first = take("-3")
            out.append(first * take("-3"))
        else:  # split
            whole = take("-4")
            a, b = token[1], token[2]
            if a == -1 and b == -1:
                raise ShapeError(f"reshape {tuple(target)}: -4 can infer only one of its two sizes")
            if a == -1:
                a = whole // b if b else 0
            if b == -1:
                b = whole // a if a else 0
            if a * b != whole:
                raise ShapeError(f"reshape {tuple(target)}: cannot split dimension {whole} "
                                 f"into {a} x {b}")
            out.extend((a, b))
    total = math.prod(src)
    if infer_at is not None:
        known = math.prod(out)  # the -1 slot holds 1
        if known == 0 or total % known:
            raise ShapeError(f"cannot reshape array of size {total} into shape "
                             f"{_show(target)}: the -1 dimension cannot be inferred")
        out[infer_at] = total // known
    if reverse:
        out.reverse()
    if math.prod(out) != total:
        raise ShapeError(f"cannot reshape array of size {total} into shape {_show(target)}")
    return tuple(out)


def _show(target: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(t) for t in target)
