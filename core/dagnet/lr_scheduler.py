"""Learning-rate schedules (MXNet's ``mx.lr_scheduler``).

A scheduler is called with ``num_update``, the largest number of updates any
weight has had, and returns the learning rate for the next update.  Every
schedule may start with a warmup of ``warmup_steps`` updates that goes from
``warmup_begin_lr`` to ``base_lr``, linearly or at a constant rate.

As in MXNet, :class:`FactorScheduler` and :class:`MultiFactorScheduler` keep
their progress in ``base_lr`` and expect ``num_update`` never to decrease; an
:class:`~dagnet.optimizer.Optimizer` given a ``learning_rate`` overwrites
``base_lr``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

from ._argcheck import ArgumentTypeError, choice, integer, real
from ._errors import ParamError

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]

_log = logging.getLogger(__name__)


class LRScheduler:
    """Base class of the learning-rate schedules: ``base_lr`` and the warmup.

    During warmup (``num_update < warmup_steps``) the rate is, for
    ``warmup_mode='linear'``,
    ``warmup_begin_lr + (base_lr - warmup_begin_lr) * num_update / warmup_steps``,
    and ``warmup_begin_lr`` for ``warmup_mode='constant'``.  Subclasses define
    ``__call__(num_update)`` for the rest.
    """

    def __init__(self, base_lr: float = 0.01, warmup_steps: int = 0,
                 warmup_begin_lr: float = 0, warmup_mode: str = "linear") -> None:
        owner = type(self).__name__
        self.base_lr = real(owner, "base_lr", base_lr)
        self.warmup_steps = integer(owner, "warmup_steps", warmup_steps, minimum=0)
        self.warmup_final_lr = self.base_lr
        self.warmup_begin_lr = real(owner, "warmup_begin_lr", warmup_begin_lr)
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ParamError(
                f"{owner}: warmup_begin_lr={warmup_begin_lr} is above base_lr={base_lr}; "
                f"warmup raises the rate to base_lr, so pass a smaller warmup_begin_lr")
        self.warmup_mode = choice(owner, "warmup_mode", warmup_mode, ("linear", "constant"))

    def get_warmup_lr(self, num_update: int) -> float:
        """The rate at update ``num_update`` of the warmup (``num_update < warmup_steps``)."""
        if num_update >= self.warmup_steps:
            raise ParamError(f"{type(self).__name__}.get_warmup_lr: update {num_update} is past "
                             f"the warmup of {self.warmup_steps} steps")
        if self.warmup_mode == "constant":
            return self.warmup_begin_lr
        fraction = num_update / self.warmup_steps
        return self.warmup_begin_lr + (self.warmup_final_lr - self.warmup_begin_lr) * fraction

    def __call__(self, num_update: int) -> float:
        """The learning rate after ``num_update`` updates (the most any weight has had)."""
        raise NotImplementedError(f"{type(self).__name__} must define __call__(num_update)")


class FactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` every ``step`` updates, not below ``stop_factor_lr``:
    ``max(base_lr * factor ** floor((num_update - 1) / step), stop_factor_lr)`` after warmup
    (the first drop comes at update ``step + 1``, as in MXNet)."""

    def __init__(self, step: int, factor: float = 1, stop_factor_lr: float = 1e-8,
                 base_lr: float = 0.01, warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.step = integer("FactorScheduler", "step", step, minimum=1)
        self.factor = real("FactorScheduler", "factor", factor, maximum=1.0)
        self.stop_factor_lr = real("FactorScheduler", "stop_factor_lr", stop_factor_lr)
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr = max(self.base_lr * self.factor, self.stop_factor_lr)
            _log.info("Update[%d]: learning rate is now %0.5e", num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the rate by ``factor`` once each update count in ``step`` is passed:
    ``base_lr * factor ** k`` where ``k`` counts the steps below ``num_update``."""

    def __init__(self, step: Sequence[int], factor: float = 1, base_lr: float = 0.01,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.step = _increasing_steps(step)
        self.factor = real("MultiFactorScheduler", "factor", factor, maximum=1.0)
        self.cur_step_ind = 0
        self.count = 0

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            _log.info("Update[%d]: learning rate is now %0.5e", num_update, self.base_lr)
        return self.base_lr


def _increasing_steps(step: Sequence[int]) -> list[int]:
    if not isinstance(step, (list, tuple)) or not step:
        raise ArgumentTypeError(f"MultiFactorScheduler: step must be a non-empty list of update "
                                f"counts such as [1000, 2000], got {step!r}")
    steps = [integer("MultiFactorScheduler", "step[i]", s, minimum=1) for s in step]
    if any(b <= a for a, b in zip(steps, steps[1:])):
        raise ParamError(f"MultiFactorScheduler: step must be strictly increasing, got {steps}")
    return steps


class _DecayToFinal(LRScheduler):
    """A decay from ``base_lr`` to ``final_lr`` over ``max_update - warmup_steps`` updates,
    shaped by :meth:`_shape` of the fraction done; ``final_lr`` from then on."""

    def __init__(self, max_update: int, base_lr: float, final_lr: float, warmup_steps: int,
                 warmup_begin_lr: float, warmup_mode: str) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        owner = type(self).__name__
        self.max_update = integer(owner, "max_update", max_update, minimum=1)
        if self.max_update <= self.warmup_steps:
            raise ParamError(f"{owner}: max_update={max_update} must be above "
                             f"warmup_steps={warmup_steps}, or no update is left to decay over")
        self.base_lr_orig = self.base_lr
        self.final_lr = real(owner, "final_lr", final_lr)
        self.max_steps = self.max_update - self.warmup_steps

    def _shape(self, fraction: float) -> float:
        raise NotImplementedError

    def __call__(self, num_update: int) -> float:
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            fraction = (num_update - self.warmup_steps) / self.max_steps
            span = self.base_lr_orig - self.final_lr
            self.base_lr = self.final_lr + span * self._shape(fraction)
        return self.base_lr


class PolyScheduler(_DecayToFinal):
    """Polynomial decay after warmup:
    ``final_lr + (base_lr - final_lr) * (1 - (num_update - warmup_steps) / max_steps) ** pwr``
    with ``max_steps = max_update - warmup_steps``; ``final_lr`` after ``max_update``."""

    def __init__(self, max_update: int, base_lr: float = 0.01, pwr: float = 2,
                 final_lr: float = 0, warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear") -> None:
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)
        self.power = real("PolyScheduler", "pwr", pwr)

    def _shape(self, fraction: float) -> float:
        return (1 - fraction) ** self.power


class CosineScheduler(_DecayToFinal):
    """Cosine decay after warmup:
    ``final_lr + (base_lr - final_lr) * (1 + cos(pi * k / max_steps)) / 2`` with
    ``k = num_update - warmup_steps`` and ``max_steps = max_update - warmup_steps``;
    ``final_lr`` after ``max_update``."""

    def __init__(self, max_update: int, base_lr: float = 0.01, final_lr: float = 0,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear") -> None:
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)

    def _shape(self, fraction: float) -> float:
        return (1 + math.cos(math.pi * fraction)) / 2
