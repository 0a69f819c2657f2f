"""``Module``: a symbol with its parameters, executors and optimizer (MXNet's
``mx.mod.Module``)."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from .. import ndarray
from .._argcheck import ArgumentTypeError
from .._errors import DagnetError
from ..context import Context, cpu
from ..initializer import InitDesc
from ..io import DataBatch, DataDesc
from ._base_module import (
    DEFAULT_INITIALIZER,
    BaseModule,
    ModuleStateError,
    check_input_names,
    parse_data_desc,
)
from ._updates import (
    create_kvstore,
    initialize_kvstore,
    update_params,
    update_params_on_kvstore,
)
from .executor_group import DataParallelExecutorGroup

__all__ = ["Module"]

_CPU = cpu()


class Module(BaseModule):
    """Trains and runs ``symbol``: inputs named ``data_names`` and ``label_names``, all
    other arguments are parameters (``fixed_param_names`` among them are not updated).

    ``context`` is one device or a list of them; each runs a slice of every batch,
    in proportion to ``work_load_list``.  ``group2ctxs`` runs the symbol's
    ``ctx_group`` s on other devices (model parallelism): one ``group2ctx`` dict per
    context, or one dict for all (its values a context, or a list of one per context).
    The usual sequence is ``bind``, ``init_params``, ``init_optimizer``, then
    ``forward``/``backward``/``update`` per batch, or :meth:`fit` for all of it.
    """

    def __init__(self, symbol: Any, data_names: Sequence[str] | None = ("data",),
                 label_names: Sequence[str] | None = ("softmax_label",), logger: Any = None,
                 context: Context | Sequence[Context] = _CPU,
                 work_load_list: Sequence[float] | None = None,
                 fixed_param_names: Sequence[str] | None = None,
                 state_names: Sequence[str] | None = None, group2ctxs: Any = None,
                 compression_params: dict | None = None) -> None:
        super().__init__(logger=logger)
        contexts = [context] if isinstance(context, Context) else list(context)
        if not contexts or not all(isinstance(c, Context) for c in contexts):
            raise ArgumentTypeError(f"Module: context must be a Context such as mx.cpu() or a "
                                    f"non-empty list of them, got {context!r}")
        self._context = contexts
        work_load_list = [1] * len(contexts) if work_load_list is None else list(work_load_list)
        if len(work_load_list) != len(contexts):
            raise ValueError(f"Module: work_load_list has {len(work_load_list)} entries for "
                             f"{len(contexts)} contexts; give one per context")
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._symbol = symbol
        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        check_input_names(symbol, data_names, "data", True)
        check_input_names(symbol, label_names, "label", False)
        check_input_names(symbol, fixed_param_names, "fixed_param", True)
        check_input_names(symbol, state_names, "state", True)
        self._compression_params = compression_params
        self._state_names = state_names
        inputs = data_names + label_names + state_names
        self._param_names = [n for n in symbol.list_arguments() if n not in inputs]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._output_names = symbol.list_outputs()
        self._arg_params: dict[str, Any] | None = None
        self._aux_params: dict[str, Any] | None = None
        self._params_dirty = False
        self._optimizer: Any = None
        self._kvstore: Any = None
        self._update_on_kvstore = False
        self._updater: Any = None
        self._preload_opt_states: str | None = None
        self._grad_req: Any = None
        self._exec_group: DataParallelExecutorGroup | None = None
        self._data_shapes: list[DataDesc] | None = None
        self._label_shapes: list[DataDesc] | None = None

    @staticmethod
    def load(prefix: str, epoch: int, load_optimizer_states: bool = False,
             **kwargs: Any) -> Module:
        """A module from the checkpoint ``prefix-symbol.json`` and ``prefix-%04d.params``;
        with ``load_optimizer_states`` the states in ``prefix-%04d.states`` are loaded at
        ``init_optimizer``.  ``kwargs`` go to the constructor."""
        from ..model import load_checkpoint

        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = f"{prefix}-{int(epoch):04d}.states"
        return mod

    def save_checkpoint(self, prefix: str, epoch: int, save_optimizer_states: bool = False,
                        remove_amp_cast: bool = True) -> None:
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and, with
        ``save_optimizer_states``, ``prefix-%04d.states``."""
        self._symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
        param_name = f"{prefix}-{int(epoch):04d}.params"
        self.save_params(param_name)
        self.logger.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = f"{prefix}-{int(epoch):04d}.states"
            self.save_optimizer_states(state_name)
            self.logger.info('Saved optimizer state to "%s"', state_name)

    # -- names and shapes ----------------------------------------------------------------
    @property
    def data_names(self) -> list[str]:
        """The names of the data inputs."""
        return self._data_names

    @property
    def label_names(self) -> list[str]:
        """The names of the label inputs."""
        return self._label_names

    @property
    def output_names(self) -> list[str]:
        """The names of the outputs (``symbol.list_outputs()``)."""
        return self._output_names

    @property
    def data_shapes(self) -> list[DataDesc]:
        """The data inputs' DataDescs for the whole batch (after ``bind``)."""
        self._require("data_shapes")
        return self._data_shapes

    @property
    def label_shapes(self) -> list[DataDesc] | None:
        """The label inputs' DataDescs (None when bound without labels)."""
        self._require("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self) -> list[tuple[str, tuple]]:
        """``(name, shape)`` of every output for the whole batch."""
        self._require("output_shapes")
        return self._exec_group.get_output_shapes()

    # -- parameters ----------------------------------------------------------------------
    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(arg_params, aux_params)``: CPU copies of the parameters (the devices'
        mean, with several devices)."""
        self._require("get_params", params=True)
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer: Any = DEFAULT_INITIALIZER, arg_params: dict | None = None,
                    aux_params: dict | None = None, allow_missing: bool = False,
                    force_init: bool = False, allow_extra: bool = False) -> None:
        """Initialize the parameters: from ``arg_params``/``aux_params`` where they have
        the name, else (only with ``allow_missing``, when they are given) with
        ``initializer``, in sorted name order.  A second call warns and does nothing
        unless ``force_init``."""
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "init_params call ignored.", stacklevel=2)
            return
        self._require("init_params")
        attrs = self._symbol.attr_dict()

        def fill(name: str, arr: Any, cache: dict | None) -> None:
            desc = InitDesc(name, attrs.get(name))
            if cache is None:
                initializer(desc, arr)
            elif name in cache:
                if cache[name] is not arr:
                    _copy(cache[name], arr, name)
            elif initializer is not None:
                initializer(desc, arr)

        if not allow_missing:
            missing = [name for names, given in ((self._arg_params, arg_params),
                                                 (self._aux_params, aux_params))
                       if given is not None for name in sorted(names) if name not in given]
            if missing:
                raise DagnetError(f"the given parameters lack {', '.join(map(repr, missing))}; "
                                 f"pass every parameter, or allow_missing=True to initialize "
                                 f"the missing ones with the initializer")
        for name, arr in sorted(self._arg_params.items()):
            fill(name, arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            fill(name, arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def set_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any],
                   allow_missing: bool = False, force_init: bool = True,
                   allow_extra: bool = False) -> None:
        """Set the parameters from name -> array dicts (every one must be given unless
        ``allow_missing``; names the symbol lacks raise unless ``allow_extra``)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=2)
            return
        self._require("set_params")
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def _sync_params_from_devices(self) -> None:
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    # -- binding -------------------------------------------------------------------------
    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False,
             grad_req: Any = "write") -> None:
        """Allocate one executor per device for batches of ``data_shapes`` and
        ``label_shapes`` (DataDescs or ``(name, shape)`` pairs, such as an iterator's
        ``provide_data``/``provide_label``).  A bound module ignores a second bind
        (with a warning) unless ``force_rebind``; parameters already set carry over."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if not for_training and inputs_need_grad:
            raise ValueError("bind: inputs_need_grad=True needs for_training=True")
        data, labels = parse_data_desc(self._data_names, self._label_names, data_shapes,
                                       label_shapes)
        group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, data, labels,
            self._param_names, for_training, inputs_need_grad, logger=self.logger,
            fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            state_names=self._state_names, group2ctxs=self._group2ctxs)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes, self._label_shapes = data, labels
        self._exec_group = group
        self._total_exec_bytes = group._total_exec_bytes
        self.binded = True
        if self.params_initialized:
            # re-binding (or a loaded checkpoint): the parameters carry over
            group.set_params(self._arg_params, self._aux_params)
        else:
            stypes = _declared_stypes(self._symbol)
            self._arg_params = {name: ndarray.zeros(block[0].shape, dtype=block[0].dtype,
                                                    stype=stypes.get(name, "default"))
                                for name, block in zip(self._param_names, group.param_arrays)}
            self._aux_params = {name: ndarray.zeros(block[0].shape, dtype=block[0].dtype)
                                for name, block in zip(self._aux_names, group.aux_arrays)}

    def _reset_bind(self) -> None:
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        """Reshape the executors for batches of other shapes (sharing the parameters)."""
        self._require("reshape")
        self._data_shapes, self._label_shapes = parse_data_desc(
            self._data_names, self._label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # -- optimizer -----------------------------------------------------------------------
    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),),
                       force_init: bool = False) -> None:
        """Set up ``optimizer`` (a name, with ``optimizer_params``, or an Optimizer) and,
        where there is something to share, the key-value store ``kvstore``.

        A named optimizer gets ``rescale_grad = 1 / batch_size`` unless the parameters
        say otherwise, and the parameter names by update index."""
        from .. import optimizer as opt

        self._require("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kvstore, update_on_kvstore = create_kvstore(kvstore, len(self._context),
                                                    self._arg_params)
        group = self._exec_group
        batch_size = group.batch_size
        if kvstore is not None and "dist" in kvstore.type and "_sync" in kvstore.type:
            batch_size *= kvstore.num_workers
        rescale_grad = 1.0 / batch_size
        num_device = len(self._context)
        if update_on_kvstore:
            idx2name = dict(enumerate(group.param_names))
        else:
            idx2name = {i * num_device + k: name for i, name in enumerate(group.param_names)
                        for k in range(num_device)}
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault("rescale_grad", rescale_grad)
            optimizer = opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name,
                                   **params)
        elif isinstance(optimizer, opt.Optimizer):
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn(f"Optimizer created manually outside Module but rescale_grad is "
                              f"not normalized to 1.0/batch_size/num_workers "
                              f"({optimizer.rescale_grad} vs. {rescale_grad}). Is this "
                              f"intended?", stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        else:
            raise ArgumentTypeError(f"init_optimizer: optimizer must be a name such as 'sgd' "
                                    f"or a dagnet.optimizer.Optimizer, got "
                                    f"{type(optimizer).__name__}")
        self._optimizer = optimizer
        self._kvstore = kvstore
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kvstore is not None:
            if update_on_kvstore:
                kvstore.set_optimizer(optimizer)
            initialize_kvstore(kvstore, group.param_arrays, self._arg_params,
                               self._param_names, update_on_kvstore)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def save_optimizer_states(self, fname: str) -> None:
        """Write the optimizer's states (momentum, moments, update counts) to ``fname``."""
        self._require("save_optimizer_states", optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            with open(fname, "wb") as fout:
                fout.write(self._updater.get_states())

    def load_optimizer_states(self, fname: str) -> None:
        """Read optimizer states written by :meth:`save_optimizer_states`."""
        self._require("load_optimizer_states", optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, "rb") as fin:
                self._updater.set_states(fin.read())

    # -- running -------------------------------------------------------------------------
    def forward(self, data_batch: DataBatch, is_train: bool | None = None) -> None:
        """Run the forward pass on ``data_batch`` (training mode when ``is_train``, or,
        when None, when bound for training).  A batch of other shapes than the bound
        ones reshapes the executors first, as for a smaller last batch."""
        self._require("forward", params=True)
        if not isinstance(data_batch, DataBatch) and not hasattr(data_batch, "data"):
            raise ArgumentTypeError(f"forward: expected a DataBatch, got "
                                    f"{type(data_batch).__name__}; wrap arrays as "
                                    f"mx.io.DataBatch(data=[...], label=[...])")
        current = tuple(tuple(d.shape) for d in self._data_shapes)
        new = tuple(tuple(d.shape) for d in data_batch.data)
        if current != new:
            self.reshape(*self._shapes_of(data_batch, new))
        self._exec_group.forward(data_batch, is_train)

    def _shapes_of(self, data_batch: DataBatch,
                   new: tuple) -> tuple[list[DataDesc], list[DataDesc] | None]:
        provide_data = getattr(data_batch, "provide_data", None)
        if provide_data:
            data = list(provide_data)
        else:
            data = [DataDesc(d.name, shape, d.dtype, d.layout)
                    for d, shape in zip(self._data_shapes, new)]
        provide_label = getattr(data_batch, "provide_label", None)
        if provide_label:
            labels = list(provide_label)
        elif getattr(data_batch, "label", None) and self._label_shapes:
            labels = [DataDesc(d.name, tuple(lab.shape), d.dtype, d.layout)
                      for d, lab in zip(self._label_shapes, data_batch.label)]
        elif self._label_shapes:
            # no labels in the batch: keep the labels' batch axis in step with the data's
            size = data[0].shape[max(DataDesc.get_batch_axis(data[0].layout), 0)]
            labels = [DataDesc(d.name, (size, *tuple(d.shape)[1:]), d.dtype, d.layout)
                      for d in self._label_shapes]
        else:
            labels = None
        return data, labels

    def backward(self, out_grads: Any = None) -> None:
        """Run the backward pass (``out_grads``: head gradients for outputs that are not
        losses)."""
        self._require("backward", params=True)
        if not self.for_training:
            raise ModuleStateError("backward: re-bind with for_training=True to run backward")
        self._exec_group.backward(out_grads=out_grads)

    def update(self) -> None:
        """Apply the optimizer to the gradients of the last backward pass, on the
        key-value store or with the local updater."""
        self._require("update", params=True, optimizer=True)
        self._params_dirty = True
        group = self._exec_group
        if self._update_on_kvstore:
            update_params_on_kvstore(group.param_arrays, group.grad_arrays, self._kvstore,
                                     group.param_names)
        else:
            update_params(group.param_arrays, group.grad_arrays, self._updater,
                          len(self._context), self._kvstore, group.param_names)

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """The outputs of the last forward pass (joined over the devices when
        ``merge_multi_context``)."""
        self._require("get_outputs", params=True)
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context: bool = True) -> list[Any]:
        """The state inputs named by ``state_names`` (joined over the devices when
        ``merge_multi_context``)."""
        self._require("get_states", params=True)
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states: list[list[Any]] | None = None,
                   value: float | None = None) -> None:
        """Set the state inputs from per-device arrays (as ``get_states(False)`` gives
        them) or all to ``value``."""
        self._require("set_states", params=True)
        self._exec_group.set_states(states, value)

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """The gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        self._require("get_input_grads", params=True)
        if not self.inputs_need_grad:
            raise ModuleStateError("get_input_grads: bind with inputs_need_grad=True to get "
                                   "the gradients of the inputs")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric: Any, labels: Sequence[Any],
                      pre_sliced: bool = False) -> None:
        """Add the last outputs, against ``labels``, to ``eval_metric``."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        """Let ``mon`` (MXNet's ``Monitor`` protocol: ``install(executor)``) watch the
        executors."""
        self._require("install_monitor")
        self._exec_group.install_monitor(mon)


def _copy(value: Any, target: Any, name: str) -> None:
    if tuple(value.shape) != tuple(target.shape):
        from .._errors import ShapeError

        raise ShapeError(f"parameter {name!r} has shape {tuple(target.shape)} in the module but "
                         f"the given value has shape {tuple(value.shape)}")
    if isinstance(value, ndarray.NDArray):
        value.copyto(target)
    else:
        target[:] = value


def _declared_stypes(symbol: Any) -> dict[str, str]:
    """The storage type each variable of ``symbol`` declares (``var(..., stype=...)``), by
    name; variables that declare none are absent (dense)."""
    from ..ndarray.sparse import STORAGE_TYPE_ID_TO_STR

    stypes = {}
    for name, attrs in symbol.attr_dict().items():
        code = attrs.get("__storage_type__")
        if code is not None:
            stypes[name] = STORAGE_TYPE_ID_TO_STR.get(int(code), "default")
    return stypes
