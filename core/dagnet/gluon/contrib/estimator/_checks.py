"""Checks the estimator and its event handlers share: which metrics an argument names,
whether a handler refers only to the estimator's metrics, and the metric a loss suggests."""

from __future__ import annotations

from typing import Any

from .... import metric as _metric
from ..._errors import GluonValueError
from ...loss import SoftmaxCrossEntropyLoss

__all__ = ["check_event_handlers", "check_handler_metric_ref", "check_metrics",
           "suggest_metric_for_loss"]


def check_metrics(metrics: Any) -> list[Any]:
    """``metrics`` as a list of EvalMetrics: one metric, a list of them, or None (no
    metric); a CompositeEvalMetric stands for the metrics it holds."""
    if isinstance(metrics, _metric.CompositeEvalMetric):
        return [m for child in metrics.metrics for m in check_metrics(child)]
    if isinstance(metrics, _metric.EvalMetric):
        return [metrics]
    if metrics is None:
        return []
    if isinstance(metrics, (list, tuple)) and all(
            isinstance(m, _metric.EvalMetric) for m in metrics):
        return list(metrics)
    raise GluonValueError(f"metrics must be an EvalMetric (such as mx.metric.Accuracy()) or "
                          f"a list of them, got {metrics!r}; metric names such as 'acc' are "
                          f"not accepted here, create the metric with mx.metric.create")


def _metric_refs(handler: Any) -> list[Any]:
    """The metrics ``handler`` holds in attributes named like ``metrics`` or ``monitor``."""
    found = []
    for attribute in vars(handler) if hasattr(handler, "__dict__") else ():
        if "metric" not in attribute and "monitor" not in attribute:
            continue
        value = getattr(handler, attribute)
        values = value if isinstance(value, (list, tuple)) else [value]
        found.extend(v for v in values if isinstance(v, _metric.EvalMetric))
    return found


def check_handler_metric_ref(handler: Any, known_metrics: Any) -> None:
    """Raise unless every metric ``handler`` refers to is one of ``known_metrics`` (the
    same objects, which the estimator updates)."""
    known = {id(m) for m in known_metrics}
    for metric in _metric_refs(handler):
        if id(metric) not in known:
            raise GluonValueError(
                f"event handler {type(handler).__name__} refers to the metric "
                f"{metric.name!r}, which is neither a training nor a validation metric of "
                f"this estimator, so nothing would update it; pass metrics taken from "
                f"estimator.train_metrics or estimator.val_metrics instead")


def suggest_metric_for_loss(loss: Any) -> Any:
    """The metric worth tracking beside ``loss`` (accuracy for a softmax cross-entropy
    loss), or None."""
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return _metric.Accuracy()
    return None


def check_event_handlers(handlers: Any) -> list[Any]:
    """``handlers`` (one handler, a list of them, or None) as a new list."""
    from .event_handler import EventHandler  # the handlers use this module's checks

    if isinstance(handlers, EventHandler):
        return [handlers]
    if handlers is None:
        return []
    handlers = list(handlers)
    bad = [h for h in handlers if not isinstance(h, EventHandler)]
    if bad:
        raise GluonValueError(f"event_handlers must be an event handler or a list of them "
                              f"(subclasses of TrainBegin, EpochEnd, ... in "
                              f"gluon.contrib.estimator), got {bad[0]!r}")
    return handlers
