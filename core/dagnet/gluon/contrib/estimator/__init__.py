"""``mx.gluon.contrib.estimator``: a training loop for Gluon networks
(:class:`Estimator`), the event handlers that do its work and that users add to it
(:mod:`.event_handler`), and the per-batch step (:class:`BatchProcessor`)."""

from __future__ import annotations

from . import batch_processor, estimator, event_handler
from .batch_processor import BatchProcessor
from .estimator import Estimator
from .event_handler import (
    BatchBegin,
    BatchEnd,
    CheckpointHandler,
    EarlyStoppingHandler,
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

__all__ = ["BatchBegin", "BatchEnd", "BatchProcessor", "CheckpointHandler",
           "EarlyStoppingHandler", "EpochBegin", "EpochEnd", "Estimator",
           "GradientUpdateHandler", "LoggingHandler", "MetricHandler", "StoppingHandler",
           "TrainBegin", "TrainEnd", "ValidationHandler", "batch_processor", "estimator",
           "event_handler"]
