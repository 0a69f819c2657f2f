"""Gluon's blocks: :class:`Block` (a model part written imperatively), :class:`HybridBlock`
(one written as ``hybrid_forward(F, ...)`` for both NDArrays and Symbols, which
``hybridize()`` traces into a symbol run by a :class:`~dagnet.gluon.CachedOp`) and
:class:`SymbolBlock` (a block made from a symbol, e.g. one exported by MXNet).

Names follow MXNet 1.x: a block made outside any ``name_scope`` is prefixed by the
global name manager (``dense0_``), a child made inside its parent's ``name_scope`` by
the parent's prefix and a per-scope counter (``model_dense0_``), and its parameters
are named prefix + name (``model_dense0_weight``).
"""

from __future__ import annotations

import copy
import json
import re
import threading
import warnings
import weakref
from collections import OrderedDict
from typing import Any

import numpy as np

from .. import initializer, ndarray, symbol
from .. import name as _name
from .._errors import OperatorFailedError
from ..autograd import Tracer, active_tracer, is_training
from ..ndarray import NDArray
from ..numpy import as_np_ndarray
from ..numpy import ndarray as _NP_NDARRAY
from ..symbol import Symbol
from ..util import is_np_array
from ._errors import GluonAssertionError, GluonError, GluonTypeError, GluonValueError
from .cached_op import CachedOp
from .parameter import DeferredInitializationError, Parameter, ParameterDict
from .utils import HookHandle, indent

__all__ = ["Block", "HybridBlock", "SymbolBlock"]

# MXNet's default, made once (a default argument is evaluated once anyway)
_DEFAULT_INIT = initializer.Uniform()


class _BlockScope:
    """The ``with block.name_scope():`` scope: children made inside are named after it."""

    _current = threading.local()

    def __init__(self, block: Block, weak: bool = False):
        # a block's own scope holds it weakly: the two would otherwise form a cycle, and a
        # block with a cached graph (and that graph's arrays) would wait for the cyclic
        # collector to be freed; a scope made for any other holder keeps it until exit
        self._block_ref = weakref.ref(block)
        self._entered: Block | None = None if weak else block
        self._counter: dict[str, int] = {}
        self._old_scope: _BlockScope | None = None
        self._name_scope: Any = None

    @property
    def _block(self) -> Block:
        return self._entered if self._entered is not None else self._block_ref()

    @staticmethod
    def create(prefix: str | None, params: ParameterDict | None,
               hint: str) -> tuple[str, ParameterDict]:
        """The prefix and parameter dict of a new block with alias ``hint``."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = _name.current().get(None, hint) + "_"
            params = (ParameterDict(prefix) if params is None
                      else ParameterDict(params.prefix, params))
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self) -> _BlockScope:
        if self._block._empty_prefix:
            return self
        self._entered = self._block  # held strongly while the scope is entered
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(*exc)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope
        # a child entered while its parent traced must not keep the parent (and the
        # parent's cached graph and arrays) alive after the scope closes
        self._old_scope = self._entered = None


def _flatten(args: Any, what: str) -> tuple[list, Any]:
    """Nested lists of arrays/symbols to a flat list and a format to rebuild them: 0 for one
    array, -1 for None, n > 0 for a symbol of n outputs, a list for a list."""
    if isinstance(args, NDArray):
        return [args], 0
    if isinstance(args, Symbol):
        length = len(args.list_outputs())
        return [args], length if length > 1 else 0
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise GluonValueError(f"When hybridized, the input of HybridBlock {what} must be "
                              f"(nested) list of Symbol or NDArray, but got {args} of type "
                              f"{type(args)}")
    flat: list = []
    fmts = []
    for item in args:
        arg, fmt = _flatten(item, what)
        flat.extend(arg)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args: list, fmt: Any) -> Any:
    """The inverse of :func:`_flatten`."""

    def merge(items: list, form: Any) -> tuple[Any, list]:
        if isinstance(form, int):
            if form < -1:
                raise GluonValueError(f"Unsupported encoded format {form}.")
            if form == 0:
                return items[0], items[1:]
            if form == -1:
                if items[0] is not None:
                    raise GluonValueError(
                        f"We do not support passing types that are not None when the initial "
                        f"HybridBlock has received NoneType and has been hybridized. Received "
                        f"arg = {items[0]}, fmt = {form}.")
                return None, items[1:]
            return items[:form], items[form:]
        result = []
        for sub in form:
            value, items = merge(items, sub)
            result.append(value)
        return result, items

    return merge(args, fmt)[0]


def _gather_type_ctx_info(args: Any) -> tuple[bool, bool, set, Any]:
    """(has a symbol, has an NDArray, the contexts of the NDArrays, the first context)."""
    if isinstance(args, NDArray):
        return False, True, {args.context}, args.context
    if isinstance(args, Symbol):
        return True, False, set(), None
    has_symbol = has_ndarray = False
    contexts: set = set()
    first = None
    if isinstance(args, (list, tuple)):
        for item in args:
            sym, nd, ctxs, item_first = _gather_type_ctx_info(item)
            has_symbol, has_ndarray = has_symbol or sym, has_ndarray or nd
            if first is None:
                first = item_first
            contexts |= ctxs
    return has_symbol, has_ndarray, contexts, first


class Block:
    """Base class of every layer and model.  Subclass it, make parameters and child blocks
    in ``__init__`` inside ``with self.name_scope():``, and define ``forward``.

    ``prefix`` is put in front of every parameter name and child prefix (default: the
    class name in lower case and a counter, e.g. ``dense0_``); ``params`` is a
    :class:`ParameterDict` whose parameters this block shares."""

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self, weak=True)
        self._children: OrderedDict[str, Block] = OrderedDict()
        self._reg_params: dict[str, Parameter] = {}
        self._forward_hooks: OrderedDict[int, Any] = OrderedDict()
        self._forward_pre_hooks: OrderedDict[int, Any] = OrderedDict()

    def __repr__(self) -> str:
        lines = "\n".join(f"  ({key}): {indent(repr(block), 2)}"
                          for key, block in self.__dict__.items() if isinstance(block, Block))
        return f"{type(self).__name__}(\n{lines}\n)"

    def __setattr__(self, name: str, value: Any) -> None:
        """Attributes that are blocks become children, parameters become registered."""
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise GluonTypeError(f"Changing attribute type for {name} from {type(existing)} "
                                     f"to {type(value)}is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise GluonAssertionError(
                    f"Overriding Parameter attribute {name} is not allowed. If you want to share "
                    f"parameters between blocks, please set 'params' at Block construction "
                    f"instead.")
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _check_container_with_block(self) -> None:
        children = set(self._children.values())

        def unregistered(data: Any) -> bool:
            if isinstance(data, (list, tuple)):
                return any(unregistered(item) for item in data)
            if isinstance(data, dict):
                return any(unregistered(item) for item in data.values())
            return isinstance(data, Block) and data not in children

        for key, value in self.__dict__.items():
            if isinstance(value, (list, tuple, dict)) and not (
                    key.startswith("__") or key == "_children") and unregistered(value):
                warnings.warn(
                    f'"{type(self).__name__}.{key}" is an unregistered container with Blocks. '
                    f"Note that Blocks inside the list, tuple or dict will not be registered "
                    f"automatically. Make sure to register them using register_child() or "
                    f"switching to nn.Sequential/nn.HybridSequential instead. ", stacklevel=3)

    def _alias(self) -> str:
        return type(self).__name__.lower()

    @property
    def prefix(self) -> str:
        """The prefix of this block's parameter and child names."""
        return self._prefix

    @property
    def name(self) -> str:
        """The prefix without its trailing underscore."""
        return self._name

    def name_scope(self) -> _BlockScope:
        """``with block.name_scope():`` -- children and symbols made inside are named
        after this block."""
        return self._scope

    @property
    def params(self) -> ParameterDict:
        """This block's own parameters (not its children's: see :meth:`collect_params`)."""
        return self._params

    def collect_params(self, select: str | None = None) -> ParameterDict:
        """This block's and its descendants' parameters, those whose names match the
        regular expression ``select`` when given (``'.*weight|.*bias'``)."""
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({name: value for name, value in self.params.items()
                        if pattern.match(name)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix: str = "") -> dict[str, Parameter]:
        if prefix:
            prefix += "."
        ret = {prefix + key: value for key, value in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename: str, deduplicate: bool = False) -> None:
        """Save the parameters in MXNet's ``.params`` format, named by their place in the
        block tree (``0.weight``, ``features.1.bias``); ``deduplicate`` saves a shared
        parameter once."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            reverse = {v: k for k, v in params.items()}
            params = {k: v for v, k in reverse.items()}
        ndarray.save(filename, {key: value._reduce() for key, value in params.items()})

    def save_params(self, filename: str) -> None:
        """Deprecated: save by full parameter names (use :meth:`save_parameters`)."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you "
                      "want load from SymbolBlock later, please use export instead.",
                      stacklevel=2)
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_parameters(self, filename: str, ctx: Any = None, allow_missing: bool = False,
                        ignore_extra: bool = False, cast_dtype: bool = False,
                        dtype_source: str = "current") -> None:
        """Load parameters saved by :meth:`save_parameters` (or, when no name has a dot,
        by full name as ``save_params``/``ParameterDict.save`` write them)."""
        loaded = ndarray.load(filename)
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in key for key in loaded):
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            by_param = {v: k for k, v in params.items()}
            for name, param in params.items():
                if name not in loaded and by_param[param] not in loaded:
                    raise GluonAssertionError(
                        f"Parameter '{name}' is missing in file '{filename}', which contains "
                        f"parameters: {sorted(loaded)[:7]}. Set allow_missing=True to ignore "
                        f"missing parameters.")
        for name, value in loaded.items():
            if name not in params:
                if not ignore_extra:
                    raise GluonAssertionError(
                        f"Parameter '{name}' loaded from file '{filename}' is not present in "
                        f"ParameterDict, which contains parameters {sorted(params)[:7]}. Set "
                        f"ignore_extra=True to ignore. ")
                continue
            params[name]._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

    def save(self, prefix: str) -> None:
        """Save the block tree and its parameters: ``<prefix>-model.json`` (MXNet 1.9's
        layout: one entry per block, keyed by class name and visiting order, with the block's
        name, its children's keys and, for a hybridized HybridBlock, its traced graph) and
        ``<prefix>-model.params``.  :meth:`load` restores them into a tree built the same
        way, in the same order."""
        model: dict[str, Any] = {}

        def describe(block: Block, counter: list[int], into: dict) -> None:
            entry: dict[str, Any] = {"orig_name": block.name}
            into[f"{block._alias()}{counter[0]}"] = entry
            if isinstance(block, HybridBlock):
                entry["hybridized"] = bool(block._cached_graph)
                if block._cached_graph:
                    inputs, out = block._cached_graph
                    entry["in_format"] = block._in_format
                    entry["out_format"] = block._out_format
                    entry["inputs"] = [sym.tojson() for sym in inputs]
                    entry["symbol"] = out.tojson()
            entry["children"] = children = {}
            for key, child in block._children.items():
                counter[0] += 1
                children[child.name] = key
                describe(child, counter, entry)

        describe(self, [0], model)
        with open(f"{prefix}-model.json", "w") as fp:
            json.dump(model, fp)
        self.save_parameters(f"{prefix}-model.params")

    def load(self, prefix: str) -> None:
        """Load what :meth:`save` wrote into this block, whose tree must have been built as
        the saved one was (same classes, same order): every block takes back its saved
        name (and its parameters theirs), hybridized blocks their traced graph, then the
        parameters are loaded."""
        with open(f"{prefix}-model.json") as fp:
            model = json.load(fp)

        def restore(block: Block, counter: list[int], saved: dict) -> None:
            key = f"{block._alias()}{counter[0]}"
            if key not in saved:
                raise GluonValueError(
                    f"load({prefix!r}): the saved model has no block {key!r} here (it has "
                    f"{sorted(k for k in saved if k not in ('orig_name', 'children'))}); "
                    f"build the model exactly as it was built when saved")
            entry = saved[key]
            block._name = entry["orig_name"]
            if isinstance(block, HybridBlock) and entry.get("hybridized"):
                block._clear_cached_op()
                block._in_format = entry["in_format"]
                block._out_format = entry["out_format"]
                block._cached_graph = ([symbol.load_json(s) for s in entry["inputs"]],
                                       symbol.load_json(entry["symbol"]))
                block._active = True
            params = block.params._params
            old_prefix = block.params._prefix
            for name in list(params):
                param = params.pop(name)
                params[f"{block.name}_{name[len(old_prefix):]}"] = param
            for child in block._children.values():
                counter[0] += 1
                restore(child, counter, entry)
            renamed = OrderedDict()
            for child in block._children.values():
                renamed[entry["children"][child.name]] = child
            block._children.clear()
            block._children.update(renamed)

        restore(self, [0], model)
        self.load_parameters(f"{prefix}-model.params")

    def load_params(self, filename: str, ctx: Any = None, allow_missing: bool = False,
                    ignore_extra: bool = False) -> None:
        """Deprecated: :meth:`load_parameters`."""
        warnings.warn("load_params is deprecated. Please use load_parameters.", stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def register_child(self, block: Block, name: str | None = None) -> None:
        """Make ``block`` a child (named ``name``, default its index)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook: Any) -> HookHandle:
        """Call ``hook(block, inputs)`` before every forward; returns a handle to remove it."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook: Any) -> HookHandle:
        """Call ``hook(block, inputs, outputs)`` after every forward."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn: Any) -> Block:
        """Call ``fn(block)`` on every descendant and then this block; returns this block."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init: Any = _DEFAULT_INIT, ctx: Any = None,
                   verbose: bool = False, force_reinit: bool = False) -> None:
        """Initialize every parameter of the tree (see :meth:`ParameterDict.initialize`)."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        """Hybridize the hybrid descendants (a plain block itself always runs imperatively)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype: Any) -> None:
        """Cast every parameter of the tree to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for param in self.params.values():
            param.cast(dtype)

    def __call__(self, *args: Any) -> Any:
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = self.forward(*args)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        if is_np_array():  # under mx.npx.set_np() / @use_np blocks give mx.np arrays
            _check_not_mixed(out)
            out = _as_np_arrays(out)
        return out

    def forward(self, *args: Any) -> Any:
        """The computation; override it."""
        raise NotImplementedError(f"{type(self).__name__} must define forward(self, *args)")

    def register_op_hook(self, callback: Any, monitor_all: bool = False) -> None:
        """Pass ``callback(name, op_name, array)`` to the hybridized descendants."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def summary(self, *inputs: Any) -> None:
        """Print each layer's output shape and parameter count for one forward pass on
        ``inputs`` (the block must not be hybridized)."""
        summary: OrderedDict[str, dict] = OrderedDict()
        seen: set = set()
        hooks = []

        def shape_str(args: Any) -> str:
            def shapes(value: Any) -> Any:
                if isinstance(value, (list, tuple)):
                    return [shapes(v) for v in value]
                return value.shape if isinstance(value, NDArray) else value
            found = shapes(args)
            return (str(found)[1:-1] if isinstance(found, list) else str(found)).replace("L", "")

        def register(block: Block) -> None:
            if isinstance(block, HybridBlock) and block._active:
                raise GluonAssertionError(f'"{block.name}" must not be hybridized to print '
                                          f'summary.')

            def hook(block: Block, _: Any, outputs: Any) -> None:
                key = f"{type(block).__name__}-{len(summary)}"
                entry = summary[key] = {"output_shape": shape_str(outputs), "trainable": 0,
                                        "shared": 0}
                count = 0
                for param in block.params.values():
                    size = param.data().size
                    count += size
                    entry["trainable"] += 0 if param.grad_req == "null" else size
                    if param in seen:
                        entry["shared"] += size
                    else:
                        seen.add(param)
                entry["n_params"] = count

            from .nn import HybridSequential, Sequential

            if not isinstance(block, (Sequential, HybridSequential)):
                hooks.append(block.register_forward_hook(hook))

        summary["Input"] = {"output_shape": shape_str(inputs), "n_params": 0, "trainable": 0,
                            "shared": 0}
        try:
            self.apply(register)
            self(*inputs)
            row = "{:>20}  {:>42} {:>15}"
            print("-" * 80)
            print(row.format("Layer (type)", "Output Shape", "Param #"))
            print("=" * 80)
            total = trainable = shared = 0
            for layer, entry in summary.items():
                print(row.format(layer, str(entry["output_shape"]), entry["n_params"]))
                total += entry["n_params"]
                trainable += entry["trainable"]
                shared += entry["shared"]
            print("=" * 80)
            print("Parameters in forward computation graph, duplicate included")
            print(f"   Total params: {total}")
            print(f"   Trainable params: {trainable}")
            print(f"   Non-trainable params: {total - trainable}")
            print(f"Shared params in forward computation graph: {shared}")
            print(f"Unique parameters in model: {total - shared}")
            print("-" * 80)
        finally:
            for handle in hooks:
                handle.detach()


def _settle(arrays: list) -> None:
    """Wait for the outputs of a trace run, dropping an operator's failure: the caller runs
    the same operators on the same inputs next and meets it where it waits (a failure left
    pending would surface at some later, unrelated wait instead)."""
    for array in arrays:
        if array is not None:
            try:
                array.wait_to_read()
            except OperatorFailedError:
                pass


class HybridBlock(Block):
    """A block written once as ``hybrid_forward(F, x, *args, **params)`` where ``F`` is
    ``mx.nd`` or ``mx.sym``; after :meth:`hybridize` a call traces it into a symbol (once
    per input structure) and runs the symbol through a :class:`CachedOp`."""

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph: tuple = ()
        self._cached_op: CachedOp | None = None
        self._cached_op_args: list[tuple[bool, Any]] = []
        self._out_format: Any = None
        self._in_format: Any = None
        self._active = False
        self._flags: list[tuple[str, Any]] = []
        self._callback: Any = None
        self._monitor_all = False
        self._traces: dict[tuple, Any] = {}
        self._trace_constants: dict[str, _TraceConstant] = {}
        self._backend: str | None = None
        self._backend_opts: dict[str, Any] = {}

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def _get_graph(self, *args: Any) -> tuple:
        if not self._cached_graph:
            flat, self._in_format = _flatten(args, "input")
            real = sum(item is not None for item in flat)
            if real == 0:
                raise GluonValueError(f"All args are None and we do not support such a case. "
                                      f"Received args={args}")
            inputs: list = []
            data_syms = []
            for item in flat:
                if item is None:
                    inputs.append(None)
                    continue
                sym = symbol.var(f"data{len(data_syms)}" if real > 1 else "data")
                inputs.append(sym)
                data_syms.append(sym)
            grouped = _regroup(inputs, self._in_format)
            params = {key: value.var() for key, value in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(symbol, *grouped, **params)
            out, self._out_format = _flatten(out, "output")
            self._cached_graph = data_syms, symbol.Group(out)
        return self._cached_graph

    def _build_cache(self, *args: Any) -> None:
        data, out = self._get_graph(*args)
        data_names = {sym.name: i for i, sym in enumerate(data)}
        input_names = out.list_arguments() + out.list_auxiliary_states()
        params = {**self.collect_params(), **self._trace_constants}
        expected = set(input_names)
        for name in expected:
            if name not in params and name not in data_names:
                raise GluonAssertionError(f"Unknown input to HybridBlock: {name}")
        unused = [f"{i}-th" for name, i in data_names.items() if name not in expected]
        if unused:
            warnings.warn(f"The {', '.join(unused)} input to HybridBlock is not used by any "
                          f"computation. Is this intended?", stacklevel=4)
        unused_params = [name for name in self.collect_params().keys() if name not in expected]
        if unused_params:
            warnings.warn(f"Parameter {', '.join(unused_params)} is not used by any "
                          f"computation. Is this intended?", stacklevel=4)
        flat = [a for a in _flatten(args, "input")[0] if a is not None]
        try:
            for name in input_names:
                if name in params:
                    params[name].data()
        except DeferredInitializationError:  # (never a trace's: it ran with every value)
            self._deferred_infer_shape(*args)
            for name in input_names:
                if name in params:
                    params[name]._finish_deferred_init()
        del flat
        if self._backend:
            out = self._partition(out, data_names, args, params)
            self._cached_graph = data, out
        data_order = [n for n in input_names if n in data_names]
        param_order = [n for n in input_names if n not in data_names]
        self._cached_op_args = ([(True, data_names[n]) for n in data_order]
                                + [(False, params[n]) for n in param_order])
        self._cached_op = CachedOp(out, data_order, param_order, self._flags)

    def _partition(self, out: Any, data_names: dict[str, int], args: tuple,
                   params: Any) -> Any:
        """``out`` rewritten by the subgraph backend :meth:`hybridize` named, seeing the
        call's arrays and the parameters (the passes keep the graph's inputs)."""
        flat = [a for a in _flatten(args, "input")[0] if a is not None]
        contexts = {a.context for a in flat if isinstance(a, NDArray)}
        ctx = contexts.pop() if len(contexts) == 1 else None
        arrays = {}
        for name in out.list_inputs():
            if name in data_names and data_names[name] < len(flat):
                if isinstance(flat[data_names[name]], NDArray):
                    arrays[name] = flat[data_names[name]]
            elif name in params:
                arrays[name] = params[name].data(ctx)
        aux_names = set(out.list_auxiliary_states())
        return out.optimize_for(self._backend,
                                {k: v for k, v in arrays.items() if k not in aux_names},
                                {k: v for k, v in arrays.items() if k in aux_names}, ctx,
                                **self._backend_opts)

    def _deferred_infer_shape(self, *args: Any) -> None:
        try:
            self.infer_shape(*args)
        except Exception as err:
            raise GluonValueError(f"Deferred initialization failed because shape cannot be "
                                  f"inferred. {err}") from err

    def _call_cached_op(self, *args: Any) -> Any:
        if self._cached_op is None:
            self._build_cache(*args)
        flat, fmt = _flatten(args, "input")
        if fmt != self._in_format:
            short, long_ = sorted((fmt, self._in_format), key=len)
            valid = (isinstance(fmt, list) and isinstance(self._in_format, list)
                     and len(fmt) != len(self._in_format)
                     and long_[:len(short)] == short
                     and all(f == -1 for f in long_[len(short):]))
            if not valid:
                raise GluonValueError(f"The argument structure of HybridBlock does not match "
                                      f"the cached version. Stored format = {self._in_format}, "
                                      f"input format = {fmt}")
        present = [a for a in flat if a is not None]
        cargs = []
        ctx = present[0].context if present else None
        for is_arg, item in self._cached_op_args:
            if is_arg:
                cargs.append(present[item])
                continue
            # the common case: a Parameter with one dense array on the data's device
            held = getattr(item, "_data", None)  # (a traced graph's constants have none)
            if held is not None and len(held) == 1 and item._stype == "default" and (
                    ctx is None or held[0].context is ctx or held[0].context == ctx):
                cargs.append(held[0])
            else:
                try:
                    cargs.append(item.data(ctx))
                except DeferredInitializationError:
                    self._deferred_infer_shape(*args)
                    item._finish_deferred_init()
                    cargs.append(item.data(ctx))
        out = self._cached_op(*cargs)
        return _regroup(list(out), self._out_format)

    def _clear_cached_op(self) -> None:
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []
        self._traces = {}
        self._trace_constants = {}

    def _call_traced(self, *args: Any) -> Any:
        """NumPy mode (``@use_np``, ``npx.set_np()``, or ``mx.np`` arrays given): the
        graph is traced from one imperative run of ``hybrid_forward`` on ``mx.np`` arrays
        (MXNet 2's deferred compute), once per input structure, shapes, dtypes and
        training mode, since the Python code may read shapes.  Code a graph cannot hold
        (it reads values on the host, for one) runs imperatively instead, with a warning,
        and gives the same results."""
        flat, fmt = _flatten(args, "input")
        key = (repr(fmt), tuple(None if a is None else (a.shape, a.dtype, a.stype)
                                for a in flat), is_training())
        state = self._traces.get(key)
        if state is None:
            state = self._traces[key] = self._trace_graph(args, flat, fmt)
            if isinstance(state, str):
                warnings.warn(f"{type(self).__name__} runs imperatively although hybridized: "
                              f"its hybrid_forward cannot be traced into a graph because "
                              f"{state}", stacklevel=4)
        if isinstance(state, str):
            return self._forward_imperative(next(a for a in flat if a is not None).context,
                                            *args)
        (self._cached_graph, self._in_format, self._out_format, self._trace_constants,
         self._cached_op, self._cached_op_args, np_outputs) = state
        out, out_format = _flatten(self._call_cached_op(*args), "output")
        # each output the class the imperative run gave it (mx.np or legacy NDArray)
        return _regroup([as_np_ndarray(o) if is_np else o
                         for o, is_np in zip(out, np_outputs)], out_format)

    def _trace_graph(self, args: tuple, flat: list, fmt: Any) -> tuple | str:
        """Trace ``hybrid_forward`` on ``args``: the cached-graph state, or why it cannot be
        a graph."""
        present = [a for a in flat if a is not None]
        ctx = present[0].context
        names = ["data"] if len(present) == 1 else [f"data{i}" for i in range(len(present))]
        params = list(self.collect_params().values())
        for _ in range(2):  # twice when the run finished deferred initializations
            deferred = [p for p in params if not _initialized(p, ctx)]
            copies, found = [], iter(names)
            for item in flat:
                copies.append(None if item is None else _private_copy(item))
            with Tracer() as tracer:
                for copy_ in copies:
                    if copy_ is not None:
                        tracer.variable(next(found), copy_)
                for param in params:
                    if param not in deferred:
                        tracer.variable(param.name, param.data(ctx))
                out = self._forward_imperative(ctx, *_regroup(copies, fmt))
                out, out_format = _flatten(out, "output")
                graph = tracer.symbol(out) if tracer.problem is None else None
            _settle(out)
            if tracer.problem is not None:
                return tracer.problem
            if not any(_initialized(p, ctx) for p in deferred):
                break
        self._cached_graph = [symbol.var(name) for name in names], graph
        self._in_format, self._out_format = fmt, out_format
        self._trace_constants = {name: _TraceConstant(name, value)
                                 for name, value in tracer.constants.items()}
        self._build_cache(*args)
        np_outputs = tuple(isinstance(o, _NP_NDARRAY) for o in out)
        return (self._cached_graph, self._in_format, self._out_format, self._trace_constants,
                self._cached_op, self._cached_op_args, np_outputs)

    def register_child(self, block: Block, name: str | None = None) -> None:
        """Make ``block`` (which must be a HybridBlock) a child."""
        if not isinstance(block, HybridBlock):
            raise GluonValueError(
                f"Children of HybridBlock must also be HybridBlock, but {block} has type "
                f"{type(block)}. If you are using Sequential, please try HybridSequential "
                f"instead.")
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active: bool = True, backend: str | None = None, clear: bool = True,
                  static_alloc: bool = False, static_shape: bool = False,
                  inline_limit: int = 2, forward_bulk_size: int | None = None,
                  backward_bulk_size: int | None = None, **kwargs: Any) -> None:
        """Run this block (and its hybrid descendants) as a traced graph from the next call
        (``active=False`` goes back to imperative runs).  ``static_alloc``/``static_shape``
        are accepted as in MXNet (the graph's memory is always kept per input shape); a
        graph of at most ``inline_limit`` operators, without ``static_alloc``, is inlined
        into an autograd recording (each operator recorded on its own, so it differentiates
        twice).  ``backend`` names a subgraph backend whose graph passes rewrite this
        block's graph when it is traced (``Symbol.optimize_for``), with ``kwargs`` -- or a
        ``backend_opts`` dict -- as its options; the children are hybridized without it."""
        if backend is not None and not isinstance(backend, str):
            raise GluonValueError(f"hybridize: backend must be a subgraph backend's name, got "
                                  f"{type(backend).__name__} {backend!r}")
        options = dict(kwargs.pop("backend_opts", None) or {})
        options.update(kwargs)
        if options:
            self._backend_opts = options
        self._backend = backend
        self._active = active
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape),
                       ("inline_limit", inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(("forward_bulk_size", forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(("backward_bulk_size", backward_bulk_size))
        if clear:
            self._clear_cached_op()
        if (active and self._forward_hooks) or self._forward_pre_hooks:
            warnings.warn(f'"{self}" is being hybridized while still having forward hook/'
                          f'pre-hook. If "{self}" is a child of HybridBlock, the hooks will not '
                          f'take effect.', stacklevel=2)
        for child in self._children.values():
            child.hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                            inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                            backward_bulk_size=backward_bulk_size)

    def optimize_for(self, x: Any, *args: Any, backend: str | None = None, clear: bool = False,
                     static_alloc: bool = False, static_shape: bool = False,
                     inline_limit: int = 2, forward_bulk_size: int | None = None,
                     backward_bulk_size: int | None = None, **kwargs: Any) -> None:
        """Hybridize with the subgraph ``backend`` and trace and partition the graph for the
        inputs ``x, *args`` now, without running it (``kwargs``: the backend's options); then
        :meth:`export` writes the rewritten graph, or a call runs it."""
        if not backend:
            raise GluonValueError('Must specify "backend" to optimize_for, e.g. '
                                  'block.optimize_for(x, backend="default", op_names=[...])')
        self.hybridize(True, backend, clear, static_alloc, static_shape, inline_limit,
                       forward_bulk_size, backward_bulk_size, **kwargs)
        has_symbol, has_ndarray, contexts, _ = _gather_type_ctx_info([x, *args])
        if not has_symbol and not has_ndarray:
            raise GluonValueError("In HybridBlock, there must be one NDArray or one Symbol in "
                                  "the input. Please check the type of the args.\n")
        if len(contexts) > 1:
            raise GluonValueError(f"Found multiple contexts in the input, After hybridized, the "
                                  f"HybridBlock only supports one input context. Find all "
                                  f"contexts = {contexts}")
        self._build_cache(x, *args)

    def cast(self, dtype: Any) -> None:
        """Cast the parameters; the traced graph is rebuilt at the next call."""
        self._clear_cached_op()
        super().cast(dtype)

    def _infer_attrs(self, infer_fn: str, attr: str, *args: Any) -> None:
        inputs, out = self._get_graph(*args)
        flat = [a for a in _flatten(args, "input")[0] if a is not None]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            arg_attrs, _, aux_attrs = getattr(out, infer_fn)(
                **{i.name: getattr(j, attr) for i, j in zip(inputs, flat)})
        if arg_attrs is None:
            reason = str(caught[0].message) if caught else f"{infer_fn} failed"
            raise GluonValueError(reason)
        found = dict(zip(out.list_arguments(), arg_attrs))
        found.update(zip(out.list_auxiliary_states(), aux_attrs))
        for param in self.collect_params().values():
            if param.name in found:
                setattr(param, attr, found[param.name])

    def infer_shape(self, *args: Any) -> None:
        """Infer the parameters' shapes from inputs ``args``."""
        self._infer_attrs("infer_shape", "shape", *args)

    def infer_type(self, *args: Any) -> None:
        """Infer the parameters' dtypes from inputs ``args``."""
        self._infer_attrs("infer_type", "dtype", *args)

    def export(self, path: str, epoch: int = 0, remove_amp_cast: bool = True) -> tuple:
        """Write ``path-symbol.json`` and ``path-%04d.params`` (``arg:``/``aux:`` names),
        which ``SymbolBlock.imports`` and MXNet's ``mx.model.load_checkpoint`` read.  The
        block must have run hybridized once."""
        if not self._cached_graph:
            raise GluonError("Please first call block.hybridize() and then run forward with "
                             "this block at least once before calling export.")
        sym = self._cached_graph[1]
        sym_file = f"{path}-symbol.json"
        sym.save(sym_file, remove_amp_cast=remove_amp_cast)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        params = (self._cached_op_args if self._cached_op_args
                  else [(False, p) for p in self.collect_params().values()])
        for is_arg, param in params:
            if is_arg:
                continue
            if param.name in arg_names:
                arg_dict[f"arg:{param.name}"] = param._reduce()
            elif param.name in aux_names:
                arg_dict[f"aux:{param.name}"] = param._reduce()
            else:
                warnings.warn(f'Parameter "{param.name}" is not found in the graph. ',
                              stacklevel=3)
        params_file = f"{path}-{epoch:04d}.params"
        ndarray.save(params_file, arg_dict)
        return sym_file, params_file

    def register_op_hook(self, callback: Any, monitor_all: bool = False) -> None:
        """Remember ``callback`` for this block and its children."""
        self._callback = callback
        self._monitor_all = monitor_all
        for child in self._children.values():
            child._callback = callback
            child._monitor_all = monitor_all

    def forward(self, x: Any, *args: Any) -> Any:
        """Run ``hybrid_forward`` with ``F=mx.nd`` (or the traced graph when hybridized) on
        NDArrays, or with ``F=mx.sym`` on Symbols."""
        has_symbol, has_ndarray, contexts, first_ctx = _gather_type_ctx_info([x, *args])
        if has_symbol and has_ndarray:
            raise GluonValueError("In HybridBlock, we do not support mixed NDArrays and Symbols "
                                  "types for the input. Please check the type of the args.\n")
        if not has_symbol and not has_ndarray:
            raise GluonValueError("In HybridBlock, there must be one NDArray or one Symbol in "
                                  "the input. Please check the type of the args.\n")
        if has_ndarray:
            ctx = first_ctx
            if self._active and active_tracer() is None:  # in a trace: run inline, traced
                if len(contexts) > 1:
                    raise GluonValueError(
                        f"Find multiple contexts in the input, After hybridized, the "
                        f"HybridBlock only supports one input context. You can print the "
                        f"ele.ctx in the input arguments to inspect their contexts. Find all "
                        f"contexts = {contexts}")
                with ctx:
                    if is_np_array() or _any_np_array([x, *args]):
                        return self._call_traced(x, *args)
                    return self._call_cached_op(x, *args)
            with ctx:
                return self._forward_imperative(ctx, x, *args)
        params = {key: value.var() for key, value in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(symbol, x, *args, **params)

    def _forward_imperative(self, ctx: Any, *args: Any) -> Any:
        """``hybrid_forward`` with ``F=mx.nd`` on NDArrays, the parameters on ``ctx``."""
        try:
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        except DeferredInitializationError:
            self._deferred_infer_shape(*args)
            for param in self.params.values():
                param._finish_deferred_init()
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        return self.hybrid_forward(ndarray, *args, **params)

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        """The computation with ``F`` (``mx.nd`` or ``mx.sym``); override it."""
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward(self, F, "
                                  f"x, *args, **params)")


def _common_prefix(names: list[str]) -> str:
    if not names:
        return ""
    prefix = names[0]
    for name in names:
        i = 0
        while i < len(prefix) and i < len(name) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


class SymbolBlock(HybridBlock):
    """A block running a symbol: ``outputs`` (a symbol or a list), ``inputs`` (the
    variables fed with data); every other argument of the symbol becomes a parameter
    (auxiliary states with ``grad_req='null'``), shared from ``params`` when given."""

    @staticmethod
    def imports(symbol_file: str, input_names: str | list[str], param_file: str | None = None,
                ctx: Any = None, allow_missing: bool = False,
                ignore_extra: bool = False) -> SymbolBlock:
        """A block from a ``-symbol.json`` file (``export``, ``save_checkpoint``), with its
        parameters loaded from ``param_file`` (their dtypes as saved)."""
        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [symbol.var(name, dtype=np.float32) for name in input_names]
        else:
            inputs = [symbol.var(name) for name in input_names]
        block = SymbolBlock(sym, inputs)
        if param_file is not None:
            block.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                        cast_dtype=True, dtype_source="saved")
        return block

    def __repr__(self) -> str:
        graph = self._cached_graph
        return (f"{type(self).__name__}(\n{graph[1]} : {len(graph[0])} -> "
                f"{len(graph[1].list_outputs())}\n)")

    def __init__(self, outputs: Any, inputs: Any, params: ParameterDict | None = None):
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        input_names = set()
        for sym in syms:
            if len(sym.get_internals().list_outputs()) != 1:
                raise GluonAssertionError(f"Input symbols must be variable, but {sym} is an "
                                          f"output of operators")
            input_names.add(sym.name)
        out = symbol.Group(out) if len(out) > 1 else out[0]
        for name, attrs in out.attr_dict().items():  # as MXNet: no row_sparse variables
            if attrs.get("__storage_type__") == "1":
                raise GluonAssertionError(
                    f"SymbolBlock doesn't support Parameter '{name}' because its storage type "
                    f"is 'row_sparse'; declare it dense (drop stype='row_sparse')")
        arg_params = out.list_arguments()
        aux_params = out.list_auxiliary_states()
        arg_types, aux_types = _infer_param_types(syms, out, arg_params, aux_params)
        for arg, dtype in zip(arg_params, arg_types):
            if arg not in input_names:
                self.params.get(arg, allow_deferred_init=True, dtype=dtype)
        for aux, dtype in zip(aux_params, aux_types):
            if aux not in input_names:
                self.params.get(aux, grad_req="null", allow_deferred_init=True, dtype=dtype)
        self._cached_graph = syms, out
        strip = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[strip:]: value for key, value in self._params.items()}

    def forward(self, x: Any, *args: Any) -> Any:
        """Run the symbol on NDArrays, or compose it with Symbols."""
        if isinstance(x, NDArray):
            with x.context:
                return self._call_cached_op(x, *args)
        if not isinstance(x, Symbol):
            raise GluonAssertionError(f"HybridBlock requires the first argument to forward be "
                                      f"either Symbol or NDArray, but got {type(x)}")
        flat, fmt = _flatten([x, *args], "input")
        if fmt != self._in_format:
            raise GluonAssertionError("Invalid input format")
        ret = copy.copy(self._cached_graph[1])
        ret._compose(**{k.name: v for k, v in zip(self._cached_graph[0], flat)})
        return _regroup(list(ret), self._out_format)

    def _clear_cached_op(self) -> None:
        graph = self._cached_graph
        super()._clear_cached_op()
        self._cached_graph = graph

    def cast(self, dtype: Any) -> None:
        """Cast the parameters (BatchNorm statistics and scales stay float32 under
        float16, as MXNet keeps them)."""
        self._clear_cached_op()
        super().cast(dtype)
        if np.dtype(dtype).name == "float16":
            names = self._cached_graph[1].get_internals().list_inputs()
            for node in names:
                for stat in ("running_var", "moving_var"):
                    if node.endswith(stat):
                        prefix = node[:-len(stat)]
                        kind = stat.split("_")[0]
                        sibs = [prefix + t for t in (f"{kind}_mean", "gamma", "beta")]
                        if all(p in names for p in sibs):
                            for p in [node, *sibs]:
                                self.params.get(p).cast("float32")

    def hybrid_forward(self, F: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
        """Not used: a SymbolBlock runs its symbol."""
        raise NotImplementedError("a SymbolBlock runs its symbol; it has no hybrid_forward")

    def reset_ctx(self, ctx: Any) -> None:
        """Move every parameter to ``ctx``."""
        for param in self.collect_params().values():
            param.reset_ctx(ctx)


def _infer_param_types(in_params: list, out: Any, arg_params: list, aux_params: list,
                       default: Any = np.float32) -> tuple[list, list]:
    """The parameters' dtypes inferred from the input variables' declared dtypes (float32
    where nothing says otherwise)."""
    arg_types = aux_types = None
    given = {}
    for sym in in_params:
        with warnings.catch_warnings():  # an input without a declared dtype is expected
            warnings.simplefilter("ignore")
            dtypes = sym.infer_type()[0]
        if not dtypes:
            given = None
            break
        given[sym.name] = dtypes[0]
    if given is not None:
        try:
            arg_types, _, aux_types = out.infer_type(**given)
        except Exception:  # partial information: fall back to the default dtype
            arg_types = aux_types = None
    if arg_types is None or len(arg_types) != len(arg_params):
        arg_types = [default] * len(arg_params)
    if aux_types is None or len(aux_types) != len(aux_params):
        aux_types = [default] * len(aux_params)
    return list(arg_types), list(aux_types)


class _TraceConstant:
    """A value a traced graph uses that no operator computed (``mx.np.array([1, 2])`` in
    ``hybrid_forward``): an input of the cached graph, given like a parameter."""

    def __init__(self, name: str, value: NDArray):
        self.name = name
        self._value = value

    def data(self, ctx: Any = None) -> NDArray:
        value = self._value
        return value if ctx is None or value.context == ctx else value.as_in_context(ctx)


def _any_np_array(args: Any) -> bool:
    """Whether ``mx.np`` arrays are among ``args`` (nested lists included)."""
    if isinstance(args, (list, tuple)):
        return any(_any_np_array(a) for a in args)
    return isinstance(args, _NP_NDARRAY)


def _initialized(param: Parameter, ctx: Any) -> bool:
    try:
        param.data(ctx)
    except DeferredInitializationError:
        return False
    return True


def _private_copy(array: NDArray) -> NDArray:
    """A copy a trace may write into (as ``x += 1`` in hybrid_forward) without the
    caller's array changing; an ``mx.np`` array stays one."""
    copied = array.copy()
    return as_np_ndarray(copied) if isinstance(array, _NP_NDARRAY) else copied


def _check_not_mixed(out: Any) -> None:
    """In NumPy mode a block's outputs are ``mx.np`` arrays: legacy NDArrays among them
    (``x.as_nd_ndarray()`` results) are refused, as MXNet refuses them.  Outputs that are
    all legacy NDArrays are taken as ``mx.np`` arrays, since dagnet's own layers run the
    legacy operators in NumPy mode too."""
    flat = list(_arrays_in(out))
    kinds = {isinstance(o, _NP_NDARRAY) for o in flat}
    if len(kinds) > 1:
        legacy = next(type(o) for o in flat if not isinstance(o, _NP_NDARRAY))
        raise TypeError(f"Block's output ndarrays/symbols must be of type "
                        f"`mxnet.numpy.ndarray` or `mxnet.symbol.numpy._Symbol`, while got "
                        f"output type {legacy}")


def _arrays_in(out: Any) -> Any:
    """The NDArrays in ``out`` (nested lists and tuples)."""
    if isinstance(out, NDArray):
        yield out
    elif isinstance(out, (list, tuple)):
        for item in out:
            yield from _arrays_in(item)


def _as_np_arrays(out: Any) -> Any:
    """The NDArrays in a block's output (nested lists and tuples) as ``mx.np`` arrays."""
    if isinstance(out, NDArray):
        return as_np_ndarray(out)
    if isinstance(out, (list, tuple)):
        return type(out)(_as_np_arrays(o) for o in out)
    return out
