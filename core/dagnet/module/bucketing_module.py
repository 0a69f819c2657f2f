"""``BucketingModule``: one :class:`Module` per bucket (a symbol per input length,
say), all sharing one set of parameters, gradients and optimizer (MXNet's
``mx.mod.BucketingModule``)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import ndarray
from .._errors import DagnetError
from ..context import Context, cpu
from ..io import DataBatch
from ..name import NameManager
from ._base_module import DEFAULT_INITIALIZER, BaseModule, ModuleStateError, check_input_names
from ._module import Module
from .executor_group import DataParallelExecutorGroup

__all__ = ["BucketingModule"]

_CPU = cpu()


class BucketingModule(BaseModule):
    """Trains a network whose symbol depends on a bucket key (a sequence length,
    typically): ``sym_gen(key)`` returns ``(symbol, data_names, label_names)``.

    Binding creates the default bucket's :class:`Module`; a batch with another
    ``bucket_key`` creates (once) that bucket's module, bound to the same parameter,
    gradient and auxiliary arrays and using the same optimizer, so training any
    bucket trains them all.  The other arguments are :class:`Module`'s.
    """

    def __init__(self, sym_gen: Callable[[Any], tuple], default_bucket_key: Any = None,
                 logger: Any = None, context: Context | Sequence[Context] = _CPU,
                 work_load_list: Sequence[float] | None = None,
                 fixed_param_names: Sequence[str] | None = None,
                 state_names: Sequence[str] | None = None, group2ctxs: Any = None,
                 compression_params: dict | None = None) -> None:
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise DagnetError("BucketingModule: give default_bucket_key, the bucket whose "
                              "module is bound first (usually the largest)")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        fixed_param_names = list(fixed_param_names or [])
        state_names = list(state_names or [])
        check_input_names(symbol, list(data_names or []), "data", True)
        check_input_names(symbol, list(label_names or []), "label", False)
        check_input_names(symbol, state_names, "state", True)
        check_input_names(symbol, fixed_param_names, "fixed_param", True)
        self._compression_params = compression_params
        self._fixed_param_names = fixed_param_names
        self._state_names = state_names
        self._context = context
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._buckets: dict[Any, Module] = {}
        self._curr_module: Module | None = None
        self._curr_bucket_key: Any = None
        self._params_dirty = False
        self._monitor: Any = None
        self._grad_req: Any = None

    def _call_sym_gen(self, key: Any) -> tuple[Any, list[str], list[str]]:
        with NameManager():  # each bucket's symbol is named afresh (embedding0, ...)
            result = self._sym_gen(key)
        if not isinstance(result, tuple) or len(result) != 3:
            raise DagnetError(f"BucketingModule: sym_gen({key!r}) must return (symbol, "
                              f"data_names, label_names), got {type(result).__name__}")
        symbol, data_names, label_names = result
        return symbol, list(data_names or []), list(label_names or [])

    def _new_module(self, symbol: Any, data_names: list[str], label_names: list[str]) -> Module:
        return Module(symbol, data_names, label_names, logger=self.logger,
                      context=self._context, work_load_list=self._work_load_list,
                      fixed_param_names=self._fixed_param_names, state_names=self._state_names,
                      group2ctxs=self._group2ctxs, compression_params=self._compression_params)

    def _reset_bind(self) -> None:
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    # -- names and shapes ----------------------------------------------------------------
    @property
    def data_names(self) -> list[str]:
        """The current bucket's data input names."""
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self) -> list[str]:
        """The current bucket's output names."""
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self) -> Any:
        """The current bucket's data shapes."""
        self._require("data_shapes")
        return self._curr_module.data_shapes

    @property
    def label_shapes(self) -> Any:
        """The current bucket's label shapes."""
        self._require("label_shapes")
        return self._curr_module.label_shapes

    @property
    def output_shapes(self) -> Any:
        """The current bucket's output shapes."""
        self._require("output_shapes")
        return self._curr_module.output_shapes

    @property
    def symbol(self) -> Any:
        """The current bucket's symbol."""
        self._require("symbol")
        return self._curr_module.symbol

    # -- parameters ----------------------------------------------------------------------
    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The shared parameters, ``(arg_params, aux_params)``."""
        self._require("get_params", binded=False, params=True)
        module = self._curr_module
        if not module.binded:  # loaded from a checkpoint, not bound yet
            return module._arg_params, module._aux_params
        module._params_dirty = self._params_dirty
        params = module.get_params()
        self._params_dirty = False
        return params

    def set_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any],
                   allow_missing: bool = False, force_init: bool = True,
                   allow_extra: bool = False) -> None:
        """Set the shared parameters (see :meth:`Module.set_params`)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params "
                          "call ignored.", stacklevel=2)
            return
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                     force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def init_params(self, initializer: Any = DEFAULT_INITIALIZER, arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False,
                    force_init: bool = False, allow_extra: bool = False) -> None:
        """Initialize the shared parameters (see :meth:`Module.init_params`)."""
        if self.params_initialized and not force_init:
            return
        self._require("init_params")
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context: bool = True) -> list[Any]:
        """The current bucket's states."""
        self._require("get_states", params=True)
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states: Any = None, value: float | None = None) -> None:
        """Set the current bucket's states."""
        self._require("set_states", params=True)
        self._curr_module.set_states(states, value)

    # -- binding -------------------------------------------------------------------------
    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False,
             shared_module: Any = None, grad_req: Any = "write") -> None:
        """Bind the default bucket's module for ``data_shapes`` and ``label_shapes``
        (parameters set or loaded before carry over)."""
        if shared_module is not None:
            raise DagnetError("BucketingModule.bind: shared_module is not supported; the "
                              "buckets of one BucketingModule already share parameters")
        saved = self.get_params() if self.params_initialized else None
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        symbol, data_names, label_names = self._call_sym_gen(self._default_bucket_key)
        module = self._new_module(symbol, data_names, label_names)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, grad_req=grad_req)
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        loaded = {key: mod for key, mod in self._buckets.items()
                  if key != self._default_bucket_key}
        self._buckets = {self._default_bucket_key: module, **loaded}
        self.binded = True
        if saved is not None:
            self.set_params(*saved)

    def _bind_shared(self, module: Module, data_shapes: Any, label_shapes: Any) -> None:
        from ._base_module import parse_data_desc

        default = self._buckets[self._default_bucket_key]
        data, labels = parse_data_desc(module.data_names, module.label_names, data_shapes,
                                       label_shapes)
        group = DataParallelExecutorGroup(
            module.symbol, module._context, module._work_load_list, data, labels,
            module._param_names, default.for_training, default.inputs_need_grad,
            shared_group=default._exec_group, logger=self.logger,
            fixed_param_names=module._fixed_param_names, grad_req=self._grad_req,
            state_names=module._state_names, group2ctxs=self._group2ctxs)
        module.for_training = default.for_training
        module.inputs_need_grad = default.inputs_need_grad
        module._grad_req = self._grad_req
        module._data_shapes, module._label_shapes = data, labels
        module._exec_group = group
        module._arg_params, module._aux_params = default._arg_params, default._aux_params
        module.params_initialized = default.params_initialized
        module.binded = True
        if default.optimizer_initialized:
            _borrow_optimizer(module, default)
        if self._monitor is not None:
            module.install_monitor(self._monitor)

    def switch_bucket(self, bucket_key: Any, data_shapes: Any, label_shapes: Any = None) -> None:
        """Make ``bucket_key``'s module the current one, creating and binding it (sharing
        the default bucket's parameters) the first time."""
        self._require("switch_bucket")
        module = self._buckets.get(bucket_key)
        if module is None:
            module = self._new_module(*self._call_sym_gen(bucket_key))
            self._buckets[bucket_key] = module
        if not module.binded:
            if data_shapes is None:
                raise DagnetError(f"switch_bucket: bucket {bucket_key!r} is not bound yet; give "
                                  f"its data_shapes")
            self._bind_shared(module, data_shapes, label_shapes)
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    # -- optimizer -----------------------------------------------------------------------
    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),),
                       force_init: bool = False) -> None:
        """Set up one optimizer, used by every bucket."""
        self._require("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for module in self._buckets.values():
            if module is not self._curr_module and module.binded:
                _borrow_optimizer(module, self._curr_module)
        self.optimizer_initialized = True

    # -- running -------------------------------------------------------------------------
    def prepare(self, data_batch: DataBatch, sparse_row_id_fn: Any = None) -> None:
        """Create (and bind) the module of ``data_batch``'s bucket ahead of its forward
        pass, leaving the current bucket as it was."""
        self._require("prepare", params=True)
        original = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch: DataBatch, is_train: bool | None = None) -> None:
        """Switch to ``data_batch.bucket_key``'s module (the default bucket's when the
        batch has none) and run its forward pass."""
        self._require("forward", params=True)
        key = getattr(data_batch, "bucket_key", None)
        if key is None:
            key = self._default_bucket_key
        provide_data = getattr(data_batch, "provide_data", None)
        if provide_data is None and key not in self._buckets:
            raise DagnetError(f"forward: bucket {key!r} is new and the batch has no "
                              f"provide_data to bind it with; give DataBatch(..., "
                              f"provide_data=[...], provide_label=[...])")
        self.switch_bucket(key, provide_data, getattr(data_batch, "provide_label", None))
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads: Any = None) -> None:
        """The current bucket's backward pass."""
        self._require("backward", params=True)
        self._curr_module.backward(out_grads=out_grads)

    def update(self) -> None:
        """Apply the optimizer to the shared parameters."""
        self._require("update", params=True, optimizer=True)
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """The current bucket's outputs."""
        self._require("get_outputs", params=True)
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """The current bucket's input gradients."""
        self._require("get_input_grads", params=True)
        if not self.inputs_need_grad:
            raise ModuleStateError("get_input_grads: bind with inputs_need_grad=True")
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric: Any, labels: Sequence[Any],
                      pre_sliced: bool = False) -> None:
        """Add the current bucket's outputs to ``eval_metric``."""
        self._require("update_metric", params=True)
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        """Let ``mon`` watch every bucket's executors (those made later too)."""
        self._require("install_monitor")
        self._monitor = mon
        for module in self._buckets.values():
            if module.binded:
                module.install_monitor(mon)

    # -- checkpoints ---------------------------------------------------------------------
    def save_checkpoint(self, prefix: str, epoch: int, remove_amp_cast: bool = False) -> None:
        """Write ``prefix-%04d.params``, each bucket's ``prefix-<key>-symbol.json`` and
        the bucket keys in ``prefix.buckets``."""
        if not self._buckets:
            raise ModuleStateError("save_checkpoint: an empty BucketingModule cannot be saved; "
                                   "bind it first")
        self.save_params(f"{prefix}-{int(epoch):04d}.params")
        for key in self._buckets:
            symbol = self._call_sym_gen(key)[0]
            symbol.save(f"{prefix}-{key}-symbol.json", remove_amp_cast=remove_amp_cast)
        ndarray.save(f"{prefix}.buckets",
                     ndarray.array(list(self._buckets), dtype=np.int32))

    @staticmethod
    def load(prefix: str, epoch: int, sym_gen: Callable[[Any], tuple] | None = None,
             default_bucket_key: Any = None, **kwargs: Any) -> BucketingModule:
        """A module from :meth:`save_checkpoint`'s files; ``sym_gen`` and
        ``default_bucket_key`` as at construction, ``kwargs`` too.  Bind it next."""
        from .. import symbol as sym
        from ..model import load_params

        if sym_gen is None or default_bucket_key is None:
            raise DagnetError("BucketingModule.load needs the sym_gen and default_bucket_key "
                              "the module was built with")
        keys = [int(k) for k in ndarray.load(f"{prefix}.buckets")[0].asnumpy()]
        symbols = {key: sym.load(f"{prefix}-{key}-symbol.json") for key in keys}
        arg_params, aux_params = load_params(prefix, epoch)
        return BucketingModule.load_dict(symbols, sym_gen, default_bucket_key, arg_params,
                                         aux_params, **kwargs)

    @staticmethod
    def load_dict(sym_dict: dict | None = None, sym_gen: Callable[[Any], tuple] | None = None,
                  default_bucket_key: Any = None, arg_params: dict | None = None,
                  aux_params: dict | None = None, **kwargs: Any) -> BucketingModule:
        """A module from bucket key -> symbol and the shared parameters.  Bind it next."""
        if sym_dict is None or arg_params is None or aux_params is None or \
                default_bucket_key is None:
            raise DagnetError("BucketingModule.load_dict needs sym_dict, sym_gen, "
                              "default_bucket_key, arg_params and aux_params")
        if default_bucket_key not in sym_dict:
            raise DagnetError(f"BucketingModule.load_dict: sym_dict has no symbol for the "
                              f"default bucket {default_bucket_key!r}")
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key, symbol in sym_dict.items():
            _, data_names, label_names = mod._call_sym_gen(key)
            mod._buckets[key] = mod._new_module(symbol, data_names, label_names)
        mod._curr_module = mod._buckets[default_bucket_key]
        mod._curr_bucket_key = default_bucket_key
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod


def _borrow_optimizer(module: Module, owner: Module) -> None:
    """Let ``module`` update through ``owner``'s optimizer, updater and kvstore."""
    module._optimizer = owner._optimizer
    module._kvstore = owner._kvstore
    module._update_on_kvstore = owner._update_on_kvstore
    module._updater = owner._updater
    module.optimizer_initialized = True
