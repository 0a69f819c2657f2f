"""``SVRGModule``: a Module trained with stochastic variance reduced gradients (Johnson
and Zhang, 2013).

Every ``update_freq`` epochs the module takes a snapshot of its weights and the mean
gradient of the whole training set at the snapshot (:meth:`SVRGModule.update_full_grads`,
computed by an auxiliary module holding the snapshot).  Each batch then steps with
``g(w) - g(w_snapshot) + mean_gradient(w_snapshot)`` -- the batch's gradient at the
current weights, corrected by its gradient at the snapshot -- through the optimizer given
to :meth:`SVRGModule.init_optimizer`.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ... import metric as _metric
from ... import ndarray as nd
from ... import optimizer as _optimizer
from ...base import as_list
from ...context import cpu
from ...initializer import Uniform
from ...model import BatchEndParam
from ...module import Module

__all__ = ["SVRGModule"]


class SVRGModule(Module):
    """A :class:`~dagnet.module.Module` (same arguments) that trains with SVRG;
    ``update_freq`` (a positive int) is how many epochs pass between two full-gradient
    snapshots.

    >>> mod = SVRGModule(symbol, data_names=['data'], label_names=['lin_reg_label'],
    ...                  update_freq=2)  # doctest: +SKIP
    >>> mod.fit(train_iter, eval_metric='mse', num_epoch=10)  # doctest: +SKIP
    """

    def __init__(self, symbol: Any, data_names: Any = ("data",),
                 label_names: Any = ("softmax_label",), logger: Any = logging,
                 context: Any = None, work_load_list: Any = None,
                 fixed_param_names: Any = None, state_names: Any = None,
                 group2ctxs: Any = None, compression_params: Any = None,
                 update_freq: int | None = None) -> None:
        if not isinstance(update_freq, int) or isinstance(update_freq, bool):
            raise TypeError(f"SVRGModule: update_freq must be an int, the number of epochs "
                            f"between two full-gradient computations, got {update_freq!r}")
        if update_freq <= 0:
            raise ValueError(f"SVRGModule: update_freq must be positive, got {update_freq}")
        context = cpu() if context is None else context
        super().__init__(symbol, data_names=data_names, label_names=label_names,
                         logger=logger, context=context, work_load_list=work_load_list,
                         fixed_param_names=fixed_param_names, state_names=state_names,
                         group2ctxs=group2ctxs, compression_params=compression_params)
        self.update_freq = update_freq
        # the module at the snapshot weights
        self._mod_aux = Module(symbol, data_names=data_names, label_names=label_names,
                               logger=logger, context=context, work_load_list=work_load_list,
                               fixed_param_names=fixed_param_names, state_names=state_names,
                               group2ctxs=group2ctxs, compression_params=compression_params)
        # per device: parameter name -> mean gradient of the training set at the snapshot
        self._param_dict: list[dict[str, Any]] | None = None
        self._ctx_len = len(self._context)

    # -- binding -------------------------------------------------------------------------
    def _reset_bind(self) -> None:
        super()._reset_bind()
        self._mod_aux._reset_bind()

    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False,
             shared_module: Any = None, grad_req: Any = "write") -> None:
        """Bind this module and, for training, the snapshot module (``shared_module``
        is MXNet's bucketing hook; dagnet's Module binds without one)."""
        if shared_module is not None:
            raise ValueError("SVRGModule.bind: shared_module is not supported: a Module "
                             "binds its own executors; bind without it")
        kwargs = {"label_shapes": label_shapes, "for_training": for_training,
                  "inputs_need_grad": inputs_need_grad, "force_rebind": force_rebind,
                  "grad_req": grad_req}
        super().bind(data_shapes, **kwargs)
        if for_training:
            self._mod_aux.bind(data_shapes, **kwargs)

    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        """Reshape both modules for batches of other shapes."""
        super().reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    # -- optimizer -----------------------------------------------------------------------
    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),),
                       force_init: bool = False) -> None:
        """Set up ``optimizer`` (a name with ``optimizer_params``, or an Optimizer) for the
        weights, wrapped in the SVRG optimizer, which with a key-value store also keeps
        the full gradients (keys ``<name>_full``)."""
        self._require("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        arg_params, _ = self.get_params()
        self._param_dict = [{name: nd.zeros(value.shape, ctx=ctx)
                             for name, value in arg_params.items()} for ctx in self._context]
        params = dict(optimizer_params)
        batch_size = self._exec_group.batch_size
        store_type = getattr(kvstore, "type", kvstore) or ""
        if "dist" in store_type and "_sync" in store_type:
            batch_size *= kvstore.num_workers
        params.setdefault("rescale_grad", 1.0 / batch_size)
        # Module.init_optimizer gives the optimizer the update indices' names
        params.pop("param_idx2name", None)
        svrg = _optimizer.create("_SVRGOptimizer", default_optimizer=optimizer,
                                 sym=self._symbol, **params)
        super().init_optimizer(kvstore=kvstore, optimizer=svrg, force_init=force_init)
        full_index = max(svrg.idx2name, default=-1) + 1
        for offset, name in enumerate(self._param_dict[0]):
            svrg.idx2name[full_index + offset] = name + "_full"
        svrg.default_opt.idx2name = dict(svrg.idx2name)
        if self._kvstore is not None:
            if self._update_on_kvstore:
                # a store may hold a copy of the optimizer: hand it the completed one
                self._kvstore.set_optimizer(svrg)
            group = self._exec_group
            for index, name in enumerate(group.param_names):
                self._kvstore.init(name + "_full", nd.zeros(self._arg_params[name].shape))
                if self._update_on_kvstore:
                    self._kvstore.pull(name + "_full", group.param_arrays[index],
                                       priority=-index)

    # -- running -------------------------------------------------------------------------
    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Forward this module and, in training, the snapshot module."""
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads: Any = None) -> None:
        """Backward this module and the snapshot module."""
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self) -> None:
        """Replace the gradients with the SVRG ones, then apply the optimizer."""
        self._update_svrg_gradients()
        super().update()

    def update_full_grads(self, train_data: Any) -> None:
        """Take the snapshot: copy the weights to the snapshot module and average its
        gradients over all of ``train_data`` (padding in the last batch not counted); with
        a key-value store, the averages are also summed over devices and workers."""
        if self._param_dict is None:
            raise self._state_error("update_full_grads")
        param_names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        for per_device in self._param_dict:
            for name in per_device:
                per_device[name][:] = 0
        train_data.reset()
        nbatch = 0
        padding = 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for k in range(self._ctx_len):
                for index, name in enumerate(param_names):
                    grad = self._mod_aux._exec_group.grad_arrays[index][k]
                    self._param_dict[k][name] += grad
            padding = batch.pad or 0
        batches = nbatch - padding / train_data.batch_size
        for name in param_names:
            grads = []
            for k in range(self._ctx_len):
                self._param_dict[k][name] /= batches
                grads.append(self._param_dict[k][name])
            if self._kvstore is not None:
                self._accumulate_kvstore(name, grads)

    def _accumulate_kvstore(self, key: str, value: list[Any]) -> None:
        """Sum ``value`` (one array per device) over devices and workers in the store, and
        give every device the mean over its devices."""
        self._kvstore.push(key + "_full", value)
        self._kvstore.barrier()
        self._kvstore.pull(key + "_full", value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key: str, value: list[Any]) -> None:
        for k in range(self._ctx_len):
            self._param_dict[k][key] = value[k] / self._ctx_len

    @staticmethod
    def _svrg_grads_update_rule(g_curr_batch_curr_weight: list[Any],
                                g_curr_batch_special_weight: list[Any],
                                g_special_weight_all_batch: list[Any]) -> list[Any]:
        """``g(w) - g(w_snapshot) + mean_gradient(w_snapshot)``, element by element, in
        place in the first list's arrays."""
        for index, grad in enumerate(g_curr_batch_curr_weight):
            grad -= g_curr_batch_special_weight[index]
            grad += g_special_weight_all_batch[index]
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self) -> None:
        if self._param_dict is None:
            raise self._state_error("update")
        group, aux_group = self._exec_group, self._mod_aux._exec_group
        for k in range(self._ctx_len):
            for index, name in enumerate(group.param_names):
                current = group.grad_arrays[index][k]
                if current is None:  # a fixed parameter
                    continue
                self._svrg_grads_update_rule([current], [aux_group.grad_arrays[index][k]],
                                             [self._param_dict[k][name]])

    def _state_error(self, what: str) -> Exception:
        from ...module import ModuleStateError

        return ModuleStateError(f"SVRGModule.{what}: call init_optimizer (or fit) first")

    # -- training ------------------------------------------------------------------------
    def fit(self, train_data: Any, eval_data: Any = None, eval_metric: Any = "acc",
            epoch_end_callback: Any = None, batch_end_callback: Any = None,
            kvstore: Any = "local", optimizer: Any = "sgd",
            optimizer_params: Any = (("learning_rate", 0.01),),
            eval_end_callback: Any = None, eval_batch_end_callback: Any = None,
            initializer: Any = None, arg_params: dict | None = None,
            aux_params: dict | None = None, allow_missing: bool = False,
            force_rebind: bool = False, force_init: bool = False, begin_epoch: int = 0,
            num_epoch: int | None = None, validation_metric: Any = None,
            monitor: Any = None) -> None:
        """Train as :meth:`Module.fit` does (same arguments; the default initializer is
        ``Uniform(0.01)``), taking a full-gradient snapshot at the start of every
        ``update_freq``-th epoch."""
        if num_epoch is None:
            raise ValueError("SVRGModule.fit: please specify the number of epochs "
                             "(num_epoch=...)")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=Uniform(0.01) if initializer is None else initializer,
                         arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            if epoch % self.update_freq == 0:
                self.update_full_grads(train_data)
            train_data.reset()
            nbatch = 0
            for data_batch in train_data:
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                self.update_metric(eval_metric, data_batch.label)
                if monitor is not None:
                    monitor.toc_print()
                if batch_end_callback is not None:
                    params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                           locals=locals())
                    for callback in as_list(batch_end_callback):
                        callback(params)
                nbatch += 1
            self._end_epoch(epoch, tic, eval_metric.get_name_value(), epoch_end_callback,
                            eval_data, validation_metric, eval_end_callback,
                            eval_batch_end_callback)
