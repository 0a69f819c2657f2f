"""The estimator: trains a Gluon network on a DataLoader, with event handlers doing the
per-batch and per-epoch work (gradient step, metrics, validation, logging,
checkpoints, stopping)."""

from __future__ import annotations

import copy
import logging
import sys
import warnings
from typing import Any

from .... import metric as _metric
from ....context import Context, cpu, gpu, num_gpus
from ..._errors import GluonAssertionError, GluonError, GluonValueError
from ...data import DataLoader
from ...loss import Loss
from ...trainer import Trainer
from ._checks import (
    check_event_handlers,
    check_handler_metric_ref,
    check_metrics,
    suggest_metric_for_loss,
)
from .batch_processor import BatchProcessor
from .event_handler import (
    BatchBegin,
    BatchEnd,
    EpochBegin,
    EpochEnd,
    GradientUpdateHandler,
    LoggingHandler,
    MetricHandler,
    StoppingHandler,
    TrainBegin,
    TrainEnd,
    ValidationHandler,
)

__all__ = ["Estimator"]


class Estimator:
    """Trains ``net`` with ``loss`` and evaluates it, driving event handlers.

    ``train_metrics`` / ``val_metrics``: an EvalMetric or a list of them.  Without
    training metrics the estimator tracks the loss (and accuracy for a softmax
    cross-entropy loss); without validation metrics it copies the training ones.  Their
    names get a ``'training '`` / ``'validation '`` prefix, which the logging handler
    reads.  ``initializer`` initializes the parts of ``net`` not initialized yet;
    ``trainer`` defaults to SGD with learning rate 0.001; ``context`` is a Context or a
    list of them (default: gpu(0) when there is a GPU, else cpu()).  ``val_net`` and
    ``val_loss`` (default: ``net`` and ``loss``) are used for validation; a ``val_net``
    usually shares ``net``'s parameters.  ``batch_processor`` (default
    :class:`BatchProcessor`) runs one batch.

    ``estimator.logger`` is a ``logging.Logger`` of its own writing INFO and above to
    standard output; add handlers to it to log elsewhere too.
    """

    logger: logging.Logger | None = None

    def __init__(self, net: Any, loss: Any, train_metrics: Any = None, val_metrics: Any = None,
                 initializer: Any = None, trainer: Any = None, context: Any = None,
                 val_net: Any = None, val_loss: Any = None, batch_processor: Any = None) -> None:
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = check_metrics(train_metrics)
        self._val_metrics = check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self.max_epoch: int | None = None
        self.max_batch: int | None = None
        self.batch_axis = 0
        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)

    # -- checks --------------------------------------------------------------------------
    @staticmethod
    def _check_loss(loss: Any) -> Any:
        if not isinstance(loss, Loss):
            raise GluonValueError(f"Estimator: loss must be a gluon.loss.Loss such as "
                                  f"gluon.loss.L2Loss(), got {loss!r}")
        return loss

    @staticmethod
    def _check_context(context: Any) -> list[Context]:
        available = [gpu(i) for i in range(num_gpus())]
        if not context:
            if len(available) > 1:
                warnings.warn("Estimator: several GPUs found, training on gpu(0) only; pass "
                              "context=[mx.gpu(0), mx.gpu(1), ...] to use them all",
                              stacklevel=3)
            return [available[0]] if available else [cpu()]
        if isinstance(context, Context):
            context = [context]
        elif not (isinstance(context, list) and all(isinstance(c, Context) for c in context)):
            raise GluonValueError(f"Estimator: context must be a Context or a list of them, "
                                  f"such as mx.cpu() or [mx.gpu(0), mx.gpu(1)], got "
                                  f"{context!r}")
        for ctx in context:
            if ctx.device_type != "cpu" and ctx not in available:
                choices = ", ".join(["mx.cpu()", *(f"mx.gpu({c.device_id})" for c in available)])
                raise GluonAssertionError(f"Estimator: {ctx} is not available here; use one "
                                          f"of {choices}")
        return context

    @staticmethod
    def _check_batch_processor(batch_processor: Any) -> Any:
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, "fit_batch", None))
                and callable(getattr(batch_processor, "evaluate_batch", None))):
            raise GluonValueError("Estimator: batch_processor must have fit_batch() and "
                                  "evaluate_batch() methods; subclass "
                                  "gluon.contrib.estimator.BatchProcessor")
        return batch_processor

    def _check_trainer(self, trainer: Any) -> Any:
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate "
                          "0.001 is used.", stacklevel=3)
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise GluonValueError(f"Estimator: trainer must be a gluon.Trainer, got "
                                  f"{trainer!r}")
        return trainer

    def _is_initialized(self) -> bool:
        try:
            for param in self.net.collect_params().values():
                param.list_ctx()
        except GluonError:
            return False
        return True

    def _initialize(self, initializer: Any) -> None:
        if not self._is_initialized():
            # initialize only what is not yet: a fine-tuned network keeps its weights
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization; "
                          "no initializer is needed for an initialized network (call "
                          "net.initialize(init=..., force_reinit=True) to re-initialize "
                          "it)", stacklevel=3)

    # -- metrics -------------------------------------------------------------------------
    def _add_default_training_metrics(self) -> None:
        if not self._train_metrics:
            suggested = suggest_metric_for_loss(self.loss)
            if suggested is not None:
                self._train_metrics = [suggested]
            self._train_metrics.append(_metric.Loss(self.loss.name.rstrip("0123456789")))
        for metric in self._train_metrics:
            metric.name = "training " + metric.name

    def _add_validation_metrics(self) -> None:
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            if "training" in metric.name:
                metric.name = metric.name.replace("training", "validation")
            else:
                metric.name = "validation " + metric.name

    @property
    def train_metrics(self) -> list[Any]:
        """The metrics updated during training (names prefixed ``'training '``)."""
        return self._train_metrics

    @property
    def val_metrics(self) -> list[Any]:
        """The metrics updated during validation (names prefixed ``'validation '``)."""
        return self._val_metrics

    # -- data ----------------------------------------------------------------------------
    @staticmethod
    def _check_data(data: Any, what: str) -> None:
        if not isinstance(data, DataLoader):
            raise GluonValueError(f"Estimator: {what} must be a gluon.data.DataLoader, got "
                                  f"{type(data).__name__}; wrap arrays or a DataIter's "
                                  f"contents as gluon.data.DataLoader(gluon.data."
                                  f"ArrayDataset(data, label), batch_size=...)")

    def _get_data_and_label(self, batch: Any, ctx: Any, batch_axis: int = 0
                            ) -> tuple[list[Any], list[Any]]:
        return self.batch_processor._get_data_and_label(batch, ctx, batch_axis)

    # -- running -------------------------------------------------------------------------
    def evaluate(self, val_data: Any, batch_axis: int = 0, event_handlers: Any = None) -> None:
        """Run ``val_net`` over ``val_data`` (a DataLoader of (data, label) batches,
        split over the contexts along ``batch_axis``), updating :attr:`val_metrics`.
        A MetricHandler and a LoggingHandler on the validation metrics are added to
        ``event_handlers`` unless it has its own."""
        self._check_data(val_data, "val_data")
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = \
            self._categorize_handlers(handlers)
        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def fit(self, train_data: Any, val_data: Any = None, epochs: int | None = None,
            event_handlers: Any = None, batches: int | None = None,
            batch_axis: int = 0) -> None:
        """Train on ``train_data`` (a DataLoader of (data, label) batches) for ``epochs``
        epochs or ``batches`` batches -- exactly one of the two.

        Besides ``event_handlers``, a StoppingHandler and, unless ``event_handlers`` has
        its own, a GradientUpdateHandler, a MetricHandler, a LoggingHandler and (with
        ``val_data``) a ValidationHandler are used."""
        self._check_data(train_data, "train_data")
        if bool(epochs) == bool(batches):
            raise GluonValueError(f"Estimator.fit: give exactly one of epochs and batches "
                                  f"(got epochs={epochs!r}, batches={batches!r})")
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis
        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(handlers)
        for handler in train_begin:
            handler.train_begin(self)
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            for batch in train_data:
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                # every handler sees the batch, even after one asked to stop
                stop = [handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                        for handler in batch_end]
                if any(stop):
                    break
            stop = [handler.epoch_end(self) for handler in epoch_end]
            if any(stop):
                break
        for handler in train_end:
            handler.train_end(self)

    def _prepare_default_handlers(self, val_data: Any, event_handlers: Any) -> list[Any]:
        handlers = check_event_handlers(event_handlers)
        added: list[Any] = [StoppingHandler(self.max_epoch, self.max_batch)]
        if not any(isinstance(h, GradientUpdateHandler) for h in handlers):
            added.append(GradientUpdateHandler())
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.train_metrics))
        if val_data and not any(isinstance(h, ValidationHandler) for h in handlers):
            added.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.train_metrics))
        mixing = bool(handlers)
        handlers.extend(added)
        if mixing:
            # the user's handlers and the added ones must watch the same metric objects
            known = self.train_metrics + self.val_metrics
            for handler in handlers:
                check_handler_metric_ref(handler, known)
        handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return handlers

    def _prepare_default_validation_handlers(self, event_handlers: Any) -> list[Any]:
        handlers = check_event_handlers(event_handlers)
        added: list[Any] = []
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.val_metrics))
        mixing = bool(handlers) and bool(added)
        handlers.extend(added)
        if mixing:
            for handler in handlers:
                check_handler_metric_ref(handler, self.val_metrics)
        handlers.sort(key=lambda h: getattr(h, "priority", 0))
        return handlers

    @staticmethod
    def _categorize_handlers(event_handlers: list[Any]) -> tuple[list[Any], ...]:
        """The handlers of each event: (train_begin, epoch_begin, batch_begin, batch_end,
        epoch_end, train_end)."""
        kinds = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)
        return tuple([h for h in event_handlers if isinstance(h, kind)] for kind in kinds)
