"""``dagnet.callback``: the callbacks MXNet's training loops call, logging progress and
saving checkpoints.

Batch-end callbacks receive a :class:`dagnet.model.BatchEndParam`
(``epoch``, ``nbatch``, ``eval_metric``, ``locals``); epoch-end callbacks
receive ``(epoch, symbol, arg_params, aux_params)``.  Messages go to the
``dagnet.callback`` logger, in MXNet's wording.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

from ._argcheck import integer

__all__ = ["Speedometer", "ProgressBar", "LogValidationMetricsCallback", "do_checkpoint",
           "module_checkpoint", "log_train_metric"]

_log = logging.getLogger(__name__)


def do_checkpoint(prefix: str, period: int = 1) -> Callable[[int, Any, Any, Any], None]:
    """An epoch-end callback saving ``prefix-symbol.json`` and ``prefix-%04d.params``
    every ``period`` epochs, numbered from 1 (after the first epoch: ``prefix-0001``)."""
    period = max(1, int(period))

    def _checkpoint(iter_no: int, sym: Any, arg: Any, aux: Any) -> None:
        from .model import save_checkpoint

        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)

    return _checkpoint


def module_checkpoint(mod: Any, prefix: str, period: int = 1,
                      save_optimizer_states: bool = False) -> Callable[..., None]:
    """An epoch-end callback calling ``mod.save_checkpoint`` every ``period`` epochs,
    with the optimizer states too when ``save_optimizer_states``."""
    period = max(1, int(period))

    def _checkpoint(iter_no: int, sym: Any = None, arg: Any = None, aux: Any = None) -> None:
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)

    return _checkpoint


def log_train_metric(period: int, auto_reset: bool = False) -> Callable[[Any], None]:
    """A batch-end callback logging ``Iter[epoch] Batch[n] Train-<name>=<value>`` every
    ``period`` batches; ``auto_reset`` starts the metric's local counts afresh after."""
    period = integer("log_train_metric", "period", period, minimum=1)

    def _log_metric(param: Any) -> None:
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                _log.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name,
                          value)
            if auto_reset:
                param.eval_metric.reset_local()

    return _log_metric


class Speedometer:
    """A batch-end callback logging the training speed (samples per second) and the
    metric every ``frequent`` batches.

    With ``auto_reset`` the metric's local counts restart after each message, so each
    line covers the last ``frequent`` batches (``Batch [40-50]``); without it, the
    whole epoch so far (``Batch [0-50]``).
    """

    def __init__(self, batch_size: int, frequent: int = 50, auto_reset: bool = True) -> None:
        self.batch_size = integer("Speedometer", "batch_size", batch_size, minimum=1)
        self.frequent = integer("Speedometer", "frequent", frequent, minimum=1)
        self.auto_reset = auto_reset
        self.init = False
        self.tic = 0.0
        self.last_count = 0

    def __call__(self, param: Any) -> None:
        """Time the batch ``param.nbatch`` and log every ``frequent`` batches."""
        count = param.nbatch
        if self.last_count > count:  # a new epoch began
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent != 0:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else float("inf")
        if param.eval_metric is not None:
            name_value = param.eval_metric.get_name_value()
            values = [item for pair in name_value for item in pair]
            if self.auto_reset:
                param.eval_metric.reset_local()
                msg = "Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + "\t%s=%f" * len(
                    name_value)
                _log.info(msg, param.epoch, count - self.frequent, count, speed, *values)
            else:
                msg = "Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec" + "\t%s=%f" * len(
                    name_value)
                _log.info(msg, param.epoch, count, speed, *values)
        else:
            _log.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count, speed)
        self.tic = time.time()


class ProgressBar:
    """A batch-end callback logging a bar of ``length`` characters filled to the share of
    ``total`` batches done: ``[====------] 40%``."""

    def __init__(self, total: int, length: int = 80) -> None:
        self.total = integer("ProgressBar", "total", total, minimum=1)
        self.bar_len = integer("ProgressBar", "length", length, minimum=1)

    def __call__(self, param: Any) -> None:
        """Log the bar for batch ``param.nbatch``."""
        count = param.nbatch
        filled = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        bar = "=" * filled + "-" * (self.bar_len - filled)
        _log.info("[%s] %s%s\r", bar, percents, "%")


class LogValidationMetricsCallback:
    """An eval-end callback logging ``Epoch[epoch] Validation-<name>=<value>``."""

    def __call__(self, param: Any) -> None:
        """Log every metric value of ``param.eval_metric``."""
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            _log.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
