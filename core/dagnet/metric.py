"""``dagnet.metric``: evaluation metrics, as ``mxnet.metric`` in MXNet 1.x.

A metric accumulates over batches: ``update(labels, preds)`` takes lists of
NDArrays (or numpy arrays, or one array each), ``get()`` returns
``(name, value)`` for everything since the last ``reset_local()``, and
``get_global()`` for everything since the last ``reset()``.

>>> import dagnet as mx
>>> acc = mx.metric.create('acc')
>>> acc.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1], [0.4, 0.6]])])
>>> acc.get()
('accuracy', 0.6666666666666666)

The values follow MXNet's definitions, including its choices: ``Accuracy``
takes predictions that already have the label's shape as class indices;
``F1``/``MCC`` with ``average='macro'`` average per *batch*; ``MAE``, ``MSE``
and ``RMSE`` average per batch, not per example.
"""

from __future__ import annotations

import json
import math
import numbers
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy

from ._argcheck import ArgumentTypeError, choice, integer
from ._errors import DagnetError, ParamError, ShapeError, UnknownNameError

__all__ = [
    "Accuracy",
    "Caffe",
    "CompositeEvalMetric",
    "CrossEntropy",
    "CustomMetric",
    "EvalMetric",
    "F1",
    "Loss",
    "MAE",
    "MCC",
    "MSE",
    "MetricError",
    "NegativeLogLikelihood",
    "PCC",
    "PearsonCorrelation",
    "Perplexity",
    "RMSE",
    "TopKAccuracy",
    "Torch",
    "alias",
    "check_label_shapes",
    "create",
    "np",
    "register",
]


class MetricError(DagnetError, ValueError):
    """Inputs a metric cannot evaluate, e.g. F1 given more than two classes."""


def _is_array(value: Any) -> bool:
    return isinstance(value, numpy.ndarray) or hasattr(value, "asnumpy")


def _host(value: Any) -> numpy.ndarray:
    return value.asnumpy() if hasattr(value, "asnumpy") else numpy.asarray(value)


def check_label_shapes(labels: Any, preds: Any, wrap: bool = False,
                       shape: bool = False) -> tuple[Any, Any]:
    """Check that ``labels`` and ``preds`` pair up: as many of each (or, with ``shape``,
    the same shape).  With ``wrap`` a single array is first made a one-element list."""
    if wrap:
        labels = [labels] if _is_array(labels) else labels
        preds = [preds] if _is_array(preds) else preds
    if shape:
        label_shape, pred_shape = labels.shape, preds.shape
    else:
        label_shape, pred_shape = len(labels), len(preds)
    if label_shape != pred_shape:
        what = "shape" if shape else "length"
        raise ShapeError(
            f"the {what} of labels {label_shape} does not match the {what} of predictions "
            f"{pred_shape}; pass one label array per prediction array, each with one label "
            f"per example")
    return labels, preds


class EvalMetric:
    """Base class of the metrics: accumulates ``sum_metric`` over ``num_inst`` instances.

    A subclass implements ``update``, adding to the local counters
    (``sum_metric``, ``num_inst``) and, when it passes ``has_global_stats=True``,
    to the global ones (``global_sum_metric``, ``global_num_inst``).
    ``output_names``/``label_names`` choose the arrays ``update_dict`` uses.
    """

    def __init__(self, name: str, output_names: list[str] | None = None,
                 label_names: list[str] | None = None, **kwargs: Any):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self) -> str:
        return f"EvalMetric: {dict(self.get_name_value())}"

    def get_config(self) -> dict[str, Any]:
        """The constructor arguments; ``create(**config)`` makes an equal metric."""
        config = dict(self._kwargs)
        config.update(metric=type(self).__name__, name=self.name,
                      output_names=self.output_names, label_names=self.label_names)
        return config

    def update_dict(self, label: Mapping[str, Any], pred: Mapping[str, Any]) -> None:
        """``update`` from name -> array mappings, using ``label_names``/``output_names``
        (all arrays, in order, when those are None)."""
        preds = list(pred.values()) if self.output_names is None else [
            pred[name] for name in self.output_names]
        labels = list(label.values()) if self.label_names is None else [
            label[name] for name in self.label_names]
        self.update(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        """Add one batch: ``labels`` and ``preds`` are lists of arrays, paired in order."""
        raise NotImplementedError(f"{type(self).__name__} must implement update(labels, preds)")

    def reset(self) -> None:
        """Clear the local and the global counters."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self) -> None:
        """Clear the local counters only (``get_global`` keeps counting)."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self) -> tuple[Any, Any]:
        """``(name, value)`` since the last ``reset_local``; the value is NaN before any update."""
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, self.sum_metric / self.num_inst

    def get_global(self) -> tuple[Any, Any]:
        """``(name, value)`` since the last ``reset`` (``get()`` for a metric that keeps
        no global counters)."""
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, self.global_sum_metric / self.global_num_inst

    @staticmethod
    def _pairs(name: Any, value: Any) -> list[tuple[str, Any]]:
        names = name if isinstance(name, list) else [name]
        values = value if isinstance(value, list) else [value]
        return list(zip(names, values))

    def get_name_value(self) -> list[tuple[str, Any]]:
        """``get()`` as a list of ``(name, value)`` pairs."""
        return self._pairs(*self.get())

    def get_global_name_value(self) -> list[tuple[str, Any]]:
        """``get_global()`` as a list of ``(name, value)`` pairs."""
        return self._pairs(*self.get_global())


_REGISTRY: dict[str, type[EvalMetric]] = {}


def register(klass: type[EvalMetric], name: str | None = None) -> type[EvalMetric]:
    """Make ``klass`` creatable by ``create(name)`` (its class name, lowercased, by default).

    Usable as a class decorator.  Registering a taken name replaces the old class
    with a warning, as in MXNet.
    """
    if not (isinstance(klass, type) and issubclass(klass, EvalMetric)):
        raise ArgumentTypeError(f"metric.register: expected a subclass of EvalMetric, got "
                                f"{klass!r}; derive your metric from dagnet.metric.EvalMetric")
    key = (klass.__name__ if name is None else name).lower()
    old = _REGISTRY.get(key)
    if old is not None and old is not klass:
        warnings.warn(f"metric {klass.__module__}.{klass.__name__} registered as {key!r} "
                      f"replaces {old.__module__}.{old.__name__}", UserWarning, stacklevel=2)
    _REGISTRY[key] = klass
    return klass


def alias(*aliases: str) -> Callable[[type[EvalMetric]], type[EvalMetric]]:
    """A class decorator registering the metric under each of ``aliases`` too."""

    def register_aliases(klass: type[EvalMetric]) -> type[EvalMetric]:
        for name in aliases:
            register(klass, name)
        return klass

    return register_aliases


def create(metric: Any, *args: Any, **kwargs: Any) -> EvalMetric:
    """A metric from a registered name or alias (``'acc'``, ``'ce'``, ``'top_k_accuracy'``,
    ...; any case), an EvalMetric (returned as is), an EvalMetric subclass, a config
    dict from ``get_config``, a function ``feval(label, pred)`` (a :class:`CustomMetric`)
    or a list of these (a :class:`CompositeEvalMetric`).  ``args``/``kwargs`` go to the
    constructor."""
    if isinstance(metric, type) and issubclass(metric, EvalMetric):
        return metric(*args, **kwargs)
    if isinstance(metric, EvalMetric):
        if args or kwargs:
            raise ArgumentTypeError(f"metric.create: {metric.name!r} is already a metric, so "
                                    f"constructor arguments cannot apply; pass its name instead")
        return metric
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, Mapping):
        config = dict(metric)
        return create(config.pop("metric"), *args, **config, **kwargs)
    if not isinstance(metric, str):
        raise ArgumentTypeError(f"metric.create: expected a metric name, an EvalMetric, a "
                                f"function or a list of them, got {type(metric).__name__}")
    if metric.startswith("["):  # MXNet's JSON form '["name", {kwargs}]'
        name, json_kwargs = json.loads(metric)
        return create(name, *args, **json_kwargs, **kwargs)
    if metric.startswith("{"):
        return create(json.loads(metric), *args, **kwargs)
    klass = _REGISTRY.get(metric.lower())
    if klass is None:
        raise UnknownNameError(
            f"unknown metric {metric!r}; expected one of {', '.join(sorted(_REGISTRY))} "
            f"(or register your own with dagnet.metric.register)")
    return klass(*args, **kwargs)


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns their names and values as lists."""

    def __init__(self, metrics: Sequence[Any] | None = None, name: str = "composite",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        self.metrics: list[EvalMetric] = []
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(m) for m in metrics or []]

    def add(self, metric: Any) -> None:
        """Add a child metric (anything :func:`create` accepts)."""
        self.metrics.append(create(metric))

    def get_metric(self, index: int) -> EvalMetric:
        """The child metric at ``index``."""
        try:
            return self.metrics[index]
        except IndexError:
            raise MetricError(f"metric index {index} is out of range: this composite holds "
                              f"{len(self.metrics)} metric(s)") from None

    def update_dict(self, labels: Mapping[str, Any], preds: Mapping[str, Any]) -> None:  # type: ignore[override]
        """Pass the arrays chosen by ``label_names``/``output_names`` on to every child."""
        if self.label_names is not None:
            labels = OrderedDict((k, v) for k, v in labels.items() if k in self.label_names)
        if self.output_names is not None:
            preds = OrderedDict((k, v) for k, v in preds.items() if k in self.output_names)
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels: Any, preds: Any) -> None:
        """Update every child with the same batch."""
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self) -> None:
        """Reset every child."""
        for metric in self.metrics:
            metric.reset()

    def reset_local(self) -> None:
        """Reset every child's local counters."""
        for metric in self.metrics:
            metric.reset_local()

    @staticmethod
    def _collect(results: list[tuple[Any, Any]]) -> tuple[list[str], list[Any]]:
        names: list[str] = []
        values: list[Any] = []
        for name, value in results:
            names.extend([name] if isinstance(name, str) else name)
            values.extend([value] if isinstance(value, numbers.Number) else value)
        return names, values

    def get(self) -> tuple[list[str], list[Any]]:
        """The children's names and values, as two lists."""
        return self._collect([m.get() for m in self.metrics])

    def get_global(self) -> tuple[list[str], list[Any]]:
        """The children's names and global values, as two lists."""
        return self._collect([m.get_global() for m in self.metrics])

    def get_config(self) -> dict[str, Any]:
        """The constructor arguments, with each child's config."""
        config = super().get_config()
        config["metrics"] = [m.get_config() for m in self.metrics]
        return config


@register
@alias("acc")
class Accuracy(EvalMetric):
    """The fraction of examples whose predicted class equals the label.

    A prediction with the label's shape is taken as class indices (truncated to
    int32); otherwise the class is its argmax along ``axis``.
    """

    def __init__(self, axis: int = 1, name: str = "accuracy",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        """Count the correct predictions of one batch."""
        labels, preds = check_label_shapes(labels, preds, wrap=True)
        for label, pred in zip(labels, preds):
            label, pred = _host(label), _host(pred)
            if pred.shape != label.shape:
                pred = numpy.argmax(pred, axis=self.axis)
            pred = pred.astype(numpy.int32).ravel()
            label = label.astype(numpy.int32).ravel()
            check_label_shapes(label, pred)
            correct = int((pred == label).sum())
            self.sum_metric += correct
            self.global_sum_metric += correct
            self.num_inst += len(pred)
            self.global_num_inst += len(pred)


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """The fraction of examples whose label is among the ``top_k`` highest-scored classes.

    ``top_k`` must be at least 2 (use :class:`Accuracy` for 1); the name is
    ``top_k_accuracy_<top_k>``.
    """

    def __init__(self, top_k: int = 1, name: str = "top_k_accuracy",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = integer("TopKAccuracy", "top_k", top_k, minimum=1)
        if self.top_k < 2:
            raise ParamError("TopKAccuracy: top_k must be at least 2; use Accuracy() (or "
                             "create('acc')) for top_k=1")
        self.name += f"_{self.top_k}"

    def update(self, labels: Any, preds: Any) -> None:
        """Count the examples of one batch whose label is in the top k."""
        labels, preds = check_label_shapes(labels, preds, wrap=True)
        for label, pred in zip(labels, preds):
            scores = _host(pred).astype(numpy.float32)
            if scores.ndim > 2:
                raise ShapeError(f"TopKAccuracy: predictions must be (batch, classes), got shape "
                                 f"{scores.shape}; reshape them to 2 dimensions")
            label = _host(label).astype(numpy.int32)
            check_label_shapes(label, scores)
            # The last k columns of the partition are the k best classes, in no order.
            k = min(scores.shape[-1], self.top_k)
            ranked = numpy.argpartition(scores, -k)
            if scores.ndim == 1:
                # One score per example: MXNet compares the partition with the labels.
                correct = int((ranked == label.ravel()).sum())
            else:
                num_classes = scores.shape[1]
                correct = sum(int((ranked[:, num_classes - 1 - j] == label.ravel()).sum())
                              for j in range(k))
            self.sum_metric += correct
            self.global_sum_metric += correct
            self.num_inst += scores.shape[0]
            self.global_num_inst += scores.shape[0]


class _BinaryStats:
    """True/false positive/negative counts, local and global, for F1 and MCC."""

    _COUNTS = ("tp", "fp", "fn", "tn")

    def __init__(self, owner: str):
        self.owner = owner
        self.reset()

    def reset_local(self) -> None:
        self.local = dict.fromkeys(self._COUNTS, 0)

    def reset(self) -> None:
        self.reset_local()
        self.glob = dict.fromkeys(self._COUNTS, 0)

    def update(self, label: Any, pred: Any) -> None:
        scores = _host(pred)
        label = _host(label).astype(numpy.int32)
        check_label_shapes(label, scores)
        if len(numpy.unique(label)) > 2:
            raise MetricError(f"{self.owner} supports binary classification only, but the "
                              f"labels hold {len(numpy.unique(label))} classes; use Accuracy "
                              f"for more classes")
        pred_true = numpy.argmax(scores, axis=1) == 1
        label_true = label == 1
        counts = {
            "tp": int((pred_true & label_true).sum()),
            "fp": int((pred_true & ~label_true).sum()),
            "fn": int((~pred_true & label_true).sum()),
            "tn": int((~pred_true & ~label_true).sum()),
        }
        for key, n in counts.items():
            self.local[key] += n
            self.glob[key] += n

    @staticmethod
    def total(c: dict[str, int]) -> int:
        return c["tp"] + c["fp"] + c["fn"] + c["tn"]

    @staticmethod
    def fscore(c: dict[str, int]) -> float:
        precision = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 0.0
        recall = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 0.0
        if precision + recall == 0:
            return 0.0
        return 2 * precision * recall / (precision + recall)

    @classmethod
    def matthewscc(cls, c: dict[str, int]) -> float:
        if not cls.total(c):
            return 0.0
        tp, fp, fn, tn = (float(c[k]) for k in cls._COUNTS)
        # An empty row or column of the confusion matrix counts as 1, not 0.
        denominator = math.prod(t for t in (tp + fp, tp + fn, tn + fp, tn + fn) if t != 0)
        return (tp * tn - fp * fn) / math.sqrt(denominator)


class _BinaryMetric(EvalMetric):
    """F1 and MCC: a score of the binary confusion counts, averaged per batch
    (``'macro'``) or computed once over all examples (``'micro'``)."""

    _score: Callable[[dict[str, int]], float]  # set by each subclass

    def __init__(self, name: str, output_names: list[str] | None, label_names: list[str] | None,
                 average: str):
        self.average = choice(type(self).__name__, "average", average, ("macro", "micro"))
        self.stats = _BinaryStats(type(self).__name__)
        super().__init__(name, output_names=output_names, label_names=label_names,
                         average=average, has_global_stats=True)

    def update(self, labels: Any, preds: Any) -> None:
        """Add one batch of 0/1 labels and (batch, 2) scores."""
        labels, preds = check_label_shapes(labels, preds, wrap=True)
        for label, pred in zip(labels, preds):
            self.stats.update(label, pred)
        local, glob = self.stats.local, self.stats.glob
        if self.average == "macro":
            # MXNet clears the global counts too after each batch, so the global value
            # is also a mean of per-batch scores.
            self.sum_metric += self._score(local)
            self.global_sum_metric += self._score(glob)
            self.num_inst += 1
            self.global_num_inst += 1
            self.stats.reset()
        else:
            self.sum_metric = self._score(local) * self.stats.total(local)
            self.global_sum_metric = self._score(glob) * self.stats.total(glob)
            self.num_inst = self.stats.total(local)
            self.global_num_inst = self.stats.total(glob)

    def reset(self) -> None:
        """Clear the local and the global counters."""
        super().reset()
        self.stats.reset()

    def reset_local(self) -> None:
        """Clear the local counters only."""
        super().reset_local()
        self.stats.reset_local()


@register
class F1(_BinaryMetric):
    """The F1 score ``2 * precision * recall / (precision + recall)`` of a binary
    classifier: labels 0/1, predictions (batch, 2) scores whose argmax is the class.

    ``average='macro'`` averages the score of each ``update`` call; ``'micro'``
    scores all examples together.
    """

    def __init__(self, name: str = "f1", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, average: str = "macro"):
        super().__init__(name, output_names, label_names, average)

    _score = staticmethod(_BinaryStats.fscore)


@register
class MCC(_BinaryMetric):
    """The Matthews correlation coefficient
    ``(TP*TN - FP*FN) / sqrt((TP+FP)(TP+FN)(TN+FP)(TN+FN))`` of a binary classifier
    (zero factors in the root count as 1); inputs and ``average`` as for :class:`F1`.
    """

    def __init__(self, name: str = "mcc", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, average: str = "macro"):
        super().__init__(name, output_names, label_names, average)

    _score = staticmethod(_BinaryStats.matthewscc)


@register
class PCC(EvalMetric):
    """The multiclass Matthews correlation coefficient (Gorodkin's R_K): the Pearson
    correlation of one-hot predictions and labels, read from the K x K confusion matrix.
    For two classes it equals :class:`MCC`; with more, its minimum lies between -1 and 0.

    Predictions are class scores (the argmax is taken) or class indices; the number of
    classes grows with the largest index seen.  ``get`` is nan while a row or column
    of the confusion matrix is empty.
    """

    def __init__(self, name: str = "pcc", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, has_global_stats: bool = True):
        self._k = 2
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    @staticmethod
    def _correlation(confusion: numpy.ndarray) -> float:
        n = confusion.sum()
        predicted, actual = confusion.sum(axis=1), confusion.sum(axis=0)
        spread_pred = float(numpy.sum(predicted * (n - predicted)))
        spread_true = float(numpy.sum(actual * (n - actual)))
        if spread_pred == 0 or spread_true == 0:
            return float("nan")
        agreement = float(numpy.sum(numpy.diagonal(confusion) * n - predicted * actual))
        return agreement / (spread_pred * spread_true) ** 0.5

    def _grow(self, classes: int) -> None:
        extra = classes - self._k
        if extra > 0:
            self._local = numpy.pad(self._local, ((0, extra), (0, extra)))
            self._global = numpy.pad(self._global, ((0, extra), (0, extra)))
            self._k = classes

    def update(self, labels: Any, preds: Any) -> None:
        """Add one batch to the confusion matrices."""
        labels, preds = check_label_shapes(labels, preds, wrap=True)
        for label, pred in zip(labels, preds):
            label, pred = _host(label).astype(numpy.int64).reshape(-1), _host(pred)
            pred = (pred.argmax(axis=1) if pred.ndim > 1 and pred.size != label.size
                    else pred.reshape(-1)).astype(numpy.int64)
            if pred.size != label.size:
                raise ShapeError(f"PCC: {label.size} labels for {pred.size} predictions; give "
                                 f"one class index or one score vector per label")
            if label.size and min(pred.min(), label.min()) < 0:
                raise ValueError("PCC: class indices must be >= 0")
            if label.size:
                self._grow(int(max(pred.max(), label.max())) + 1)
            batch = numpy.zeros((self._k, self._k))
            numpy.add.at(batch, (pred, label), 1)
            self._local += batch
            self._global += batch
        self.num_inst += 1
        self.global_num_inst += 1
        self.sum_metric = self._correlation(self._local) * self.num_inst
        self.global_sum_metric = self._correlation(self._global) * self.global_num_inst

    def reset(self) -> None:
        """Clear the local and global confusion matrices."""
        super().reset()
        self._global = numpy.zeros((self._k, self._k))
        self._local = numpy.zeros((self._k, self._k))

    def reset_local(self) -> None:
        """Clear the local confusion matrix."""
        super().reset_local()
        self._local = numpy.zeros((self._k, self._k))


@register
class Perplexity(EvalMetric):
    """``exp(-mean(log p))`` where ``p`` is the probability predicted for each label.

    Probabilities lie along ``axis`` of the prediction; labels equal to
    ``ignore_label`` (None: none) are left out; ``p`` is floored at 1e-10.
    """

    def __init__(self, ignore_label: int | None, axis: int = -1, name: str = "perplexity",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels: Any, preds: Any) -> None:
        """Add the log-probabilities of one batch's labels."""
        labels, preds = check_label_shapes(labels, preds, wrap=True)
        loss = 0.0
        num = 0
        for label, pred in zip(labels, preds):
            label, pred = _host(label), _host(pred)
            probs = numpy.moveaxis(pred, self.axis, -1)
            if label.size * probs.shape[-1] != probs.size:
                raise ShapeError(f"Perplexity: labels of shape {label.shape} do not match "
                                 f"predictions of shape {pred.shape}; give one label per "
                                 f"prediction vector along axis {self.axis}")
            label = label.reshape(-1)
            probs = probs.reshape(-1, probs.shape[-1])
            # Like nd.pick's default mode, out-of-range labels are clipped.
            index = numpy.clip(label.astype(numpy.int32), 0, probs.shape[1] - 1)
            picked = probs[numpy.arange(len(index)), index]
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(picked.dtype)
                num -= float(ignore.sum())
                picked = picked * (1 - ignore) + ignore
            loss -= float(numpy.log(numpy.maximum(picked.dtype.type(1e-10), picked)).sum())
            num += picked.size
        self.sum_metric += loss
        self.global_sum_metric += loss
        self.num_inst += num
        self.global_num_inst += num

    def get(self) -> tuple[str, float]:
        """``(name, perplexity)`` since the last ``reset_local``."""
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.sum_metric / self.num_inst)

    def get_global(self) -> tuple[str, float]:
        """``(name, perplexity)`` since the last ``reset``."""
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.global_sum_metric / self.global_num_inst)


class _RegressionMetric(EvalMetric):
    """MAE, MSE and RMSE: a mean error per batch, averaged over batches.

    A 1-d label or prediction is taken as a column, so ``(n,)`` labels against
    ``(n, k)`` predictions compare each label with every output.
    """

    _error: Callable[[numpy.ndarray], Any]  # set by each subclass

    def __init__(self, name: str, output_names: list[str] | None,
                 label_names: list[str] | None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, labels: Any, preds: Any) -> None:
        """Add the error of each label/prediction pair of one batch."""
        labels, preds = check_label_shapes(labels, preds, wrap=True)
        for label, pred in zip(labels, preds):
            label, pred = _host(label), _host(pred)
            label = label.reshape(-1, 1) if label.ndim == 1 else label
            pred = pred.reshape(-1, 1) if pred.ndim == 1 else pred
            try:
                diff = label - pred
            except ValueError:
                raise ShapeError(f"{type(self).__name__}: labels of shape {label.shape} cannot "
                                 f"be compared with predictions of shape {pred.shape}; give "
                                 f"them the same shape") from None
            # A Python float, so the sums accumulate in float64 as MXNet's do.
            error = float(self._error(diff))
            self.sum_metric += error
            self.global_sum_metric += error
            self.num_inst += 1
            self.global_num_inst += 1


@register
class MAE(_RegressionMetric):
    """Mean absolute error ``mean(|label - pred|)``, averaged over batches."""

    def __init__(self, name: str = "mae", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(diff: numpy.ndarray) -> Any:
        return numpy.abs(diff).mean()


@register
class MSE(_RegressionMetric):
    """Mean squared error ``mean((label - pred)**2)``, averaged over batches."""

    def __init__(self, name: str = "mse", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(diff: numpy.ndarray) -> Any:
        return (diff**2.0).mean()


@register
class RMSE(_RegressionMetric):
    """Root mean squared error ``sqrt(mean((label - pred)**2))`` of each batch, averaged
    over batches (not the root of the overall mean)."""

    def __init__(self, name: str = "rmse", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(diff: numpy.ndarray) -> Any:
        return numpy.sqrt((diff**2.0).mean())


class _LikelihoodMetric(EvalMetric):
    """CrossEntropy and NegativeLogLikelihood: ``mean(-log(p[label] + eps))`` over examples,
    for predictions of shape (batch, classes) holding probabilities."""

    def __init__(self, eps: float, name: str, output_names: list[str] | None,
                 label_names: list[str] | None):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels: Any, preds: Any) -> None:
        """Add the negative log-probabilities of one batch's labels."""
        labels, preds = check_label_shapes(labels, preds, wrap=True)
        for label, pred in zip(labels, preds):
            label, pred = _host(label).ravel(), _host(pred)
            if label.shape[0] != pred.shape[0]:
                raise ShapeError(f"{type(self).__name__}: {label.shape[0]} labels for "
                                 f"{pred.shape[0]} predictions (shape {pred.shape}); give "
                                 f"one class index per example")
            prob = pred[numpy.arange(label.shape[0]), numpy.int64(label)]
            loss = float((-numpy.log(prob + self.eps)).sum())
            self.sum_metric += loss
            self.global_sum_metric += loss
            self.num_inst += label.shape[0]
            self.global_num_inst += label.shape[0]


@register
@alias("ce")
class CrossEntropy(_LikelihoodMetric):
    """Cross-entropy ``mean(-log(p[label] + eps))`` of predicted probabilities."""

    def __init__(self, eps: float = 1e-12, name: str = "cross-entropy",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("nll_loss")
class NegativeLogLikelihood(_LikelihoodMetric):
    """Negative log-likelihood ``mean(-log(p[label] + eps))`` of predicted probabilities."""

    def __init__(self, eps: float = 1e-12, name: str = "nll-loss",
                 output_names: list[str] | None = None, label_names: list[str] | None = None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of predictions and labels: the mean of each batch's
    (``average='macro'``) or one correlation over all examples (``'micro'``)."""

    def __init__(self, name: str = "pearsonr", output_names: list[str] | None = None,
                 label_names: list[str] | None = None, average: str = "macro"):
        self.average = choice("PearsonCorrelation", "average", average, ("macro", "micro"))
        super().__init__(name, output_names=output_names, label_names=label_names,
                         average=average, has_global_stats=True)

    def reset(self) -> None:
        """Clear the counters (and the running moments for ``'micro'``)."""
        super().reset()
        # Running count, means, sums of squared deviations and co-deviation (Welford).
        self._n = 0
        self._mean_label = self._mean_pred = 0.0
        self._ss_label = self._ss_pred = self._co = 0.0

    def update(self, labels: Any, preds: Any) -> None:
        """Add one batch of labels and predictions of equal shapes."""
        labels, preds = check_label_shapes(labels, preds, wrap=True)
        for label, pred in zip(labels, preds):
            label, pred = _host(label), _host(pred)
            check_label_shapes(label, pred, shape=True)
            label = label.ravel().astype(numpy.float64)
            pred = pred.ravel().astype(numpy.float64)
            self.num_inst += 1
            self.global_num_inst += 1
            if self.average == "macro":
                corr = numpy.corrcoef(pred, label)[0, 1]
                self.sum_metric += corr
                self.global_sum_metric += corr
            else:
                self._n += len(label)
                self._mean_label, self._ss_label = self._welford(
                    label, self._n, self._mean_label, self._ss_label)
                # The co-moment pairs the updated label mean with the previous prediction mean.
                self._co += numpy.sum((label - self._mean_label) * (pred - self._mean_pred))
                self._mean_pred, self._ss_pred = self._welford(
                    pred, self._n, self._mean_pred, self._ss_pred)

    @staticmethod
    def _welford(values: numpy.ndarray, count: int, mean: float,
                 squares: float) -> tuple[float, float]:
        delta = values - mean
        mean = mean + numpy.sum(delta / count)
        return mean, squares + numpy.sum(delta * (values - mean))

    def _micro(self) -> float:
        n = self._n
        return self._co / ((n - 1) * numpy.sqrt(self._ss_pred / (n - 1))
                           * numpy.sqrt(self._ss_label / (n - 1)))

    def get(self) -> tuple[str, float]:
        """``(name, correlation)``."""
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, self.sum_metric / self.num_inst if self.average == "macro" else \
            self._micro()

    def get_global(self) -> tuple[str, float]:
        """``(name, correlation)`` since the last ``reset`` (with ``'micro'`` the running
        moments always span that, where MXNet reports 0.0)."""
        if self.average == "macro" or self.global_num_inst == 0:
            return super().get_global()
        return self.name, self._micro()


@register
class Loss(EvalMetric):
    """The mean of the predictions themselves, for outputs that already are losses
    (labels are ignored)."""

    def __init__(self, name: str = "loss", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _: Any, preds: Any) -> None:
        """Add the sum and count of one batch's loss values."""
        for pred in [preds] if _is_array(preds) else preds:
            pred = _host(pred)
            loss = float(pred.sum())
            self.sum_metric += loss
            self.global_sum_metric += loss
            self.num_inst += pred.size
            self.global_num_inst += pred.size


@register
class Torch(Loss):
    """:class:`Loss` under the name MXNet gave its Torch criterions."""

    def __init__(self, name: str = "torch", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """:class:`Loss` under the name MXNet gave its Caffe criterions."""

    def __init__(self, name: str = "caffe", output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric from a function ``feval(label, pred)`` of numpy arrays, called for each
    label/prediction pair, returning a value (one instance) or ``(sum, count)``.

    The name is ``feval``'s (``custom(<lambda>)`` for a lambda) unless ``name`` is
    given; ``allow_extra_outputs`` permits more predictions than labels (e.g. an
    RNN's states), the extra ones being ignored.
    """

    def __init__(self, feval: Callable[[Any, Any], Any], name: str | None = None,
                 allow_extra_outputs: bool = False, output_names: list[str] | None = None,
                 label_names: list[str] | None = None):
        if not callable(feval):
            raise ArgumentTypeError(f"CustomMetric: feval must be a function (label, pred) -> "
                                    f"value, got {type(feval).__name__}")
        if name is None:
            name = getattr(feval, "__name__", type(feval).__name__)
            if "<" in name:
                name = f"custom({name})"
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels: Any, preds: Any) -> None:
        """Call ``feval`` on each label/prediction pair of one batch."""
        if self._allow_extra_outputs:
            labels = [labels] if _is_array(labels) else labels
            preds = [preds] if _is_array(preds) else preds
        else:
            labels, preds = check_label_shapes(labels, preds, wrap=True)
        for pred, label in zip(preds, labels):
            value = self._feval(_host(label), _host(pred))
            total, count = value if isinstance(value, tuple) else (value, 1)
            self.sum_metric += total
            self.global_sum_metric += total
            self.num_inst += count
            self.global_num_inst += count


def np(numpy_feval: Callable[[Any, Any], Any], name: str | None = None,
       allow_extra_outputs: bool = False) -> CustomMetric:
    """A :class:`CustomMetric` from a function of numpy arrays ``(label, pred) -> float``,
    named after the function unless ``name`` is given."""

    def feval(label: numpy.ndarray, pred: numpy.ndarray) -> Any:
        return numpy_feval(label, pred)

    feval.__name__ = getattr(numpy_feval, "__name__", type(numpy_feval).__name__)
    return CustomMetric(feval, name, allow_extra_outputs)
