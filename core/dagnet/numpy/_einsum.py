"""``einsum``, NumPy's Einstein summation, composed of registered operators.

The subscripts are parsed on the host (``...`` broadcasting, the implicit output of
labels seen once, in alphabetical order); then each operand's repeated labels become a
diagonal (the ``diag`` operator), labels no one else needs are summed out, and the
operands are multiplied in turn with NumPy broadcasting, each product summing out the
labels that no later operand and not the output need.  Every step is an operator with a
gradient, so ``einsum`` is differentiable in each operand (a label of size 1 broadcast
against a longer one gets its gradient summed, as NumPy's broadcasting does).
``optimize`` is accepted and changes nothing: operands are always contracted left to
right.
"""

from __future__ import annotations

from typing import Any

from .. import ndarray as nd
from ..util import use_np_shape
from ._array import NumpyError, ndarray, wrap, zeros_from
from ._elementwise import multiply
from ._manipulation import _array, reshape, transpose
from ._reductions import sum as _sum

__all__ = ["einsum"]

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


class _Term:
    """One operand while it is being contracted: the array and a label per axis."""

    def __init__(self, array: ndarray, labels: list[str]):
        self.array, self.labels = array, labels


def _parse(subscripts: str, arrays: list[ndarray]) -> tuple[list[list[str]], list[str]]:
    """The labels of each operand's axes and of the output's; the axes ``...`` stands
    for get labels ``0``, ``1`` ... (right-aligned across operands, as they broadcast)."""
    text = subscripts.replace(" ", "")
    if "->" in text:
        inputs_text, output_text = text.split("->", 1)
        if "->" in output_text:
            raise NumpyError(f"einsum: subscripts {subscripts!r} have more than one '->'")
    else:
        inputs_text, output_text = text, None
    terms = inputs_text.split(",")
    if len(terms) != len(arrays):
        raise NumpyError(f"einsum: subscripts {subscripts!r} name {len(terms)} operand(s) but "
                         f"{len(arrays)} were given")
    split = []
    for term, array in zip(terms, arrays):
        head, dots, tail = term.partition("...")
        letters = head + tail
        if "." in letters or any(c not in _LETTERS for c in letters):
            raise NumpyError(f"einsum: subscripts {subscripts!r}: {term!r} is not made of "
                             f"letters and one '...'")
        extra = array.ndim - len(letters)
        if (extra != 0 and not dots) or extra < 0:
            raise NumpyError(f"einsum: subscripts {term!r} do not fit an operand of shape "
                             f"{array.shape} ({len(letters)} labels for {array.ndim} axes)")
        split.append((head, extra, tail))
    ellipsis_ndim = max(extra for _, extra, _ in split)
    # the '...' axes right-aligned across operands, as they broadcast
    labelled = [[*head, *(str(ellipsis_ndim - extra + i) for i in range(extra)), *tail]
                for head, extra, tail in split]
    dots_labels = [str(i) for i in range(ellipsis_ndim)]
    if output_text is None:
        counts: dict[str, int] = {}
        for labels in labelled:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        output = dots_labels + sorted(lab for lab, c in counts.items()
                                      if c == 1 and not lab.isdigit())
    else:
        head, dots, tail = output_text.partition("...")
        letters = head + tail
        if "." in letters or any(c not in _LETTERS for c in letters):
            raise NumpyError(f"einsum: output subscripts {output_text!r} are not made of "
                             f"letters and one '...'")
        output = [*head, *(dots_labels if dots else ()), *tail]
        seen = {lab for labels in labelled for lab in labels}
        for lab in letters:
            if letters.count(lab) > 1:
                raise NumpyError(f"einsum: output subscript {lab!r} appears more than once")
            if lab not in seen:
                raise NumpyError(f"einsum: output subscript {lab!r} is not in any operand")
        if not dots and ellipsis_ndim:
            raise NumpyError("einsum: the operands have '...' axes but the output has no "
                             "'...' to put them in")
    return labelled, output


def _sizes(terms: list[_Term]) -> None:
    """Check that each label has one size (or 1, which broadcasts)."""
    sizes: dict[str, int] = {}
    for term in terms:
        for lab, size in zip(term.labels, term.array.shape):
            known = sizes.setdefault(lab, size)
            if known != size and 1 not in (known, size):
                raise NumpyError(f"einsum: label {lab!r} has size {size} in one operand and "
                                 f"{known} in another")
            if known == 1:
                sizes[lab] = size


def _diagonals(term: _Term) -> None:
    """Replace each label repeated within the operand by its diagonal (the label once,
    last)."""
    while True:
        repeated = next((lab for lab in term.labels if term.labels.count(lab) > 1), None)
        if repeated is None:
            return
        first = term.labels.index(repeated)
        second = term.labels.index(repeated, first + 1)
        shape = term.array.shape
        if shape[first] != shape[second]:
            raise NumpyError(f"einsum: the repeated label {repeated!r} has sizes "
                             f"{shape[first]} and {shape[second]} in one operand")
        labels = [lab for i, lab in enumerate(term.labels) if i not in (first, second)]
        if shape[first]:
            term.array = wrap(nd.diag(term.array, k=0, axis1=first, axis2=second))
        else:  # an empty diagonal
            rest = tuple(d for i, d in enumerate(shape) if i not in (first, second))
            term.array = zeros_from(rest + (0,), term.array.dtype, term.array.context,
                                    term.array)
        term.labels = labels + [repeated]


def _sum_out(term: _Term, needed: set[str]) -> None:
    axes = tuple(i for i, lab in enumerate(term.labels) if lab not in needed)
    if axes:
        term.array = _sum(term.array, axis=axes)
        term.labels = [lab for lab in term.labels if lab in needed]


def _aligned(term: _Term, order: list[str]) -> ndarray:
    """The operand's array with its axes in ``order`` (size 1 for labels it lacks)."""
    kept = [lab for lab in order if lab in term.labels]
    perm = [term.labels.index(lab) for lab in kept]
    array = transpose(term.array, perm) if perm != sorted(perm) else term.array
    shape = tuple(array.shape[kept.index(lab)] if lab in term.labels else 1 for lab in order)
    return reshape(array, shape) if shape != array.shape else array


@use_np_shape
def einsum(*operands: Any, out: ndarray | None = None, optimize: Any = False) -> ndarray:
    """Einstein summation: ``einsum(subscripts, *arrays)`` with NumPy's subscripts
    (``'ij,jk->ik'``, ``'ii'``, ``'...j,j'``; without ``->`` the output has the labels
    seen once, alphabetically).  The operands must share one dtype, which the result
    has.  Differentiable in every operand."""
    if not operands or not isinstance(operands[0], str):
        raise NumpyError("einsum: the first argument must be the subscripts string "
                         "(the interleaved operand/sublist form is not supported)")
    arrays = [_array(a) for a in operands[1:]]
    if not arrays:
        raise NumpyError("einsum: at least one operand is required")
    if any(a.dtype != arrays[0].dtype for a in arrays[1:]):
        raise NumpyError(f"einsum: the operands must share one dtype, got "
                         f"{[str(a.dtype) for a in arrays]}")
    labelled, output = _parse(operands[0], arrays)
    terms = [_Term(a, labels) for a, labels in zip(arrays, labelled)]
    for term in terms:
        _diagonals(term)
    _sizes(terms)
    for index, term in enumerate(terms):
        others = {lab for k, t in enumerate(terms) if k != index for lab in t.labels}
        _sum_out(term, others | set(output))
    result = terms[0]
    for index in range(1, len(terms)):
        term = terms[index]
        order = result.labels + [lab for lab in term.labels if lab not in result.labels]
        product = _Term(multiply(_aligned(result, order), _aligned(term, order)), order)
        later = {lab for t in terms[index + 1:] for lab in t.labels}
        _sum_out(product, later | set(output))
        result = product
    _sum_out(result, set(output))
    final = _aligned(result, output)
    if final is arrays[0]:  # nothing to do ('ij->ij'): a new array all the same
        final = final.copy()
    if out is not None:
        out[...] = final
        return out
    return final
