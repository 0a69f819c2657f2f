"""One executor per device, each running its slice of every batch (MXNet's
``DataParallelExecutorGroup``).

The batch is split along each input's batch axis (the ``'N'`` of its layout)
in proportion to the work load of each device; parameters have one array per
device, which the module keeps equal by updating them all alike.  With
``group2ctxs`` each of those executors itself spans several devices (model
parallelism: its ``ctx_group`` s run where ``group2ctx`` says).

A group made with ``shared_group`` (BucketingModule's buckets) binds to that
group's parameter, gradient and auxiliary arrays and borrows its executors'
memory; both keep their other inputs (data, labels, states, and arguments that
are not parameters here) in one ``shared_data_arrays`` dict per device, so an
input of the same name, shape and dtype is the same array in both (see
``simple_bind``'s ``shared_buffer``).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._errors import ContextError, ShapeError
from ..context import Context, cpu
from ..io import DataDesc

__all__ = ["DataParallelExecutorGroup", "split_input_slice", "group2ctx_per_context"]


def split_input_slice(batch_size: int, work_load_list: Sequence[float]) -> list[slice]:
    """The slice of a batch of ``batch_size`` each device gets: shares in proportion to
    ``work_load_list`` (rounded; the last device takes what rounding leaves)."""
    total = float(sum(work_load_list))
    counts = [int(round(load * batch_size / total)) for load in work_load_list]
    if sum(counts) < batch_size:
        counts[-1] += batch_size - sum(counts)
    slices, end = [], 0
    for count in counts:
        begin = min(end, batch_size)
        end = min(begin + count, batch_size)
        if begin >= end:
            raise ShapeError(f"a batch of {batch_size} examples cannot be split over "
                             f"{len(work_load_list)} devices (work loads {list(work_load_list)}) "
                             f"without leaving one empty; use a larger batch or fewer devices")
        slices.append(slice(begin, end))
    return slices


def group2ctx_per_context(group2ctxs: Any, num_contexts: int) -> list[dict | None]:
    """One ``group2ctx`` dict (or None) per data-parallel context, from a module's
    ``group2ctxs``: None, a list of one dict per context, or one dict whose values
    are a context (the same for every context) or a list of one context or of one
    per context."""
    if group2ctxs is None:
        return [None] * num_contexts
    if isinstance(group2ctxs, (list, tuple)):
        if len(group2ctxs) != num_contexts:
            raise ContextError(f"group2ctxs has {len(group2ctxs)} dicts for {num_contexts} "
                               f"contexts; give one dict per context, or one dict for all")
        return list(group2ctxs)
    if not isinstance(group2ctxs, Mapping):
        raise ContextError(f"group2ctxs must be a dict of group name -> context (or list of "
                           f"contexts), or a list of such dicts, got {type(group2ctxs).__name__}")
    result: list[dict] = [{} for _ in range(num_contexts)]
    for group, where in group2ctxs.items():
        per_context = [where] if isinstance(where, Context) else list(where)
        if len(per_context) == 1:
            per_context *= num_contexts
        if len(per_context) != num_contexts:
            raise ContextError(f"group2ctxs[{group!r}] has {len(per_context)} contexts for "
                               f"{num_contexts} data-parallel contexts; give one, or one per "
                               f"context")
        for mapping, ctx in zip(result, per_context):
            mapping[group] = ctx
    return result


class DataParallelExecutorGroup:
    """The executors of one module: one per context, bound for ``data_shapes`` and
    ``label_shapes`` (:class:`~dagnet.io.DataDesc` s or ``(name, shape)`` pairs for the
    whole batch).

    ``grad_req`` applies to the parameters not in ``fixed_param_names`` (and to the
    data when ``inputs_need_grad``); everything else gets ``'null'``.  ``group2ctxs``
    places each context's ``ctx_group`` s (see :func:`group2ctx_per_context`).
    ``shared_group``: a group (of the same contexts) whose parameters and memory this
    one uses.  ``logger`` is MXNet's argument, kept for its callers.
    """

    def __init__(self, symbol: Any, contexts: list[Context], workload: list[float],
                 data_shapes: Sequence[Any], label_shapes: Sequence[Any] | None,
                 param_names: list[str], for_training: bool, inputs_need_grad: bool,
                 shared_group: DataParallelExecutorGroup | None = None,
                 logger: Any = logging, fixed_param_names: list[str] | None = None,
                 grad_req: Any = "write", state_names: list[str] | None = None,
                 group2ctxs: Any = None) -> None:
        data_shapes = _descs(data_shapes)
        label_shapes = None if label_shapes is None else _descs(label_shapes)
        self.symbol = symbol
        self.contexts = contexts
        self.workload = workload
        self.param_names = param_names
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.output_names = symbol.list_outputs()
        # each output's batch axis, from the ``__layout__`` attribute of its node
        self.output_layouts = [DataDesc.get_batch_axis(symbol[i].attr("__layout__"))
                               for i in range(len(self.output_names))]
        self.data_names = [d.name for d in data_shapes]
        self.label_names = [d.name for d in label_shapes or []]
        self.grad_req = self._grad_reqs(grad_req)
        self.group2ctxs = group2ctx_per_context(group2ctxs, len(contexts))
        self.logger = logger
        self._shared_group = shared_group
        self.shared_data_arrays: list[dict[str, Any]] = (
            shared_group.shared_data_arrays if shared_group is not None
            else [{} for _ in contexts])
        self._default_execs: list[Any] | None = None
        self._default_shapes: tuple | None = None
        self.bind_exec(data_shapes, label_shapes)

    def _grad_reqs(self, grad_req: Any) -> dict[str, str]:
        if not self.for_training:
            return dict.fromkeys(self.arg_names, "null")
        if isinstance(grad_req, Mapping):
            return {name: grad_req.get(name, "null") for name in self.arg_names}
        if not isinstance(grad_req, str):
            reqs = list(grad_req)
            if len(reqs) != len(self.arg_names):
                raise ShapeError(f"grad_req has {len(reqs)} entries for {len(self.arg_names)} "
                                 f"arguments ({', '.join(self.arg_names)}); give one per "
                                 f"argument, a dict, or one str for all")
            return dict(zip(self.arg_names, reqs))
        reqs = {}
        for name in self.arg_names:
            if name in self.param_names:
                reqs[name] = "null" if name in self.fixed_param_names else grad_req
            elif name in self.data_names:
                reqs[name] = grad_req if self.inputs_need_grad else "null"
            else:
                reqs[name] = "null"
        return reqs

    # -- binding -----------------------------------------------------------------------
    def bind_exec(self, data_shapes: list[DataDesc], label_shapes: list[DataDesc] | None,
                  reshape: bool = False) -> None:
        """Bind (or, with ``reshape``, reshape the first-bound executors) for new shapes."""
        label_shapes = list(label_shapes or [])
        self.batch_size = _batch_size(data_shapes)
        self.slices = split_input_slice(self.batch_size, self.workload)
        self.data_shapes, self.label_shapes = list(data_shapes), label_shapes
        self.data_layouts = [DataDesc.get_batch_axis(getattr(d, "layout", None))
                             for d in data_shapes]
        self.label_layouts = [DataDesc.get_batch_axis(getattr(d, "layout", None))
                              for d in label_shapes]
        key = tuple((d.name, tuple(d.shape)) for d in data_shapes + label_shapes)
        if not reshape or self._default_execs is None:
            self.execs = [self._bind_one(i, data_shapes, label_shapes)
                          for i in range(len(self.contexts))]
            self._default_execs, self._default_shapes = self.execs, key
            # what binding allocated for intermediate values (MXNet's _total_exec_bytes)
            self._total_exec_bytes = sum(e.memory_stats()["intermediate_bytes"]
                                         for e in self.execs)
        elif key == self._default_shapes:
            self.execs = self._default_execs
        else:
            self.execs = [default.reshape(partial_shaping=True, allow_up_sizing=True,
                                          **self._slice_shapes(i, data_shapes, label_shapes))
                          for i, default in enumerate(self._default_execs)]
        self._collect_arrays()

    def reshape(self, data_shapes: list[DataDesc], label_shapes: list[DataDesc] | None) -> None:
        """Reshape the executors for a batch of other shapes, sharing the parameters."""
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def _slice_shapes(self, i: int, data_shapes: list[DataDesc],
                      label_shapes: list[DataDesc]) -> dict[str, tuple]:
        shapes = {}
        islice = self.slices[i]
        for desc, axis in zip(data_shapes + label_shapes,
                              self.data_layouts + self.label_layouts):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = islice.stop - islice.start
            shapes[desc.name] = tuple(shape)
        return shapes

    def _bind_one(self, i: int, data_shapes: list[DataDesc],
                  label_shapes: list[DataDesc]) -> Any:
        """Bind context ``i``'s executor: parameters (and their gradients and the
        auxiliary states) from the shared group's executor when there is one, every
        other input from ``shared_data_arrays``."""
        shapes = self._slice_shapes(i, data_shapes, label_shapes)
        type_dict = {d.name: np.dtype(getattr(d, "dtype", np.float32))
                     for d in data_shapes + label_shapes}
        shared = self._shared_group.execs[i] if self._shared_group is not None else None
        return self.symbol.simple_bind(
            self.contexts[i], grad_req=self.grad_req, type_dict=type_dict,
            group2ctx=self.group2ctxs[i], shared_exec=shared, shared_arg_names=self.param_names,
            shared_buffer=self.shared_data_arrays[i], **shapes)

    def _collect_arrays(self) -> None:
        execs = self.execs
        self.data_arrays = [[(s, e.arg_dict[name]) for s, e in zip(self.slices, execs)]
                            for name in self.data_names]
        # None for a label the symbol does not take (MXNet warns about it at construction)
        self.label_arrays = [[(s, e.arg_dict[name]) for s, e in zip(self.slices, execs)]
                             if name in self.arg_names else None for name in self.label_names]
        self.param_arrays = [[e.arg_dict[name] for e in execs] for name in self.param_names]
        self.grad_arrays = ([[e.grad_dict[name] for e in execs] for name in self.param_names]
                            if self.for_training else [])
        self.aux_arrays = [[e.aux_dict[name] for e in execs] for name in self.aux_names]
        self.state_arrays = [[e.arg_dict[name] for e in execs] for name in self.state_names]
        self.input_grad_arrays = ([[e.grad_dict[name] for e in execs] for name in self.data_names]
                                  if self.inputs_need_grad else [])

    # -- parameters --------------------------------------------------------------------
    def set_params(self, arg_params: Mapping[str, Any], aux_params: Mapping[str, Any],
                   allow_extra: bool = False) -> None:
        """Copy parameter values into every device's executor (sparse values as dense: the
        executors compute on dense arrays)."""
        arg_params, aux_params = _dense_values(arg_params), _dense_values(aux_params)
        for executor in self.execs:
            executor.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any]) -> None:
        """Copy the devices' parameters (their mean, for several devices) into
        ``arg_params`` and ``aux_params`` (arrays of the same names)."""
        for names, blocks, target in ((self.param_names, self.param_arrays, arg_params),
                                      (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                if len(block) == 1:
                    block[0].copyto(target[name])
                    continue
                total = block[0].copyto(cpu())
                for array in block[1:]:
                    total += array.copyto(cpu())
                (total / len(block)).copyto(target[name])

    # -- running -----------------------------------------------------------------------
    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Copy the batch's slices into the executors and run them forward
        (``is_train`` None: training mode when bound for training)."""
        _load_general(data_batch.data, self.data_arrays, self.data_layouts, "data")
        if is_train is None:
            is_train = self.for_training
        if any(a is not None for a in self.label_arrays) and getattr(data_batch, "label", None):
            _load_general(data_batch.label, self.label_arrays, self.label_layouts, "label")
        for executor in self.execs:
            executor.forward(is_train=is_train)

    def backward(self, out_grads: Any = None) -> None:
        """Run every executor backward, with its slice of the head gradients."""
        if out_grads is not None and not isinstance(out_grads, (list, tuple)):
            out_grads = [out_grads]
        for executor, islice, ctx in zip(self.execs, self.slices, self.contexts):
            heads = None
            if out_grads is not None:
                heads = [_slice(grad, islice, max(axis, 0)).as_in_context(ctx)
                         if len(self.execs) > 1 else grad
                         for grad, axis in zip(out_grads, self.output_layouts)]
            executor.backward(out_grads=heads)

    def get_outputs(self, merge_multi_context: bool = True, begin: int = 0,
                    end: int | None = None) -> list[Any]:
        """The outputs: per output, the devices' arrays joined along the batch axis
        (or, without ``merge_multi_context``, a list per output of each device's array)."""
        end = len(self.output_names) if end is None else end
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if not merge_multi_context:
            return outputs
        return _merge(outputs, self.output_layouts[begin:end])

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """The gradients of the data inputs (bound with ``inputs_need_grad``)."""
        if not merge_multi_context:
            return self.input_grad_arrays
        return _merge(self.input_grad_arrays, self.data_layouts)

    def get_states(self, merge_multi_context: bool = True) -> list[Any]:
        """The state inputs (``state_names``): per state, each device's array, or (with
        ``merge_multi_context``) one array joined along the batch axis."""
        return _merge(self.state_arrays) if merge_multi_context else self.state_arrays

    def set_states(self, states: list[list[Any]] | None = None,
                   value: float | None = None) -> None:
        """Set the states from ``states`` (per state, one array per device, as
        ``get_states(merge_multi_context=False)`` returns) or all to ``value``."""
        if (states is None) == (value is None):
            raise ValueError("set_states: give exactly one of states and value")
        if value is not None:
            for per_device in self.state_arrays:
                for array in per_device:
                    array[:] = value
            return
        if len(states) != len(self.state_arrays):
            raise ValueError(f"set_states: {len(states)} states given for "
                             f"{len(self.state_arrays)} ({', '.join(self.state_names)})")
        for given, per_device in zip(states, self.state_arrays):
            if len(given) != len(per_device):
                raise ValueError(f"set_states: each state needs one array per device "
                                 f"({len(per_device)}), got {len(given)}")
            for source, target in zip(given, per_device):
                source.copyto(target)

    def get_output_shapes(self) -> list[tuple[str, tuple]]:
        """``(name, shape)`` of every output for the whole batch."""
        shapes = []
        for name, output in zip(self.output_names, self.execs[0].outputs):
            shape = list(output.shape)
            if shape:
                shape[0] = self.batch_size
            shapes.append((name, tuple(shape)))
        return shapes

    def update_metric(self, eval_metric: Any, labels: Sequence[Any],
                      pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` with each device's outputs and its slice of ``labels``
        (already one list per device when ``pre_sliced``)."""
        for index, (executor, islice) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                labels_slice = labels[index]
            elif len(self.execs) == 1:
                labels_slice = list(labels)
            else:
                labels_slice = [_slice(label, islice, axis) if axis >= 0 else label
                                for label, axis in zip(labels, self.label_layouts or
                                                       [0] * len(labels))]
            eval_metric.update_dict(OrderedDict(zip(self.label_names, labels_slice)),
                                    OrderedDict(zip(self.output_names, executor.outputs)))

    def install_monitor(self, monitor: Any) -> None:
        """Let ``monitor`` (with MXNet's ``Monitor.install(executor)``) watch every executor."""
        for executor in self.execs:
            monitor.install(executor)


def _descs(shapes: Sequence[Any]) -> list[DataDesc]:
    """``DataDesc`` s from DataDescs or ``(name, shape)`` pairs."""
    return [d if isinstance(d, DataDesc) else DataDesc(*d) for d in shapes]


def _batch_size(data_shapes: list[DataDesc]) -> int:
    sizes = set()
    for desc in data_shapes:
        axis = DataDesc.get_batch_axis(getattr(desc, "layout", None))
        if axis >= 0:
            sizes.add(desc.shape[axis])
    if len(sizes) != 1:
        described = ", ".join(f"{d.name} {tuple(d.shape)}" for d in data_shapes)
        raise ShapeError(f"the data inputs must share one batch size along their batch axis "
                         f"(the 'N' of their layout), got {described}")
    return sizes.pop()


def _slice(array: Any, islice: slice, axis: int) -> Any:
    from .. import ndarray

    if axis == 0:
        return array[islice]
    return ndarray.slice_axis(array, axis=axis, begin=islice.start, end=islice.stop)


def _load_general(sources: Sequence[Any], targets: list[list[tuple[slice, Any]] | None],
                  axes: list[int], what: str) -> None:
    """Copy each source array's slices into the devices' arrays (None: skip it)."""
    from .. import ndarray

    if len(sources) != len(targets):
        raise ShapeError(f"the batch has {len(sources)} {what} arrays but the module was bound "
                         f"for {len(targets)}; give one per {what} name")
    for source, per_device, axis in zip(sources, targets, axes):
        if per_device is None:
            continue
        if not isinstance(source, ndarray.NDArray):
            source = ndarray.array(np.asarray(source))
        for islice, target in per_device:
            part = source if len(per_device) == 1 or axis < 0 else _slice(source, islice, axis)
            if tuple(part.shape) != tuple(target.shape):
                raise ShapeError(f"a {what} array of the batch has shape {tuple(part.shape)} "
                                 f"where the executor expects {tuple(target.shape)}; bind the "
                                 f"module with shapes that match the batches")
            part.copyto(target)


def _merge(per_output: list[list[Any]], axes: list[int] | None = None) -> list[Any]:
    """Join each output's per-device arrays along its batch axis (default 0; an axis
    below 0, no batch axis: the first device's array)."""
    from .. import ndarray

    axes = axes if axes is not None else [0] * len(per_output)
    return [arrays[0] if len(arrays) == 1 or axis < 0 else
            ndarray.concat(*[a.as_in_context(arrays[0].context) for a in arrays], dim=axis)
            for arrays, axis in zip(per_output, axes)]


def _dense_values(params: Mapping[str, Any] | None) -> Any:
    """``params`` with every sparse NDArray replaced by a dense copy."""
    if not params:
        return params
    return {name: value.tostype("default") if getattr(value, "stype", "default") != "default"
            else value for name, value in params.items()}
