"""``gluon.Trainer``: applies an optimizer to a set of parameters, summing their
gradients over devices through a KVStore (``'device'`` by default, none for one device)
and updating either on the store (``update_on_kvstore``) or on each device."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import autograd
from .. import kvstore as kvs
from .. import optimizer as opt
from ._errors import GluonAssertionError, GluonError, GluonTypeError, GluonValueError
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer", "StaleGradientError"]


class StaleGradientError(GluonError, UserWarning):
    """A parameter's gradient was not computed since the last step (MXNet raises this
    ``UserWarning``); pass ``ignore_stale_grad=True`` to skip such parameters."""


def _create_kvstore(kvstore: Any, num_device: int, arg_params: Mapping[str, Any]
                    ) -> tuple[Any, bool]:
    """The store to use (None: none needed) and whether updates may run on it."""
    update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        store = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        store = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            store = None  # one device on one machine: nothing to sum
        else:
            store = kvs.create(kvstore)
            if kvstore == "local":
                largest = max(int(np.prod(p.shape)) for p in arg_params.values())
                if largest > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise GluonTypeError(f"kvstore must be KVStore, str or None, got "
                             f"{type(kvstore).__name__}")
    if store is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= store.is_capable(kvs.KVStoreBase.OPTIMIZER)
    return store, update_on_kvstore


class Trainer:
    """Updates ``params`` (a ParameterDict, dict or list of Parameters) with
    ``optimizer`` (a name with ``optimizer_params``, or an Optimizer).

    Call :meth:`step` after ``backward``: it sums the gradients over devices
    (:meth:`allreduce_grads`) and updates (:meth:`update`), dividing the gradient by
    ``batch_size``.  Each parameter's ``lr_mult``/``wd_mult`` apply.

    Sparse parameters (MXNet's rules): with a row_sparse weight the store always
    holds the weights and updates them (``update_on_kvstore`` cannot be False), and
    the parameter reads its rows with ``row_sparse_data``; with dense weights and
    row_sparse gradients the gradients are pushed and pulled back (row_sparse) and
    each device updates lazily, unless ``update_on_kvstore=True``."""

    def __init__(self, params: Any, optimizer: Any, optimizer_params: Mapping | None = None,
                 kvstore: Any = "device", compression_params: Any = None,
                 update_on_kvstore: bool | None = None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise GluonValueError(f"First argument must be a list or dict of Parameters, got "
                                  f"{type(params)}.")
        self._params: list[Parameter] = []
        self._param2idx: dict[str, int] = {}
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise GluonValueError(f"First argument must be a list or dict of Parameters, "
                                      f"got list of {type(param)}.")
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
            self._contains_sparse_weight |= param._stype != "default"
            self._contains_sparse_grad |= param._grad_stype != "default"
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, dict(optimizer_params) if optimizer_params else {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._kvstore: Any = None
        self._update_on_kvstore: bool | None = None
        self._distributed: bool | None = None
        self._params_to_init: list[Parameter] = []
        self._reset_kvstore()

    def _check_contexts(self) -> list:
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise GluonAssertionError(
                    f"All Parameters must be initialized on the same set of contexts, but "
                    f"Parameter {param.name} is initialized on {ctx} while previous Parameters "
                    f"are initialized on {contexts}.")
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer: Any, optimizer_params: dict) -> None:
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise GluonAssertionError("optimizer_params must be None if optimizer is an "
                                          "instance of Optimizer instead of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts or [None]]

    def _init_params(self) -> None:
        if not self._kv_initialized:
            raise GluonAssertionError("Cannot initialize parameters in KVStore when KVStore is "
                                      "not initialized.")
        remaining = []
        if self._kvstore:
            for param in self._params_to_init:
                if param._deferred_init:
                    remaining.append(param)
                    continue
                arrays = param._check_and_get(param._data, list)
                if param._stype != "default":  # read back with row_sparse_pull
                    self._kvstore.init(self._param2idx[param.name], arrays[0])
                else:
                    self._kvstore.broadcast(self._param2idx[param.name], arrays[0], arrays)
        self._params_to_init = remaining

    def _reset_kvstore(self) -> None:
        if self._kvstore and "dist" in self._kvstore.type:
            raise GluonError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_sparse_kvstore(self) -> tuple[Any, bool]:
        """The store and ``update_on_kvstore`` when some parameter is sparse."""
        config = self._kvstore_params
        if self._contains_sparse_weight:
            # the weights live in the store, which updates them: always a store
            kind = config["kvstore"]
            if isinstance(kind, kvs.KVStoreBase):
                store = kind
            elif isinstance(kind, str):
                store = kvs.create(kind)
            else:
                raise GluonTypeError(f"Cannot create a {kind!r} KVStore with row_sparse "
                                     f"parameters; kvstore must be a KVStore or a str")
            self._distributed = "dist" in store.type
            if config["update_on_kvstore"] is False:
                raise GluonValueError("Cannot set update_on_kvstore=False when sparse weights "
                                      "are present.")
            return store, True
        arg_arrays = {param.name: param._check_and_get(param._data, self._contexts[0])
                      for param in self._params}
        store, _ = _create_kvstore(config["kvstore"], len(self._contexts), arg_arrays)
        self._distributed = "dist" in store.type if store else False
        update_on_kvstore = self._distributed
        if config["update_on_kvstore"] is not None:
            if config["update_on_kvstore"] is False and self._distributed:
                raise GluonValueError("Cannot set update_on_kvstore=False on dist kvstore when "
                                      "sparse gradients are present.")
            update_on_kvstore = config["update_on_kvstore"]
        return store, update_on_kvstore

    def _init_kvstore(self) -> None:
        config = self._kvstore_params
        if self._contains_sparse_weight or self._contains_sparse_grad:
            store, update_on_kvstore = self._init_sparse_kvstore()
            self._set_kvstore(store, update_on_kvstore)
            return
        arg_arrays = {param.name: param.data(self._contexts[0]) for param in self._params}
        store, update_on_kvstore = _create_kvstore(config["kvstore"], len(self._contexts),
                                                   arg_arrays)
        self._distributed = "dist" in store.type if store else False
        if self._distributed and "async" in store.type:
            update_on_kvstore = True
            if config["update_on_kvstore"] is False:
                raise GluonValueError("Please set update_on_kvstore=True when training in async "
                                      "mode.")
        if config["update_on_kvstore"] is not None:
            update_on_kvstore = config["update_on_kvstore"]
        if update_on_kvstore and store is not None and not store.is_capable("optimizer"):
            if config["update_on_kvstore"]:
                raise GluonValueError(f"Please set update_on_kvstore=False when training with "
                                      f"{type(store)}")
            update_on_kvstore = False
        self._set_kvstore(store, update_on_kvstore)

    def _set_kvstore(self, store: Any, update_on_kvstore: bool) -> None:
        if store:
            if self._compression_params:
                store.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                store.set_optimizer(self._optimizer)
            self._kvstore = store
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    @property
    def learning_rate(self) -> float:
        """The optimizer's current learning rate."""
        return self._optimizer.learning_rate

    @property
    def optimizer(self) -> opt.Optimizer:
        """The optimizer."""
        return self._optimizer

    def set_learning_rate(self, lr: float) -> None:
        """Set the optimizer's learning rate."""
        self._optimizer.set_learning_rate(lr)

    def _row_sparse_pull(self, parameter: Parameter, out: Any, row_id: Any,
                         full_idx: bool = False) -> None:
        """Pull the rows ``row_id`` of ``parameter`` from the store into ``out`` (every
        row with ``full_idx``)."""
        with autograd.pause():  # the store writes the weights, as MXNet's engine does
            self._ready()
        if self._kvstore is None:
            raise GluonError(f"Parameter '{parameter.name}' has no store to pull rows from; "
                             f"sparse weights need a KVStore")
        idx = self._param2idx[parameter.name]
        with autograd.pause():
            if full_idx and "dist" not in self._kvstore.type:
                self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
            else:
                self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    def _check_and_rescale_grad(self, scale: float) -> None:
        if self._update_on_kvstore and self._distributed and self._kv_initialized:
            if self._optimizer.rescale_grad != scale:
                raise GluonValueError("Possible change in the `batch_size` from previous `step` "
                                      "detected. Optimizer gradient normalizing factor will not "
                                      "change w.r.t new batch_size when update_on_kvstore=True "
                                      "and when distributed kvstore is used.")
        self._optimizer.rescale_grad = scale

    def _ready(self) -> None:
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    def step(self, batch_size: int, ignore_stale_grad: bool = False) -> None:
        """Sum the gradients over devices and update every parameter, with the gradient
        divided by ``batch_size``."""
        self._check_and_rescale_grad(self._scale / batch_size)
        self._ready()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self) -> None:
        """Sum the gradients over devices (for a manual :meth:`update` after, e.g.,
        gradient clipping); not with ``update_on_kvstore``."""
        self._ready()
        if self._kvstore and self._update_on_kvstore:
            raise GluonAssertionError("allreduce_grads() when parameters are updated on "
                                      "kvstore is not supported. Try setting "
                                      "`update_on_kvstore` to False when creating trainer.")
        self._allreduce_grads()

    def _allreduce_grads(self) -> None:
        if not self._kvstore:
            return
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            grads = param.list_grad()
            if grads[0].stype != "default":  # push, then pull dense weights or the sums
                self._kvstore.push(i, grads, priority=-i)
                if param._stype == "default":
                    out = param.list_data() if self._update_on_kvstore else grads
                    self._kvstore.pull(i, out, priority=-i, ignore_sparse=self._distributed)
            elif self._update_on_kvstore:
                self._kvstore.pushpull(i, grads, out=param.list_data(), priority=-i)
            else:
                self._kvstore.pushpull(i, grads, out=grads, priority=-i)

    def update(self, batch_size: int, ignore_stale_grad: bool = False) -> None:
        """Update every parameter from its (already summed) gradient divided by
        ``batch_size``; not with ``update_on_kvstore``."""
        self._ready()
        if self._kvstore and self._update_on_kvstore:
            raise GluonAssertionError("update() when parameters are updated on kvstore is not "
                                      "supported. Try setting `update_on_kvstore` to False when "
                                      "creating trainer.")
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad: bool = False) -> None:
        updates: list[list] = [[] for _ in self._updaters]
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            if not ignore_stale_grad:
                for data in param._check_and_get(param._data, list):
                    if not data._fresh_grad:
                        raise StaleGradientError(
                            f"Gradient of Parameter `{param.name}` on context {data.context} "
                            f"has not been updated by backward since last `step`. This could "
                            f"mean a bug in your model that made it only use a subset of the "
                            f"Parameters (Blocks) for this iteration. If you are intentionally "
                            f"only using a subset, call step with ignore_stale_grad=True to "
                            f"suppress this warning and skip updating of Parameters with stale "
                            f"gradient")
            arrays = param._check_and_get(param._data, list)
            if self._kvstore and self._update_on_kvstore:
                for data in arrays:
                    data._fresh_grad = False
                continue
            for upd, arr, grad in zip(updates, arrays, param.list_grad()):
                if not ignore_stale_grad or arr._fresh_grad:
                    upd.append((i, grad, arr))
                    arr._fresh_grad = False
        if not (self._kvstore and self._update_on_kvstore):
            for updater, upd in zip(self._updaters, updates):
                if upd:
                    indices, grads, weights = zip(*upd)
                    updater(list(indices), list(grads), list(weights))

    def save_states(self, fname: str) -> None:
        """Write the optimizer and its states to ``fname``."""
        self._ready()
        if self._update_on_kvstore:
            if self._params_to_init:
                raise GluonAssertionError("Cannot save trainer states when some parameters are "
                                          "not yet initialized in kvstore.")
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            with open(fname, "wb") as fout:
                fout.write(self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname: str) -> None:
        """Read the optimizer and its states written by :meth:`save_states`."""
        self._ready()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            with open(fname, "rb") as f:
                states = f.read()
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
