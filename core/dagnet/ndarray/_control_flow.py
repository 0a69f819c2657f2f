"""MXNet's imperative control flow (``mx.nd.contrib.foreach``, ``while_loop``, ``cond``):
plain Python loops and branches over NDArrays, with the symbolic versions' signatures and
results, so a hybrid block's ``F.contrib.foreach`` runs either way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import DagnetError
from ._creation import zeros
from ._frontend import function as _function
from ._ndarray import NDArray

__all__ = ["ControlFlowError", "cond", "foreach", "while_loop"]


class ControlFlowError(DagnetError, ValueError):
    """A control-flow function got something it cannot loop over: a body that returns the
    wrong structure, non-array data, a loop without a bound."""


def _flatten(items: Any, what: str) -> tuple[list[NDArray], Any]:
    """The arrays in ``items`` (an NDArray or nested lists of them) and their nesting."""
    if isinstance(items, NDArray):
        return [items], 0
    if not isinstance(items, (list, tuple)):
        raise ControlFlowError(f"{what} must be an NDArray or (nested) lists of NDArrays, "
                               f"got {type(items).__name__}")
    flat: list[NDArray] = []
    formats = []
    for item in items:
        arrays, fmt = _flatten(item, what)
        flat.extend(arrays)
        formats.append(fmt)
    return flat, formats


def _regroup(flat: list[Any], fmt: Any) -> tuple[Any, list[Any]]:
    if fmt == 0:
        return flat[0], flat[1:]
    items = []
    for sub in fmt:
        item, flat = _regroup(flat, sub)
        items.append(item)
    return items, flat


def foreach(body: Callable[[Any, Any], tuple[Any, Any]], data: Any, init_states: Any
            ) -> tuple[Any, Any]:
    """Run ``body`` over the slices of ``data`` along axis 0: ``out, states = body(
    data[i], states)`` from ``init_states``; returns the outputs stacked along a new axis 0
    and the last states.  ``data`` is an NDArray or a list of them (sliced together)."""
    flat_data, _ = _flatten(data, "foreach: data")
    _flatten(init_states, "foreach: init_states")
    single = isinstance(data, NDArray)
    steps = flat_data[0].shape[0]
    states = init_states
    collected: list[list[NDArray]] = []
    out_fmt: Any = []
    for i in range(steps):
        piece = data[i] if single else [d[i] for d in data]
        outs, states = body(piece, states)
        flat_outs, out_fmt = _flatten(outs, "foreach: the body's outputs")
        collected.append(flat_outs)
    stacked = [_function("stack")(*column, axis=0) for column in zip(*collected)]
    if not stacked:
        return [], states
    return _regroup(stacked, out_fmt)[0], states


def _scalar(value: Any, kind: type, what: str) -> Any:
    if hasattr(value, "asscalar"):
        value = value.asscalar()
    try:
        return kind(value)
    except (TypeError, ValueError) as error:
        raise ControlFlowError(f"cannot convert {what} ({value!r}) to a Python "
                               f"{kind.__name__}") from error


def while_loop(cond: Callable[..., Any], func: Callable[..., tuple[Any, Any]], loop_vars: Any,
               max_iterations: Any = None) -> tuple[Any, Any]:
    """``while cond(*loop_vars)`` (at most ``max_iterations`` times): ``out, loop_vars =
    func(*loop_vars)``.  Returns each output stacked along a new axis 0 and padded to
    ``max_iterations`` rows (the rows after the last step are zeros; MXNet leaves them
    undefined), and the last loop variables."""
    if max_iterations is None:
        raise ControlFlowError("while_loop: max_iterations should be specified")
    max_iterations = _scalar(max_iterations, int, "max_iterations")
    single = isinstance(loop_vars, NDArray)
    loop_vars = [loop_vars] if single else list(loop_vars)
    if not loop_vars:
        raise ControlFlowError("while_loop: loop_vars should contain at least one element")
    steps = 0
    outputs: list[list[NDArray]] = []
    out_fmt: Any = None
    while steps < max_iterations and _scalar(cond(*loop_vars), bool, "the value of cond"):
        step_output, new_vars = func(*loop_vars)
        step_output = [] if step_output is None else step_output
        new_vars = [] if new_vars is None else new_vars
        new_vars = [new_vars] if isinstance(new_vars, NDArray) else list(new_vars)
        if len(new_vars) != len(loop_vars):
            raise ControlFlowError("while_loop: the number of loop_vars should be consistent "
                                   "during the loop")
        flat, out_fmt = _flatten(step_output, "while_loop: the step's outputs")
        if outputs and len(flat) != len(outputs[0]):
            raise ControlFlowError("while_loop: number of elements in step_output should be "
                                   "the same in each step")
        outputs.append(flat)
        loop_vars = new_vars
        steps += 1
    stacked = []
    for column in zip(*outputs):
        rows = [x.expand_dims(0) for x in column]
        if steps != max_iterations:
            rows.append(zeros((max_iterations - steps,) + column[0].shape,
                              ctx=column[0].context, dtype=column[0].dtype))
        stacked.append(_function("concat")(*rows, dim=0))
    result: Any = _regroup(stacked, out_fmt)[0] if out_fmt is not None else stacked
    return result, (loop_vars[0] if single else loop_vars)


def cond(pred: Any, then_func: Callable[[], Any], else_func: Callable[[], Any]) -> Any:
    """``then_func()`` when ``pred`` (a one-element NDArray or a number) is true, else
    ``else_func()``."""
    return then_func() if _scalar(pred, bool, "pred") else else_func()
