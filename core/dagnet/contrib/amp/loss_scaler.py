"""Dynamic loss scaling: keep float16 gradients out of underflow without overflowing."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import numpy as np

from ... import autograd

__all__ = ["LossScaler"]

_log = logging.getLogger(__name__)


class LossScaler:
    """Scales the loss by ``loss_scale`` before backward; after each step,
    :meth:`has_overflow` looks for inf/nan gradients: on overflow the step is to be
    skipped and the scale halves, and after ``scale_seq_len`` clean steps in a row it
    doubles (never above ``max_loss_scale``)."""

    def __init__(self, init_scale: float = 2.0 ** 16, max_loss_scale: float = 2.0 ** 24,
                 scale_seq_len: int = 2000):
        if init_scale <= 0 or max_loss_scale < init_scale or scale_seq_len < 1:
            raise ValueError(
                f"LossScaler: need 0 < init_scale <= max_loss_scale and scale_seq_len >= 1, "
                f"got init_scale={init_scale}, max_loss_scale={max_loss_scale}, "
                f"scale_seq_len={scale_seq_len}")
        self._loss_scale = float(init_scale)
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = float(max_loss_scale)
        self._scale_seq_len = scale_seq_len
        self._unskipped = 0

    @property
    def loss_scale(self) -> float:
        """The scale the next backward multiplies the loss by."""
        return self._loss_scale

    def has_overflow(self, params: Iterable[Any]) -> bool:
        """Whether any gradient of ``params`` (gluon Parameters, or NDArray gradients)
        holds inf or nan; updates the scale for the next step."""
        with autograd.pause():
            overflow = any(not np.isfinite(grad.asnumpy()).all() for grad in _grads(params))
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.0
            self._unskipped = 0
            _log.info("AMP: decreasing loss scale to %f", self._next_loss_scale)
        else:
            self._unskipped += 1
            if self._unskipped == self._scale_seq_len:
                self._unskipped = 0
                self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
                _log.info("AMP: increasing loss scale to %f", self._next_loss_scale)
        return overflow


def _grads(params: Iterable[Any]) -> Iterable[Any]:
    for p in params:
        if hasattr(p, "list_grad"):
            if getattr(p, "grad_req", "write") != "null":
                yield from p.list_grad()
        elif p is not None:
            yield p
