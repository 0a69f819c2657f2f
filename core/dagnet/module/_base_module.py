"""``BaseModule``: the training, scoring and prediction loops every module shares,
written against the module interface (bind, init_params, forward, backward, update,
...) that :class:`~dagnet.module.Module` implements."""

from __future__ import annotations

import copy
import logging
import time
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .._errors import DagnetError
from ..initializer import Uniform
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["BaseModule", "ModuleStateError"]

_log = logging.getLogger("dagnet.module")

# MXNet's default initializer, shared as a default argument (initializers keep no state)
DEFAULT_INITIALIZER = Uniform(0.01)


class ModuleStateError(DagnetError, RuntimeError):
    """A module method called before the step it needs: ``bind``, ``init_params`` or
    ``init_optimizer``."""


def _as_list(obj: Any) -> list[Any]:
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def _notify(callbacks: Any, epoch: int, nbatch: int, eval_metric: Any,
            local_vars: dict[str, Any]) -> None:
    """Call each of ``callbacks`` (one, a list, or None) with a ``BatchEndParam``, as MXNet
    calls batch-end and score-end callbacks."""
    if callbacks is None:
        return
    from ..model import BatchEndParam

    params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                           locals=local_vars)
    for callback in _as_list(callbacks):
        callback(params)


def check_input_names(symbol: Any, names: list[str], typename: str, throw: bool) -> None:
    """Check every name in ``names`` is an argument of ``symbol``: an error (``throw``)
    or a warning naming the arguments that look like inputs."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [arg for arg in args if not arg.endswith(
            ("_weight", "_bias", "_gamma", "_beta"))]
        msg = (f"You created Module with Module(..., {typename}_names={names}) but input with "
               f"name {name!r} is not found in symbol.list_arguments(). Did you mean one of:"
               f"\n\t" + "\n\t".join(candidates))
        if throw:
            raise ValueError(msg)
        warnings.warn(msg, stacklevel=3)


def parse_data_desc(data_names: list[str], label_names: list[str], data_shapes: Any,
                    label_shapes: Any) -> tuple[list[DataDesc], list[DataDesc] | None]:
    """``data_shapes``/``label_shapes`` (DataDescs or ``(name, shape)`` pairs) as DataDescs,
    after checking they name the module's data and labels."""
    data = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in data_shapes]
    _check_names_match(data_names, data, "data", True)
    if label_shapes is None:
        _check_names_match(label_names, [], "label", False)
        return data, None
    labels = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in label_shapes]
    _check_names_match(label_names, labels, "label", False)
    return data, labels


def _check_names_match(names: list[str], shapes: list[DataDesc], what: str,
                       throw: bool) -> None:
    given = [d.name for d in shapes]
    if sorted(names) == sorted(given):
        return
    msg = (f"Data provided by {what}_shapes don't match names specified by {what}_names "
           f"({shapes} vs. {names})")
    if throw:
        raise ValueError(msg)
    warnings.warn(msg, stacklevel=4)


class BaseModule:
    """The loops shared by modules: :meth:`fit`, :meth:`score`, :meth:`predict`,
    :meth:`iter_predict`, and saving/loading parameters.

    A module goes through ``bind`` (allocate for input shapes), ``init_params``,
    ``init_optimizer``; the flags :attr:`binded`, :attr:`params_initialized` and
    :attr:`optimizer_initialized` say how far.
    """

    def __init__(self, logger: Any = None) -> None:
        self.logger = logger if logger is not None else _log
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol: Any = None

    def _require(self, what: str, binded: bool = True, params: bool = False,
                 optimizer: bool = False) -> None:
        if binded and not self.binded:
            raise ModuleStateError(f"{what}: call bind(data_shapes, label_shapes) first")
        if params and not self.params_initialized:
            raise ModuleStateError(f"{what}: call init_params() (or set_params) first")
        if optimizer and not self.optimizer_initialized:
            raise ModuleStateError(f"{what}: call init_optimizer() first")

    # -- composite steps ---------------------------------------------------------------
    def forward_backward(self, data_batch: DataBatch) -> None:
        """A training step's forward and backward passes."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data: DataIter, eval_metric: Any, num_batch: int | None = None,
              batch_end_callback: Any = None, score_end_callback: Any = None,
              reset: bool = True, epoch: int = 0) -> list[tuple[str, float]]:
        """Run the module on ``eval_data`` (at most ``num_batch`` batches) and return
        ``eval_metric``'s ``[(name, value), ...]``.  As in MXNet, the examples that pad a
        last batch are scored too."""
        from .. import metric

        self._require("score", params=True)
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(eval_batch, is_train=False)
            self.update_metric(eval_metric, eval_batch.label)
            _notify(batch_end_callback, epoch, nbatch, eval_metric, locals())
            actual_num_batch += 1
        _notify(score_end_callback, epoch, actual_num_batch, eval_metric, locals())
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data: DataIter, num_batch: int | None = None,
                     reset: bool = True) -> Iterator[tuple[list[Any], int, DataBatch]]:
        """Yield ``(outputs, nbatch, batch)`` per batch, the outputs without the padding."""
        self._require("iter_predict", params=True)
        if reset:
            eval_data.reset()
        for nbatch, eval_batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(eval_batch, is_train=False)
            pad = eval_batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, eval_batch

    def predict(self, eval_data: Any, num_batch: int | None = None, merge_batches: bool = True,
                reset: bool = True, always_output_list: bool = False) -> Any:
        """The outputs for every batch of ``eval_data`` (a DataIter, or one NDArray or
        numpy batch), the padding of a last batch cut off.

        With ``merge_batches`` each output's batches are joined: one NDArray for a
        single output (unless ``always_output_list``), else a list; without it, a list
        per batch of its outputs."""
        from .. import ndarray

        self._require("predict", params=True)
        if isinstance(eval_data, (ndarray.NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = ndarray.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise TypeError(f"predict: eval_data must be a DataIter (such as "
                            f"mx.io.NDArrayIter) or an NDArray, got {type(eval_data).__name__}")
        output_list = [[out.copy() for out in outputs]
                       for outputs, _, _ in self.iter_predict(eval_data, num_batch, reset)]
        if not output_list:
            return output_list
        if not merge_batches:
            return output_list
        num_outputs = len(output_list[0])
        if any(len(outputs) != num_outputs for outputs in output_list):
            raise ValueError("predict: cannot merge batches, as the number of outputs is not "
                             "the same in every batch (bucketing?); pass merge_batches=False")
        merged = [ndarray.concat(*[outputs[i] for outputs in output_list], dim=0)
                  if len(output_list) > 1 else output_list[0][i] for i in range(num_outputs)]
        if num_outputs == 1 and not always_output_list:
            return merged[0]
        return merged

    def fit(self, train_data: DataIter, eval_data: DataIter | None = None,
            eval_metric: Any = "acc", epoch_end_callback: Any = None,
            batch_end_callback: Any = None, kvstore: Any = "local", optimizer: Any = "sgd",
            optimizer_params: Any = (("learning_rate", 0.01),),
            eval_end_callback: Any = None, eval_batch_end_callback: Any = None,
            initializer: Any = DEFAULT_INITIALIZER, arg_params: dict | None = None,
            aux_params: dict | None = None, allow_missing: bool = False,
            force_rebind: bool = False, force_init: bool = False, begin_epoch: int = 0,
            num_epoch: int | None = None, validation_metric: Any = None,
            monitor: Any = None) -> None:
        """Train on ``train_data`` for epochs ``begin_epoch`` to ``num_epoch - 1``: bind,
        initialize the parameters and the optimizer, then per batch forward, backward,
        update and the metric; per epoch log ``Epoch[i] Train-<metric>=...`` and
        ``Epoch[i] Time cost=...``, call ``epoch_end_callback(epoch, symbol, arg_params,
        aux_params)`` and, with ``eval_data``, log ``Epoch[i] Validation-<metric>=...``."""
        from .. import metric

        if num_epoch is None:
            raise ValueError("fit: please specify the number of epochs (num_epoch=...)")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params,
                         aux_params=aux_params, allow_missing=allow_missing,
                         force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        epoch_eval_metric = copy.deepcopy(eval_metric)

        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            epoch_eval_metric.reset()
            eval_name_vals: list[tuple[str, float]] = []
            data_iter = iter(train_data)
            next_batch = _next_or_none(data_iter)
            if next_batch is None:
                raise ValueError(f"fit: train_data gave no batch in epoch {epoch}; an iterator "
                                 f"left at its end (by predict or score) needs reset() first")
            nbatch = 0
            while next_batch is not None:
                data_batch = next_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                self.update_metric(eval_metric, data_batch.label)
                self.update_metric(epoch_eval_metric, data_batch.label)
                next_batch = _next_or_none(data_iter)
                if monitor is not None:
                    monitor.toc_print()
                if next_batch is None:
                    eval_name_vals = epoch_eval_metric.get_global_name_value()
                _notify(batch_end_callback, epoch, nbatch, eval_metric, locals())
                nbatch += 1
            self._end_epoch(epoch, tic, eval_name_vals, epoch_end_callback, eval_data,
                            validation_metric, eval_end_callback, eval_batch_end_callback)
            train_data.reset()

    def _end_epoch(self, epoch: int, tic: float, train_values: list[tuple[str, float]],
                   epoch_end_callback: Any, eval_data: Any, validation_metric: Any,
                   eval_end_callback: Any, eval_batch_end_callback: Any) -> None:
        """What ``fit`` does after an epoch's batches: log the training metric and the
        time, synchronize the parameters, call the epoch-end callbacks, score
        ``eval_data`` and log it."""
        for name, value in train_values:
            self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, value)
        self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
        arg, aux = self.get_params()
        self.set_params(arg, aux)
        if epoch_end_callback is not None:
            for callback in _as_list(epoch_end_callback):
                callback(epoch, self.symbol, arg, aux)
        if eval_data is not None:
            results = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
            for name, value in results:
                self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, value)

    # -- parameters on disk --------------------------------------------------------------
    def save_params(self, fname: str) -> None:
        """Write the parameters to ``fname`` as ``arg:<name>``/``aux:<name>`` arrays."""
        from .. import ndarray
        from ..context import cpu

        arg_params, aux_params = self.get_params()
        saved = {f"arg:{k}": v.as_in_context(cpu()) for k, v in arg_params.items()}
        saved.update({f"aux:{k}": v.as_in_context(cpu()) for k, v in aux_params.items()})
        ndarray.save(fname, saved)

    def load_params(self, fname: str) -> None:
        """Set the parameters from a file written by :meth:`save_params`."""
        from .. import ndarray

        saved = ndarray.load(fname)
        arg_params, aux_params = {}, {}
        items = saved.items() if isinstance(saved, dict) else []
        for key, value in items:
            kind, _, name = key.partition(":")
            if kind == "arg":
                arg_params[name] = value
            elif kind == "aux":
                aux_params[name] = value
            else:
                raise ValueError(f"load_params: invalid param file {fname!r}: key {key!r} does "
                                 f"not start with 'arg:' or 'aux:'")
        self.set_params(arg_params, aux_params)

    # -- the interface a module implements ------------------------------------------------
    @property
    def symbol(self) -> Any:
        """The symbol the module runs."""
        return self._symbol

    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False,
             grad_req: Any = "write") -> None:
        """Allocate the executors for inputs of ``data_shapes`` and ``label_shapes``."""
        raise NotImplementedError(f"{type(self).__name__} must implement bind")

    def init_params(self, *args: Any, **kwargs: Any) -> None:
        """Initialize the parameters."""
        raise NotImplementedError(f"{type(self).__name__} must implement init_params")

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(arg_params, aux_params)``."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_params")

    def set_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any],
                   allow_missing: bool = False, force_init: bool = True,
                   allow_extra: bool = False) -> None:
        """Set the parameters from name -> array dicts: :meth:`init_params` without an
        initializer (every parameter must be given unless ``allow_missing``)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def init_optimizer(self, *args: Any, **kwargs: Any) -> None:
        """Set up the optimizer."""
        raise NotImplementedError(f"{type(self).__name__} must implement init_optimizer")

    def forward(self, data_batch: DataBatch, is_train: bool | None = None) -> None:
        """Run the forward pass on one batch."""
        raise NotImplementedError(f"{type(self).__name__} must implement forward")

    def backward(self, out_grads: Any = None) -> None:
        """Run the backward pass."""
        raise NotImplementedError(f"{type(self).__name__} must implement backward")

    def update(self) -> None:
        """Apply the optimizer to the gradients of the last backward pass."""
        raise NotImplementedError(f"{type(self).__name__} must implement update")

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """The outputs of the last forward pass."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_outputs")

    def update_metric(self, eval_metric: Any, labels: Sequence[Any],
                      pre_sliced: bool = False) -> None:
        """Add the last outputs and ``labels`` to ``eval_metric``."""
        raise NotImplementedError(f"{type(self).__name__} must implement update_metric")

    def install_monitor(self, mon: Any) -> None:
        """Let ``mon`` watch the executors."""
        raise NotImplementedError(f"{type(self).__name__} must implement install_monitor")


def _next_or_none(iterator: Iterator[DataBatch]) -> DataBatch | None:
    try:
        return next(iterator)
    except StopIteration:
        return None

