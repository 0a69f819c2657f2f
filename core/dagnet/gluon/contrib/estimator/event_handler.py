"""The estimator's event handlers.

A handler subclasses one mix-in per event it reacts to (:class:`TrainBegin`,
:class:`EpochBegin`, :class:`BatchBegin`, :class:`BatchEnd`, :class:`EpochEnd`,
:class:`TrainEnd`); the estimator calls ``handler.<event>(estimator, **kwargs)`` on the
handlers of each event in ascending ``priority`` (0 when a handler has none).  A
``batch_end`` or ``epoch_end`` that returns True stops training.  ``batch_end`` gets the
keywords ``batch``, ``pred``, ``label`` and ``loss``.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import tempfile
import time
import warnings
from typing import Any

import numpy as np

from .... import metric as _metric
from ..._errors import GluonAssertionError, GluonError, GluonValueError
from ._checks import check_metrics

__all__ = ["TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd",
           "StoppingHandler", "MetricHandler", "ValidationHandler", "LoggingHandler",
           "CheckpointHandler", "EarlyStoppingHandler", "GradientUpdateHandler"]


class EventHandler:
    """Base of every event handler."""


class TrainBegin(EventHandler):
    """Reacts once, before the first epoch."""

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class TrainEnd(EventHandler):
    """Reacts once, after training stopped."""

    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class EpochBegin(EventHandler):
    """Reacts before every epoch (and before an evaluation pass)."""

    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class EpochEnd(EventHandler):
    """Reacts after every epoch (and after an evaluation pass); returning True stops
    training."""

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        return False


class BatchBegin(EventHandler):
    """Reacts before every batch."""

    def batch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        pass


class BatchEnd(EventHandler):
    """Reacts after every batch; returning True stops training."""

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        return False


def _comparison(mode: str, monitor: Any, who: str) -> Any:
    """``np.greater`` or ``np.less``: how ``who`` decides that ``monitor`` improved."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{who}: unknown mode {mode!r}, using 'auto' (expected one of auto, "
                      f"min, max)", RuntimeWarning, stacklevel=3)
        mode = "auto"
    if mode == "min":
        return np.less
    if mode == "max":
        return np.greater
    name = monitor.get()[0]
    name = name if isinstance(name, str) else " ".join(name)
    if "acc" in name.lower() or "f1" in name.lower():
        warnings.warn(f"{who}: {name} improves when it grows (mode='auto' chose 'max'); "
                      f"pass mode='max' or mode='min' to say so and silence this warning",
                      stacklevel=3)
        return np.greater
    warnings.warn(f"{who}: {name} improves when it shrinks (mode='auto' chose 'min'); "
                  f"pass mode='min' or mode='max' to say so and silence this warning",
                  stacklevel=3)
    return np.less


def _format_metrics(metrics: list[Any]) -> str:
    parts = []
    for metric in metrics:
        names, values = metric.get()
        if not isinstance(names, list):
            names, values = [names], [values]
        parts.extend(f"{name}: {value:.4f}" for name, value in zip(names, values))
    return ", ".join(parts)


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stops training after ``max_epoch`` epochs or ``max_batch`` batches (the estimator
    adds one, with the counts ``fit`` was given)."""

    def __init__(self, max_epoch: int | None = None, max_batch: int | None = None) -> None:
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Resets ``metrics`` at every epoch and updates them after every batch: a
    ``metric.Loss`` with the batch's loss values, any other metric with its labels and
    predictions.  Its default ``priority`` (-1000) runs it before the handlers that read
    the metrics."""

    def __init__(self, metrics: Any, priority: float = -1000) -> None:
        self.metrics = check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        pred, label, loss = kwargs["pred"], kwargs["label"], kwargs["loss"]
        for metric in self.metrics:
            if isinstance(metric, _metric.Loss):
                metric.update(0, loss)
            else:
                metric.update(label, pred)
        return False


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Runs ``eval_fn(val_data=..., batch_axis=..., event_handlers=...)`` (usually
    ``estimator.evaluate``) every ``epoch_period`` epochs and, when given, every
    ``batch_period`` batches; ``event_handlers`` are handed to ``eval_fn``."""

    def __init__(self, val_data: Any, eval_fn: Any, epoch_period: int | None = 1,
                 batch_period: int | None = None, priority: float = -1000,
                 event_handlers: Any = None) -> None:
        if not callable(eval_fn):
            raise GluonValueError(f"ValidationHandler: eval_fn must be callable, such as "
                                  f"estimator.evaluate, got {eval_fn!r}")
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.current_batch = 0
        self.current_epoch = 0

    def _evaluate(self, estimator: Any) -> None:
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._evaluate(estimator)
        return False

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._evaluate(estimator)
        return False


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs progress to ``estimator.logger``: the optimizer and learning rate at the
    start, ``metrics`` at the end of every epoch and of training, and, with an integer
    ``log_interval`` k, a line every k batches with the samples seen and the time spent
    since the last line.  Its default ``priority`` (infinity) runs it after every other
    handler, so it sees updated metrics."""

    def __init__(self, log_interval: int | str = "epoch", metrics: Any = None,
                 priority: float = math.inf) -> None:
        if log_interval != "epoch" and (not isinstance(log_interval, int)
                                        or isinstance(log_interval, bool)
                                        or log_interval <= 0):
            raise GluonValueError(f"LoggingHandler: log_interval must be a positive number "
                                  f"of batches or 'epoch', got {log_interval!r}")
        self.metrics = check_metrics(metrics)
        self.log_interval = log_interval
        self.priority = priority
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.log_interval_time = 0.0
        self.train_start = self.epoch_start = self.batch_start = time.time()

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning "
                              "rate %.4f ", type(trainer.optimizer).__name__,
                              trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0.0

    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        elapsed = time.time() - self.train_start
        msg = f"Train finished using total {int(elapsed)}s with {self.current_epoch} epochs."
        stats = _format_metrics(self.metrics)
        estimator.logger.info(f"{msg} {stats}" if stats else msg)

    def batch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        if isinstance(self.log_interval, int):
            self.log_interval_time += time.time() - self.batch_start
            batch = kwargs.get("batch")
            if batch is not None:
                first = batch[0] if isinstance(batch, (list, tuple)) else batch
                self.processed_samples += first.shape[0]
            if self.batch_index % self.log_interval == 0:
                msg = (f"[Epoch {self.current_epoch}][Batch {self.batch_index}]"
                       f"[Samples {self.processed_samples}] "
                       f"time/interval: {self.log_interval_time:.3f}s")
                stats = _format_metrics(self.metrics)
                estimator.logger.info(f"{msg} {stats}" if stats else msg)
                self.log_interval_time = 0.0
        self.batch_index += 1
        return False

    def _is_training(self) -> bool:
        # the estimator names its training metrics 'training ...'
        return any("training" in str(m.name) for m in self.metrics)

    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.epoch_start = time.time()
        if self._is_training():
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        elapsed = time.time() - self.epoch_start
        msg = f"[Epoch {self.current_epoch}] Finished in {elapsed:.3f}s"
        stats = _format_metrics(self.metrics)
        estimator.logger.info(f"{msg}, {stats}" if stats else msg)
        self.current_epoch += 1
        self.batch_index = 0
        return False


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves the network's parameters (``.params``) and the trainer's states
    (``.states``) every ``epoch_period`` epochs or ``batch_period`` batches, as
    ``{model_prefix}-epoch{E}batch{B}`` in ``model_dir``, keeping the newest
    ``max_checkpoints``; a hybridized network's graph goes to
    ``{model_prefix}-symbol.json`` after the first batch.

    With ``save_best``, a checkpoint ``{model_prefix}-best`` is also written whenever the
    metric ``monitor`` improves (``mode``: 'min', 'max', or 'auto' -- 'max' for accuracy
    and F1, 'min' otherwise).  With ``resume_from_checkpoint``, training starts from the
    newest checkpoint in ``model_dir`` and runs only the epochs (or batches) left.
    """

    def __init__(self, model_dir: str, model_prefix: str = "model", monitor: Any = None,
                 verbose: int = 0, save_best: bool = False, mode: str = "auto",
                 epoch_period: int | None = 1, batch_period: int | None = None,
                 max_checkpoints: int = 5, resume_from_checkpoint: bool = False) -> None:
        if save_best and not isinstance(monitor, _metric.EvalMetric):
            raise GluonValueError("CheckpointHandler: save_best=True needs a monitor, one of "
                                  "the metric objects in estimator.train_metrics or "
                                  "estimator.val_metrics")
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.monitor = monitor
        self.verbose = verbose
        self.save_best = save_best
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.current_batch = 0
        self.current_epoch = 0
        self.trained_epoch = -1
        self.trained_batch = -1
        self.saved_checkpoints: list[str] = []
        if save_best:
            self.monitor_op = _comparison(mode, monitor, "CheckpointHandler")
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        if self.resume_from_checkpoint:
            if estimator.max_batch and (not self.batch_period or self.epoch_period):
                raise GluonAssertionError(
                    "CheckpointHandler: to resume training by batches, save checkpoints by "
                    "batches only: give batch_period and set epoch_period=None")
            if estimator.max_epoch and (not self.epoch_period or self.batch_period):
                raise GluonAssertionError(
                    "CheckpointHandler: to resume training by epochs, save checkpoints by "
                    "epochs only: give epoch_period and set batch_period=None")
            self._resume_from_checkpoint(estimator)

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1
        return False

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1
        return False

    def _save_checkpoint(self, estimator: Any) -> None:
        epoch, batch = self.current_epoch, self.current_batch
        if self.resume_from_checkpoint and self.trained_epoch >= 0:
            # count on from the checkpoint training resumed from; at an epoch's end the
            # batch counter has already moved past the last batch
            epoch += self.trained_epoch + 1
            batch += self.trained_batch + (0 if estimator.max_epoch else 1)
        prefix = f"{self.model_prefix}-epoch{epoch}batch{batch}"
        self._save_params_and_trainer(estimator, prefix)
        self.saved_checkpoints.append(prefix)
        while len(self.saved_checkpoints) > self.max_checkpoints:
            self._remove_checkpoint(self.saved_checkpoints.pop(0))
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  self.current_batch + 1, self.model_dir, prefix)
        if self.save_best:
            self._save_if_best(estimator)

    def _save_if_best(self, estimator: Any) -> None:
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                f"CheckpointHandler: not saving the best model: {name} has no value yet; "
                f"monitor one of estimator.train_metrics or estimator.val_metrics"),
                stacklevel=3)
            return
        if self.monitor_op(value, self.best):
            prefix = f"{self.model_prefix}-best"
            self._save_params_and_trainer(estimator, prefix)
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f "
                                      "to %0.5f, updating best model at %s with prefix: %s",
                                      self.current_epoch, name, self.best, value,
                                      self.model_dir, prefix)
            self.best = value
        elif self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from "
                                  "%0.5f, skipping updating best model", self.current_epoch,
                                  name, self.best)

    def _save_symbol(self, estimator: Any) -> None:
        symbol_file = os.path.join(self.model_dir, f"{self.model_prefix}-symbol.json")
        export = getattr(estimator.net, "export", None)
        if export is not None:
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    written, _ = export(os.path.join(tmp, "net"))
                except GluonError:  # not hybridized, or not run hybridized yet
                    written = None
                if written is not None:
                    shutil.move(written, symbol_file)
                    return
        estimator.logger.info("Model architecture (symbol file) is not saved: build the "
                              "model from HybridBlocks and call net.hybridize() before "
                              "fitting to save it as %s.", symbol_file)

    def _save_params_and_trainer(self, estimator: Any, prefix: str) -> None:
        base = os.path.join(self.model_dir, prefix)
        estimator.net.save_parameters(base + ".params")
        estimator.trainer.save_states(base + ".states")

    def _remove_checkpoint(self, prefix: str) -> None:
        for ext in (".params", ".states"):
            path = os.path.join(self.model_dir, prefix + ext)
            if os.path.exists(path):
                os.remove(path)

    def _checkpoints_on_disk(self) -> list[tuple[int, int]]:
        pattern = re.compile(re.escape(self.model_prefix) + r"-epoch(\d+)batch(\d+)\.params$")
        found = []
        for fname in os.listdir(self.model_dir):
            match = pattern.match(fname)
            if match:
                found.append((int(match.group(1)), int(match.group(2))))
        return sorted(found)

    def _resume_from_checkpoint(self, estimator: Any) -> None:
        found = self._checkpoints_on_disk()
        self.saved_checkpoints = [f"{self.model_prefix}-epoch{e}batch{b}" for e, b in found]
        if not found:
            self.trained_epoch = self.trained_batch = -1
            left = (f"{estimator.max_batch} batches" if estimator.max_batch
                    else f"{estimator.max_epoch} epochs")
            estimator.logger.info("CheckpointHandler: no checkpoint found in %s, training "
                                  "from scratch for %s", self.model_dir, left)
            return
        self.trained_epoch, self.trained_batch = found[-1]
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise GluonValueError(
                    f"CheckpointHandler: the checkpoint in {self.model_dir} already finished "
                    f"epoch {self.trained_epoch} of {estimator.max_epoch}; train for more "
                    f"epochs, or pass resume_from_checkpoint=False to start from scratch")
            estimator.max_epoch -= self.trained_epoch + 1
            left = f"{estimator.max_epoch} epochs"
        else:
            if self.trained_batch >= estimator.max_batch - 1:
                raise GluonValueError(
                    f"CheckpointHandler: the checkpoint in {self.model_dir} already finished "
                    f"batch {self.trained_batch} of {estimator.max_batch}; train for more "
                    f"batches, or pass resume_from_checkpoint=False to start from scratch")
            estimator.max_batch -= self.trained_batch + 1
            left = f"{estimator.max_batch} batches"
        base = os.path.join(self.model_dir, self.saved_checkpoints[-1])
        if not os.path.exists(base + ".states"):
            raise GluonValueError(f"CheckpointHandler: cannot resume: {base}.params has no "
                                  f"trainer states beside it ({base}.states)")
        estimator.net.load_parameters(base + ".params", ctx=estimator.context)
        estimator.trainer.load_states(base + ".states")
        estimator.logger.warning("CheckpointHandler: resumed from epoch %d batch %d, training "
                                 "on for %s", self.trained_epoch, self.trained_batch, left)


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stops training when the metric ``monitor`` has not improved by more than
    ``min_delta`` for ``patience`` epochs (compared with ``baseline`` at first, when
    given).  ``mode``: 'min', 'max', or 'auto' ('max' for accuracy and F1, 'min'
    otherwise)."""

    def __init__(self, monitor: Any, min_delta: float = 0, patience: int = 0,
                 mode: str = "auto", baseline: float | None = None) -> None:
        if not isinstance(monitor, _metric.EvalMetric):
            raise GluonValueError("EarlyStoppingHandler: monitor must be one of the metric "
                                  "objects in estimator.train_metrics or "
                                  "estimator.val_metrics")
        if isinstance(monitor, _metric.CompositeEvalMetric):
            raise GluonValueError("EarlyStoppingHandler: a CompositeEvalMetric cannot be "
                                  "monitored; monitor one of the metrics it holds")
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.monitor_op = _comparison(mode, monitor, "EarlyStoppingHandler")
        # an improvement must beat the best value by min_delta in the improving direction
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.best = self._initial_best()

    def _initial_best(self) -> float:
        if self.baseline is not None:
            return self.baseline
        return np.inf if self.monitor_op is np.less else -np.inf

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.best = self._initial_best()

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                f"EarlyStoppingHandler: {name} has no value yet; monitor one of "
                f"estimator.train_metrics or estimator.val_metrics"), stacklevel=3)
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best = value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        if self.stopped_epoch > 0:
            estimator.logger.info("[Epoch %d] EarlyStoppingHandler: early stopping due to %s "
                                  "not improving", self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Steps the estimator's trainer after every batch, normalizing by the number of
    samples the batch's losses cover.  Its default ``priority`` (-2000) runs it first."""

    def __init__(self, priority: float = -2000) -> None:
        self.priority = priority

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        loss = kwargs["loss"]
        losses = loss if isinstance(loss, (list, tuple)) else [loss]
        batch_size = sum(value.shape[0] for value in losses)
        estimator.trainer.step(batch_size)
        return False
