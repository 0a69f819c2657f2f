"""Shape and type inference over a graph, both ways, until nothing changes.

Every operator's rule (``Op.shapes`` / ``Op.dtypes``) takes partial input
and output attributes and returns completed ones, so inference runs forward
(inputs tell outputs) and backward (outputs and other inputs tell an input):
with ``a=(2,0)`` and ``c=(0,3)``, ``d = a*b + b*c`` completes every shape to
``(2,3)``.  A shape is unknown when it is None or has a 0 dimension; a dtype
when it is None.  A contradiction raises an error naming the node, the
operator, the argument and both values.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._errors import DagnetError, DTypeError, ShapeError
from ..operator import merge_dtype, merge_shape, shape_is_known
from ._node import Entry, Node

__all__ = ["infer_shapes", "infer_types", "shape_is_final", "parse_shape_attr", "dtype_from_attr",
           "dtype_to_attr", "DTYPE_CODES"]

# MXNet's type flags, as ``__dtype__`` stores them in symbol JSON.
DTYPE_CODES = {0: "float32", 1: "float64", 2: "float16", 3: "uint8", 4: "int32", 5: "int8",
               6: "int64", 7: "bool", 12: "bfloat16"}
_CODE_OF = {np.dtype(name): code for code, name in DTYPE_CODES.items() if name != "bfloat16"}


@functools.lru_cache(maxsize=4096)
def parse_shape_attr(text: str) -> tuple[int, ...]:
    """``'(2, 3)'`` (a ``__shape__`` attribute) as a tuple (each text parsed once)."""
    value = ast.literal_eval(text.strip() or "()")
    return (int(value),) if isinstance(value, int) else tuple(int(d) for d in value)


def dtype_from_attr(text: str) -> np.dtype:
    """A ``__dtype__`` attribute (MXNet's type flag, or a dtype name) as a numpy dtype."""
    text = text.strip()
    if text.lstrip("-").isdigit():
        code = int(text)
        if code not in DTYPE_CODES or DTYPE_CODES[code] == "bfloat16":
            raise DTypeError(f"__dtype__={text!r} is not a type flag dagnet supports; "
                             f"expected one of {sorted(_CODE_OF.values())}")
        return np.dtype(DTYPE_CODES[code])
    return np.dtype(text)


def dtype_to_attr(dtype: Any) -> str:
    """A dtype as MXNet's ``__dtype__`` type flag."""
    dtype = np.dtype(dtype)
    if dtype not in _CODE_OF:
        raise DTypeError(f"dtype {dtype.name} has no MXNet type flag; use one of "
                         f"{', '.join(sorted(d.name for d in _CODE_OF))}")
    return str(_CODE_OF[dtype])


def _shape_known(shape: Any) -> bool:
    return shape_is_known(shape)


def _type_known(dtype: Any) -> bool:
    return dtype is not None


def infer_shapes(nodes: Sequence[Node], given: dict[Entry, Any]) -> tuple[dict, dict]:
    """Complete the shapes of every entry of ``nodes`` (in topological order).

    ``given`` maps entries (usually variables') to partial shapes.  Returns
    ``(shapes, deferred)``: the shape of every entry reached (None where
    nothing is known), and for nodes whose rule could not run yet, the
    error it gave (shown when the caller needs complete shapes).
    """
    return _infer(nodes, given, lambda n, i, o: n.op.shapes(n.attrs, i, o), merge_shape,
                  _shape_known, ShapeError, "shape")


def shape_is_final(values: dict[Entry, Any], entry: Entry) -> bool:
    """Whether an inferred shape is settled: fully known, or with zero dimensions that are
    sizes, not unknowns, because an operator computed the shape from settled inputs (an
    empty ``split_v2`` section).  MXNet keeps "unknown" apart from 0 inside its inference;
    without NumPy shape semantics dagnet spells both 0, and only how a shape was reached
    tells them apart."""
    seen: dict[int, bool] = {}

    def final(entry: Entry) -> bool:
        shape = values.get(entry)
        if shape_is_known(shape):
            return True
        node = entry[0]
        if shape is None or len(shape) == 0 or any(d < 0 for d in shape) or node.op is None:
            return False
        if id(node) not in seen:
            seen[id(node)] = False  # a cycle is not settled
            seen[id(node)] = all(final(e) for e in node.inputs)
        return seen[id(node)]

    return final(entry)


def infer_types(nodes: Sequence[Node], given: dict[Entry, Any]) -> tuple[dict, dict]:
    """Complete the dtypes of every entry, like :func:`infer_shapes`."""
    return _infer(nodes, given, lambda n, i, o: n.op.dtypes(n.attrs, i, o), merge_dtype,
                  _type_known, DTypeError, "type")


def _infer(nodes: Sequence[Node], given: dict[Entry, Any], rule: Callable, merge: Callable,
           known: Callable[[Any], bool], error_type: type, what: str) -> tuple[dict, dict]:
    values: dict[Entry, Any] = {}
    for entry, value in given.items():
        values[entry] = merge(values.get(entry), value, f"{what} of {entry[0].name!r}")
    ops = [n for n in nodes if n.op is not None]
    checked: set[int] = set()  # nodes whose rule ran with everything known
    deferred: dict[int, BaseException] = {}
    for _ in range(len(ops) + 2):
        changed = False
        for node in ops + ops[::-1]:
            if id(node) in checked:  # all its values known and agreed: nothing can change
                continue
            ins = [values.get(e) for e in node.inputs]
            outs = [values.get((node, i)) for i in range(node.num_outputs())]
            complete = all(known(v) for v in ins) and all(known(v) for v in outs)
            try:
                new_ins, new_outs = rule(node, ins, outs)
            except (ShapeError, DTypeError) as error:
                # a contradiction between known values stays one whatever else is unknown
                raise _located(error, node, error_type, ins, what) from None
            except DagnetError as error:
                if all(known(v) for v in ins):
                    raise _located(error, node, error_type, ins, what) from None
                deferred[id(node)] = error
                continue
            except Exception as error:  # a rule that cannot handle missing values yet
                if all(known(v) for v in ins):
                    raise error_type(
                        f"node {node.name!r} (operator {node.op.name!r}): {what} inference "
                        f"failed with {type(error).__name__}: {error}") from error
                deferred[id(node)] = error
                continue
            deferred.pop(id(node), None)
            if complete:
                checked.add(id(node))
            for index, value in enumerate(new_ins):
                changed |= _update(values, node.inputs[index], value, merge, error_type,
                                   node, "input", index)
            for index, value in enumerate(new_outs):
                changed |= _update(values, (node, index), value, merge, error_type,
                                   node, "output", index)
        if not changed:
            break
    return values, {k: v for k, v in deferred.items()}


def _update(values: dict, entry: Entry, value: Any, merge: Callable, error_type: type,
            node: Node, kind: str, index: int) -> bool:
    """Merge ``value`` into ``entry``'s (the ``kind`` "input" or "output" ``index`` of
    ``node``); whether it changed.  A value that cannot change it (the common case once
    it is known) skips the merge and the error label."""
    old = values.get(entry)
    if value is None or (old is not None and _same(old, value)):
        return False
    names = node.input_names() if kind == "input" else node.output_names()
    label = (f"node {node.name!r} (operator {node.op.name!r}), {kind} "
             f"{names[index] if index < len(names) else index!r}")
    try:
        new = merge(old, value, label)
    except DagnetError as error:
        raise error_type(str(error)) from None
    if new is None or (old is not None and _same(old, new)):
        return False
    values[entry] = new
    return True


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) or isinstance(b, tuple):
        return tuple(a) == tuple(b)
    return np.dtype(a) == np.dtype(b)


def _located(error: DagnetError, node: Node, error_type: type, ins: list, what: str
             ) -> DagnetError:
    """``error`` from ``node``'s rule, saying which node it is and what its inputs were."""
    text = str(error)
    where = f"node {node.name!r} (operator {node.op.name!r})"
    if repr(node.name) not in text:
        own = f"operator {node.op.name!r}"
        text = (where + text[len(own):] if text.startswith(own + ",")
                else f"{where}: {text.removeprefix(own + ': ')}")
    names = node.input_names()
    shown = ", ".join(f"{names[i] if i < len(names) else i}={_show(v)}" for i, v in enumerate(ins))
    kind = type(error) if isinstance(error, (ShapeError, DTypeError)) else error_type
    return kind(f"{text} [input {what}s: {shown}]")


def _show(value: Any) -> str:
    if value is None:
        return "unknown"
    return str(tuple(value)) if isinstance(value, tuple) else np.dtype(value).name
