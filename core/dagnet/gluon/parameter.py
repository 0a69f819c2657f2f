"""Gluon's parameters: :class:`Parameter` (a weight with one array per context and its
gradient), :class:`Constant` (a parameter that is never trained) and
:class:`ParameterDict` (parameters by full name under a prefix, as blocks hold them).

A parameter whose shape is not fully known (a 0 dimension) and that allows deferred
initialization is initialized at the first forward pass, once the block has inferred
its shape from the data; reading it before raises :class:`DeferredInitializationError`.
"""

from __future__ import annotations

import json
import re
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from .. import autograd, initializer, ndarray, symbol
from ..context import Context, cpu, current_context
from ..ndarray import NDArray
from ..numpy import as_np_ndarray
from ..util import is_np_array, is_np_shape
from ._errors import (
    DeferredInitializationError,
    GluonAssertionError,
    GluonError,
    GluonTypeError,
    GluonValueError,
)
from .utils import brief_print_list, indent, shape_is_known

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict",
           "tensor_types"]

# MXNet's default, made once (a default argument is evaluated once anyway)
_DEFAULT_INIT = initializer.Uniform()

tensor_types = (symbol.Symbol, NDArray)

_GRAD_REQS = ("write", "add", "null")


def _check_stype(name: str, what: str, stype: str) -> None:
    if stype not in ("default", "row_sparse", "csr"):
        raise GluonAssertionError(f"{what} for Parameter '{name}' must be one of 'default', "
                                  f"'row_sparse', or 'csr', but got '{stype}'")


class Parameter:
    """A weight of a block: its name, shape (0 for a dimension inferred later), dtype,
    initializer, gradient mode (``grad_req``: ``'write'``, ``'add'`` or ``'null'``) and
    learning-rate and weight-decay multipliers; after :meth:`initialize` one array (and
    one gradient) per context.

    ``stype`` and ``grad_stype`` are the storage types of the arrays and of the
    gradients (``'default'``, ``'row_sparse'`` or ``'csr'``).  A sparse parameter is
    read through its :class:`Trainer`'s store: :meth:`row_sparse_data` pulls the
    rows a batch needs (``data()`` refuses it, as in MXNet)."""

    def __init__(self, name: str, grad_req: str = "write", shape: Any = None,
                 dtype: Any = np.float32, lr_mult: float = 1.0, wd_mult: float = 1.0,
                 init: Any = None, allow_deferred_init: bool = False,
                 differentiable: bool = True, stype: str = "default",
                 grad_stype: str = "default"):
        self._var = None
        self._data: list[NDArray] | None = None
        self._grad: list[NDArray] | None = None
        self._ctx_list: list[Context] | None = None
        self._ctx_map: dict[Context, int] = {}
        self._trainer: Any = None
        self._deferred_init: tuple = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req: str | None = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = tuple(shape) if shape is not None else None
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        _check_stype(name, "grad_stype", grad_stype)
        _check_stype(name, "stype", stype)
        self._grad_stype = grad_stype
        self._stype = stype

    def __repr__(self) -> str:
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self) -> str | None:
        """How :func:`backward` writes this parameter's gradient: ``'write'``, ``'add'``
        (accumulate; reset with :meth:`zero_grad`) or ``'null'`` (none)."""
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req not in _GRAD_REQS:
            raise GluonAssertionError(f"grad_req must be one of 'write', 'add', or 'null', but "
                                      f"got '{req}'")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [array.detach() for array in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self) -> Any:
        """The dtype of the arrays; setting it casts them (:meth:`cast`)."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype: Any) -> None:
        self.cast(dtype)

    @property
    def shape(self) -> tuple | None:
        """The shape, with 0 for dimensions not known yet (``None`` when nothing is known);
        with NumPy shape semantics on, an unknown dimension reads as -1 (a 0 would be a
        real zero-size one)."""
        if self._shape is not None and is_np_shape():
            return tuple(-1 if d == 0 else d for d in self._shape)
        return self._shape

    @shape.setter
    def shape(self, new_shape: Any) -> None:
        new_shape = tuple(new_shape)
        if self._shape is None:
            self._shape = new_shape
            return
        if len(self._shape) != len(new_shape) or not all(
                j in (-1, 0, i) for i, j in zip(new_shape, self._shape)):
            raise GluonAssertionError(f"Expected shape {new_shape} is incompatible with given "
                                      f"shape {self._shape} (Parameter '{self.name}').")
        self._shape = new_shape

    @property
    def stype(self) -> str:
        """The storage type of the arrays: ``'default'`` (dense), ``'row_sparse'`` or
        ``'csr'``."""
        return self._stype

    @property
    def grad_stype(self) -> str:
        """The storage type of the gradients."""
        return self._grad_stype

    def _set_trainer(self, trainer: Any) -> None:
        if self._stype != "default" and self._trainer is not None and trainer is not None \
                and self._trainer is not trainer:
            raise GluonError(f"Failed to set the trainer for Parameter '{self.name}' because it "
                             f"was already set. More than one trainer for a {self._stype} "
                             f"Parameter is not supported.")
        self._trainer = trainer

    def _check_and_get(self, arr_list: list[NDArray] | None, ctx: Any) -> Any:
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            idx = self._ctx_map.get(ctx)
            if idx is not None:
                return arr_list[idx]
            raise GluonError(f"Parameter '{self.name}' was not initialized on context {ctx}. "
                             f"It was only initialized on {self._ctx_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because initialization "
                f"was deferred. Actual initialization happens during the first forward pass. "
                f"Please pass one batch of data through the network before accessing "
                f"Parameters. You can also avoid deferred initialization by specifying "
                f"in_units, num_features, etc., for network layers.")
        raise GluonError(f"Parameter '{self.name}' has not been initialized. Note that you "
                         f"should initialize parameters and create Trainer with "
                         f"Block.collect_params() instead of Block.params because the later "
                         f"does not include Parameters of nested child Blocks")

    def _load_init(self, data: NDArray, ctx: Any, cast_dtype: bool = False,
                   dtype_source: str = "current") -> None:
        """Initialize (or overwrite) from loaded ``data``, checking shape and dtype."""
        if cast_dtype and dtype_source not in ("current", "saved"):
            raise GluonValueError(f"dtype_source must be 'current' or 'saved', got "
                                  f"{dtype_source!r}")
        if self.shape:
            if len(self.shape) != len(data.shape) or not all(
                    s in (0, d) for s, d in zip(self.shape, data.shape)):
                raise GluonAssertionError(
                    f"Failed loading Parameter '{self.name}' from saved params: shape "
                    f"incompatible expected {self.shape} vs saved {data.shape}")
            self._shape = tuple(d if s == 0 else s for s, d in zip(self.shape, data.shape))
        if self.dtype is not None:
            if cast_dtype and np.dtype(self.dtype) != data.dtype:
                if dtype_source == "current":
                    data = data.astype(self.dtype, copy=False)
                else:
                    self.dtype = data.dtype
            elif np.dtype(self.dtype) != data.dtype:
                raise GluonAssertionError(
                    f"Failed loading Parameter '{self.name}' from saved params: dtype "
                    f"incompatible expected {np.dtype(self.dtype)} vs saved {data.dtype}. Set "
                    f"cast_dtype=True to cast the dtype of saved params.")
        if self._stype != data.stype:
            data = data.tostype(self._stype)
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                if ctx is not None and set(ctx) != set(self._deferred_init[1]):
                    raise GluonAssertionError(
                        f"Failed to load Parameter '{self.name}' on {ctx} because it was "
                        f"previous initialized on {self.list_ctx()}.")
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            if ctx is not None and set(ctx) != set(self.list_ctx()):
                raise GluonAssertionError(
                    f"Failed to load Parameter '{self.name}' on {ctx} because it was "
                    f"previous initialized on {self.list_ctx()}.")
            self.set_data(data)
        self._deferred_init = ()

    def _finish_deferred_init(self) -> None:
        """Allocate and initialize the arrays now that the shape is known."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not shape_is_known(self.shape):
            raise GluonValueError(f"Cannot initialize Parameter '{self.name}' because it has "
                                  f"invalid shape: {self.shape}. Please specify in_units, "
                                  f"in_channels, etc for `Block`s.")
        with autograd.pause():
            if data is None:
                data = ndarray.zeros(self.shape, dtype=self.dtype, ctx=cpu())
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {"__init__": init}), data)
            if self._stype != data.stype:
                data = data.tostype(self._stype)
            self._init_impl(data, ctx)

    def _init_impl(self, data: NDArray, ctx_list: list[Context]) -> None:
        self._ctx_list = list(ctx_list)
        self._ctx_map = {ctx: i for i, ctx in enumerate(self._ctx_list)}
        self._data = [data.copyto(ctx) for ctx in self._ctx_list]
        if is_np_array():  # MXNet's np mode: parameters are mx.np arrays
            self._data = [as_np_ndarray(a) for a in self._data]
        self._init_grad()

    def _init_grad(self) -> None:
        if self.grad_req == "null":
            self._grad = None
            return
        self._grad = [ndarray.zeros(a.shape, dtype=a.dtype, ctx=a.context,
                                    stype=self._grad_stype) for a in self._data]
        if is_np_array():
            self._grad = [as_np_ndarray(g) for g in self._grad]
        autograd.mark_variables(self._check_and_get(self._data, list), self._grad,
                                self.grad_req)

    def _reduce(self) -> NDArray:
        """The average of the copies on every context, on the CPU (a sparse parameter's
        every row, from its trainer's store)."""
        if self._stype != "default":
            if self._trainer is None:
                raise GluonError(f"Cannot read the value of {self._stype} Parameter "
                                 f"'{self.name}' when no Trainer is created with it")
            data = ndarray.zeros(self.shape, ctx=cpu(), dtype=self.dtype, stype=self._stype)
            every_row = ndarray.arange(0, self.shape[0], dtype="int64", ctx=cpu())
            self._trainer._row_sparse_pull(self, data, every_row, full_idx=True)
            return data
        arrays = self.list_data()
        if len(arrays) > 1:
            return ndarray.add_n(*(a.copyto(cpu()) for a in arrays)) / len(arrays)
        return arrays[0].copyto(cpu())

    def initialize(self, init: Any = None, ctx: Any = None,
                   default_init: Any = _DEFAULT_INIT,
                   force_reinit: bool = False) -> None:
        """Allocate the arrays on ``ctx`` (a context or a list; default the current one)
        and fill them with ``init`` (else the parameter's own ``init``, else
        ``default_init``).  Deferred until the first forward pass when the shape is
        not known yet and the parameter allows it.  An initialized parameter warns and
        stays as it is unless ``force_reinit``."""
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          f"force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise GluonValueError(f"Cannot initialize Parameter '{self.name}' because it has "
                                  f"invalid shape: {self.shape}.")
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def reset_ctx(self, ctx: Any) -> None:
        """Move the parameter to ``ctx`` (a context or a list), keeping its value."""
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise GluonValueError(f"Cannot reset context for Parameter '{self.name}' because "
                                  f"it has not been initialized.")

    def set_data(self, data: Any) -> None:
        """Copy ``data`` into the array on every context (or keep it for a deferred
        initialization)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise GluonAssertionError(f"Parameter '{self.name}' has not been initialized")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if trainer is not None and getattr(trainer, "_kv_initialized", False) and \
                getattr(trainer, "_update_on_kvstore", False) and \
                self not in trainer._params_to_init:
            trainer._reset_kvstore()
        for array in self._check_and_get(self._data, list):
            array[:] = data

    def _get_row_sparse(self, ctx: Any, row_id: Any) -> Any:
        """Pull the rows ``row_id`` of a row_sparse parameter from its trainer's store
        into the array on ``ctx`` (or every array, for ``ctx=list``)."""
        if not isinstance(row_id, NDArray):
            raise GluonTypeError(f"row_id must be an NDArray of row indices, got "
                                 f"{type(row_id).__name__}")
        if self._trainer is None:
            raise GluonError(f"Cannot get row_sparse data for Parameter '{self.name}' when no "
                             f"Trainer is created with it; create a gluon.Trainer with it "
                             f"first")
        results = self._check_and_get(self._data, ctx)
        self._trainer._row_sparse_pull(self, results, row_id)
        return results

    def row_sparse_data(self, row_id: NDArray) -> NDArray:
        """The array of a row_sparse parameter on ``row_id``'s context, holding (only) the
        rows ``row_id`` lists, pulled from the trainer's store."""
        if self._stype != "row_sparse":
            raise GluonError(f"Cannot return a copy of Parameter {self.name} via "
                             f"row_sparse_data() because its storage type is {self._stype}. "
                             f"Please use data() instead.")
        return self._get_row_sparse(row_id.context, row_id)

    def list_row_sparse_data(self, row_id: NDArray) -> list[NDArray]:
        """The arrays of a row_sparse parameter on every context, each holding the rows
        ``row_id`` lists, pulled from the trainer's store."""
        if self._stype != "row_sparse":
            raise GluonError(f"Cannot return copies of Parameter '{self.name}' on all contexts "
                             f"via list_row_sparse_data() because its storage type is "
                             f"{self._stype}. Please use data() instead.")
        return self._get_row_sparse(list, row_id)

    def data(self, ctx: Context | None = None) -> NDArray:
        """The array on ``ctx`` (default: the only one, or the current context's); a
        sparse parameter is read with :meth:`row_sparse_data` instead."""
        if self._stype != "default":
            raise GluonError(f"Cannot return a copy of Parameter '{self.name}' on ctx {ctx} via "
                             f"data() because its storage type is {self._stype}. Please use "
                             f"row_sparse_data() instead.")
        return self._check_and_get(self._data, ctx)

    def list_data(self) -> list[NDArray]:
        """The arrays on every context, in :meth:`list_ctx` order (dense parameters)."""
        if self._stype != "default":
            raise GluonError(f"Cannot return copies of Parameter '{self.name}' on all contexts "
                             f"via list_data() because its storage type is {self._stype}. "
                             f"Please use row_sparse_data() instead.")
        return self._check_and_get(self._data, list)

    def grad(self, ctx: Context | None = None) -> NDArray:
        """The gradient on ``ctx``."""
        if self._data is not None and self._grad is None:
            raise GluonError(f"Cannot get gradient array for Parameter '{self.name}' because "
                             f"grad_req='null'")
        return self._check_and_get(self._grad, ctx)

    def list_grad(self) -> list[NDArray]:
        """The gradients on every context."""
        if self._data is not None and self._grad is None:
            raise GluonError(f"Cannot get gradient array for Parameter '{self.name}' because "
                             f"grad_req='null'")
        return self._check_and_get(self._grad, list)

    def list_ctx(self) -> list[Context]:
        """The contexts the parameter lives (or will live) on."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise GluonError(f"Parameter '{self.name}' has not been initialized")
        return self._ctx_list

    def zero_grad(self) -> None:
        """Set the gradients to 0 (needed between steps with ``grad_req='add'``)."""
        if self._grad is None:
            return
        _zero_arrays(self._grad)

    def var(self) -> Any:
        """The symbol variable standing for this parameter in a hybridized graph."""
        if self._var is None:
            self._var = symbol.var(self.name, shape=self.shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult, init=self.init,
                                   stype=self._stype)
        return self._var

    def cast(self, dtype: Any) -> None:
        """Cast the arrays (and gradients) to ``dtype``."""
        self._dtype = dtype
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [array.astype(dtype) for array in self._data]
            if self._grad is None:
                return
            self._grad = [grad.astype(dtype) for grad in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


def _constant_initializer(name: str, constant: Constant) -> type[initializer.Initializer]:
    """The initializer class a :class:`Constant` registers under ``name``, as MXNet does:
    it copies the constant's value into the array, reading the value only when it runs
    (naming it in a graph waits on nothing).  It holds the constant weakly; the name is
    unregistered when the constant is collected."""
    ref = weakref.ref(constant)

    class ConstantValue(initializer.Initializer):
        def _init_weight(self, desc: Any, arr: NDArray) -> None:
            owner = ref()
            if owner is None:
                raise GluonError(
                    f"initializer {name!r} copies the value of a Constant that no longer "
                    f"exists; keep the Constant (or its block) alive while initializing")
            owner.value.copyto(arr)

        _init_default = _init_bias = _init_gamma = _init_beta = _init_weight

        def dumps(self) -> str:
            return json.dumps([name, {}])

    ConstantValue.__qualname__ = ConstantValue.__name__ = name
    initializer.register(ConstantValue, name)
    weakref.finalize(constant, initializer.unregister, name, ConstantValue)
    return ConstantValue


class Constant(Parameter):
    """A parameter holding ``value`` that is never trained (``grad_req`` is always
    ``'null'``)."""

    def __init__(self, name: str, value: Any):
        if not isinstance(value, NDArray):
            value = ndarray.array(value)
        self.value = value
        # MXNet's init for a constant: the name of an initializer registered for it
        init_name = f"Constant_{name}_{id(self)}"
        _constant_initializer(init_name, self)
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=init_name)

    def __repr__(self) -> str:
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self) -> str:
        """Always ``'null'``."""
        return "null"

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req != "null":
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other '
                          f'than "null", and new value "{req}" is ignored.', stacklevel=2)


class ParameterDict:
    """Parameters by full name, all starting with ``prefix``; ``shared`` is another
    dict whose parameters :meth:`get` returns instead of making new ones (parameter
    sharing between blocks)."""

    def __init__(self, prefix: str = "", shared: ParameterDict | None = None):
        self._prefix = prefix
        self._params: OrderedDict[str, Parameter] = OrderedDict()
        self._shared = shared

    def __repr__(self) -> str:
        name = self._prefix + " " if self._prefix else ""
        content = "\n".join(indent(f"  {v}", 2) for v in self.values())
        return f"{name}(\n{content}\n)"

    def __getitem__(self, key: str) -> Parameter:
        return self._params[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __contains__(self, key: object) -> bool:
        return key in self._params

    def items(self) -> Any:
        """(name, parameter) pairs."""
        return self._params.items()

    def keys(self) -> Any:
        """The full names."""
        return self._params.keys()

    def values(self) -> Any:
        """The parameters."""
        return self._params.values()

    @property
    def prefix(self) -> str:
        """What every name in this dict starts with."""
        return self._prefix

    def _get_impl(self, name: str) -> Parameter | None:
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._shared._params[name]
        return None

    def get(self, name: str, **kwargs: Any) -> Parameter:
        """The parameter ``prefix + name``, made with ``kwargs`` (Parameter's arguments)
        if it does not exist; an existing one must agree with ``kwargs`` (unknown shape
        dimensions are filled in from them)."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for key, value in kwargs.items():
            existing = getattr(param, key, None)
            if existing is None:
                setattr(param, key, value)
                continue
            if key == "shape" and value is not None:
                value = (value,) if isinstance(value, int) else tuple(value)
                if len(value) == len(existing):
                    merged = []
                    for dim1, dim2 in zip(value, existing):
                        if dim1 != dim2 and dim1 > 0 and dim2 > 0:
                            break
                        merged.append(dim2 if dim1 in (0, -1) else dim1)
                    else:
                        param._shape = tuple(merged)
                        continue
            elif key == "dtype" and value is not None and np.dtype(value) == np.dtype(existing):
                continue
            if value is not None and value != existing:
                raise GluonAssertionError(
                    f"Cannot retrieve Parameter '{name}' because desired attribute does not "
                    f"match with stored for attribute '{key}': desired '{value}' vs stored "
                    f"'{existing}'.")
        return param

    def get_constant(self, name: str, value: Any = None) -> Constant:
        """The constant ``prefix + name``, made from ``value`` if it does not exist."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{name}'. Please specify value if you want "
                               f"to create a new constant.")
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise GluonAssertionError(f"Parameter '{name}' already exists but it is not a "
                                          f"constant.")
            if isinstance(value, NDArray):
                value = value.asnumpy()
            value = np.asarray(value)
            if param.shape != value.shape or not (param.value.asnumpy() == value).all():
                raise GluonAssertionError(f"Constant '{name}' already exists but it's value "
                                          f"doesn't match new value")
        return param

    def update(self, other: ParameterDict | Mapping[str, Parameter]) -> None:
        """Add the parameters of ``other``; a name already here must be the same object."""
        for key, value in other.items():
            if key in self._params and self._params[key] is not value:
                raise GluonAssertionError(f"Cannot update self with other because they have "
                                          f"different Parameters with the same name '{key}'")
        for key, value in other.items():
            self._params[key] = value

    def initialize(self, init: Any = _DEFAULT_INIT, ctx: Any = None,
                   verbose: bool = False, force_reinit: bool = False) -> None:
        """Initialize every parameter (``init`` is the default for those without their
        own initializer)."""
        if verbose:
            init.set_verbosity(verbose=verbose)
        for value in self.values():
            value.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self) -> None:
        """Set every gradient to 0 (one ``reset_arrays`` call per context, as MXNet)."""
        _zero_arrays([g for p in self.values() if p.grad_req != "null" and p._grad is not None
                      for g in p._grad])

    def reset_ctx(self, ctx: Any) -> None:
        """Move every parameter to ``ctx``."""
        for param in self.values():
            param.reset_ctx(ctx)

    def list_ctx(self) -> list[Context]:
        """Every context some parameter lives on."""
        found: list[Context] = []
        for param in self.values():
            for ctx in param.list_ctx():
                if ctx not in found:
                    found.append(ctx)
        return found

    def setattr(self, name: str, value: Any) -> None:
        """Set attribute ``name`` (``grad_req``, ``lr_mult``, ...) of every parameter."""
        for param in self.values():
            setattr(param, name, value)

    def select(self, select: str | None) -> ParameterDict:
        """The parameters whose names match the regular expression ``select``."""
        if select is None:
            return self
        pattern = re.compile(select)
        selected = ParameterDict(self._prefix)
        selected._params.update((k, v) for k, v in self.items() if pattern.match(k))
        return selected

    def save(self, filename: str, strip_prefix: str = "") -> None:
        """Save every parameter's value (averaged over contexts) with ``mx.nd.save``, named
        without ``strip_prefix``."""
        arg_dict = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise GluonValueError(
                    f"Prefix '{strip_prefix}' is to be striped before saving, but Parameter's "
                    f"name '{param.name}' does not start with '{strip_prefix}'. this may be due "
                    f"to your Block shares parameters from other Blocks or you forgot to use "
                    f"'with name_scope()' when creating child blocks.")
            arg_dict[param.name[len(strip_prefix):]] = param._reduce()
        ndarray.save(filename, arg_dict)

    def load(self, filename: str, ctx: Any = None, allow_missing: bool = False,
             ignore_extra: bool = False, restore_prefix: str = "", cast_dtype: bool = False,
             dtype_source: str = "current") -> None:
        """Load values saved by :meth:`save` (or ``mx.nd.save``, ``arg:``/``aux:`` names
        accepted), putting ``restore_prefix`` in front of the saved names."""
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise GluonAssertionError(
                        f"restore_prefix is '{restore_prefix}' but Parameters name '{name}' "
                        f"does not start with '{restore_prefix}'.")
        self.load_dict(ndarray.load(filename), ctx, allow_missing, ignore_extra,
                       restore_prefix, filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict: Any, ctx: Any = None, allow_missing: bool = False,
                  ignore_extra: bool = False, restore_prefix: str = "",
                  filename: str | None = None, cast_dtype: bool = False,
                  dtype_source: str = "current") -> None:
        """Load values from a dict of name to NDArray (see :meth:`load`)."""
        lprefix = len(restore_prefix)
        items = param_dict.items() if isinstance(param_dict, Mapping) else param_dict
        loaded = [(k[4:] if k.startswith(("arg:", "aux:")) else k, v) for k, v in items]
        arg_dict = {restore_prefix + k: v for k, v in loaded}
        source = f"file: {filename}" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise GluonAssertionError(
                        f"Parameter '{name[lprefix:]}' is missing in {source}, which contains "
                        f"parameters: {brief_print_list(arg_dict.keys())}. Please make sure "
                        f"source and target networks have the same prefix.")
        for name, value in arg_dict.items():
            if name not in self._params:
                if not ignore_extra:
                    raise GluonAssertionError(
                        f"Parameter '{name[lprefix:]}' loaded from {source} is not present in "
                        f"ParameterDict, choices are: {brief_print_list(self._params.keys())}. "
                        f"Set ignore_extra to True to ignore. Please make sure source and "
                        f"target networks have the same prefix.")
                continue
            self[name]._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)


def _zero_arrays(arrays: list) -> None:
    """Zero dense ``arrays`` with one ``reset_arrays`` call per context; others one by one."""
    by_ctx: dict[Any, list] = {}
    for array in arrays:
        if getattr(array, "stype", "default") == "default":
            by_ctx.setdefault(array.context, []).append(array)
        else:
            array[:] = 0
    for group in by_ctx.values():
        ndarray.reset_arrays(*group, num_arrays=len(group))
