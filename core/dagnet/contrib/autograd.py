"""MXNet's first autograd interface (``mx.contrib.autograd``), kept for code written
before ``mx.autograd``: training sections that also record, ``compute_gradient`` and
the ``grad``/``grad_and_loss`` function transforms.

Everything runs on :mod:`dagnet.autograd`; a section is ``record`` and ``train_mode``
switched together, as MXNet's ``set_is_training`` switches both.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from .. import autograd
from ..ndarray import NDArray, zeros_like

__all__ = [
    "TrainingStateScope", "backward", "compute_gradient", "grad", "grad_and_loss",
    "mark_variables", "set_is_training", "test_section", "train_section",
]


def set_is_training(is_train: bool) -> bool:
    """Switch training mode and recording together; returns the previous state."""
    previous = autograd.set_training(is_train)
    autograd.set_recording(is_train)
    return previous


class TrainingStateScope:
    """A ``with`` scope that sets training and recording to ``enter_state`` and restores
    the previous state on exit."""

    def __init__(self, enter_state: bool):
        self._enter_state = enter_state
        self._prev: bool | None = None

    def __enter__(self) -> TrainingStateScope:
        self._prev = set_is_training(self._enter_state)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._prev != self._enter_state:
            set_is_training(bool(self._prev))


def train_section() -> TrainingStateScope:
    """Record and train inside the ``with`` block."""
    return TrainingStateScope(True)


def test_section() -> TrainingStateScope:
    """Neither record nor train inside the ``with`` block (e.g. inside a train section)."""
    return TrainingStateScope(False)


def mark_variables(variables: Sequence[NDArray], gradients: Sequence[NDArray],
                   grad_reqs: str | Sequence[str] = "write") -> None:
    """Mark arrays as variables whose gradients go to ``gradients``."""
    autograd.mark_variables(variables, gradients, grad_reqs)


def backward(outputs: Sequence[NDArray], out_grads: Sequence[NDArray | None] | None = None,
             retain_graph: bool = False) -> None:
    """Compute the gradients of ``outputs`` into the marked variables' gradient arrays."""
    if not isinstance(outputs, (list, tuple)):
        raise TypeError(f"contrib.autograd.backward: outputs must be a list or tuple of "
                        f"NDArrays, got {type(outputs).__name__}")
    autograd.backward(list(outputs), head_grads=None if out_grads is None else list(out_grads),
                      retain_graph=retain_graph)


def compute_gradient(outputs: Sequence[NDArray]) -> None:
    """The deprecated name of :func:`backward` without head gradients."""
    backward(outputs)


def grad_and_loss(func: Callable[..., Any], argnum: int | Sequence[int] | None = None
                  ) -> Callable[..., tuple[list[NDArray], Any]]:
    """Wrap ``func`` so that a call returns ``(gradients, loss)``: the gradients of its
    output with respect to the arguments at ``argnum`` (default: all), each an NDArray."""

    @functools.wraps(func)
    def wrapped(*args: Any) -> tuple[list[NDArray], Any]:
        positions = range(len(args)) if argnum is None else (
            [argnum] if isinstance(argnum, int) else list(argnum))
        variables = [args[i] for i in positions]
        for i, x in zip(positions, variables):
            if not isinstance(x, NDArray):
                raise TypeError(f"contrib.autograd.grad: argument {i} is a "
                                f"{type(x).__name__}; differentiated arguments must be "
                                f"NDArrays")
        grads = [zeros_like(x) for x in variables]
        mark_variables(variables, grads)
        with train_section():
            outputs = func(*args)
        backward([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs

    return wrapped


def grad(func: Callable[..., Any], argnum: int | Sequence[int] | None = None
         ) -> Callable[..., list[NDArray]]:
    """Wrap ``func`` so that a call returns the gradients of :func:`grad_and_loss`."""
    with_loss = grad_and_loss(func, argnum)

    @functools.wraps(func)
    def wrapped(*args: Any) -> list[NDArray]:
        return with_loss(*args)[0]

    return wrapped
