"""The :class:`Symbol`: a handle on one or more outputs of a symbolic graph.

Symbols are built by applying operators to variables and other symbols
(``mx.sym.<op>``), combined with arithmetic, grouped (:func:`Group`),
composed (calling a symbol replaces its variables), inspected
(``list_arguments``, ``get_internals``, attributes), inferred
(``infer_shape``, ``infer_type``), serialized (``tojson``) and bound to
devices as an executor (``bind``, ``simple_bind``).
"""

from __future__ import annotations

import copy as _copy
import ctypes
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .. import attribute as _attribute
from .._errors import (
    DTypeError,
    NotImplementedForSymbol,
    OperatorError,
    ShapeError,
    UnknownNameError,
)
from .._handles import handle_of, resolve
from ._compose import SymbolArgumentError, apply_op, single_entry
from ._infer import (
    dtype_from_attr,
    dtype_to_attr,
    infer_shapes,
    infer_types,
    parse_shape_attr,
    shape_is_final,
)
from ._node import Entry, Node, copy_graph, is_hidden_attr, topo_order

_STORAGE_TYPE_IDS = {"default": 0, "row_sparse": 1, "csr": 2}  # MXNet's storage-type ids

__all__ = ["Symbol", "Variable", "var", "Group", "NotImplementedForSymbol", "UnknownOutputError"]

_NUMBER = (int, float, np.integer, np.floating, np.bool_)


class UnknownOutputError(UnknownNameError, ValueError):
    """A name that is none of the symbol's outputs or variables (a ``ValueError`` too, as
    MXNet raises for ``symbol['name']``)."""


class Symbol:
    """One or more outputs of a symbolic graph (MXNet's ``mx.sym.Symbol``).

    Make symbols with :func:`Variable` and the operator functions
    ``mx.sym.<op>``; do not call this class directly.
    """

    __slots__ = ("_outputs", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, outputs: Sequence[Entry] | ctypes.c_void_p):
        if isinstance(outputs, ctypes.c_void_p):  # MXNet's Symbol(handle)
            outputs = resolve(outputs, Symbol, "Symbol(handle)")._outputs
        self._outputs: list[Entry] = list(outputs)

    @property
    def handle(self) -> ctypes.c_void_p:
        """A handle standing for this symbol (MXNet's ``SymbolHandle``), for code that passes
        it to ``mxnet.base._LIB``'s emulated entry points; ``Symbol(handle)`` takes it back."""
        return ctypes.c_void_p(handle_of(self))

    # -- structure ------------------------------------------------------------
    @property
    def name(self) -> str | None:
        """The node's name for a single-output symbol; None for a group."""
        return self._outputs[0][0].name if len(self._outputs) == 1 else None

    def _nodes(self) -> list[Node]:
        return topo_order(self._outputs)

    def _aux_nodes(self, nodes: list[Node]) -> set[int]:
        aux = set()
        for node in nodes:
            for index in node.aux_inputs():
                aux.add(id(node.inputs[index][0]))
        return aux

    def _variables(self, nodes: list[Node] | None = None) -> tuple[list[Node], list[Node]]:
        """(argument nodes, auxiliary-state nodes) in graph order (of ``nodes``, the
        symbol's :meth:`_nodes` when the caller has them already)."""
        nodes = self._nodes() if nodes is None else nodes
        aux = self._aux_nodes(nodes)
        variables = [n for n in nodes if n.op is None]
        return [n for n in variables if id(n) not in aux], [n for n in variables if id(n) in aux]

    def list_arguments(self) -> list[str]:
        """The names of the inputs that are not auxiliary states, in graph order."""
        return [n.name for n in self._variables()[0]]

    def list_auxiliary_states(self) -> list[str]:
        """The names of the auxiliary states (BatchNorm's moving statistics, ...)."""
        return [n.name for n in self._variables()[1]]

    def list_inputs(self) -> list[str]:
        """Every variable's name, arguments and auxiliary states, in graph order."""
        return [n.name for n in self._nodes() if n.op is None]

    def list_outputs(self) -> list[str]:
        """The output names: ``<node>_<output>`` (``fc1_output``), a variable's own name."""
        return [node.output_names()[index] for node, index in self._outputs]

    def __len__(self) -> int:
        return len(self._outputs)

    def __iter__(self) -> Iterator[Symbol]:
        return (Symbol([entry]) for entry in self._outputs)

    def __getitem__(self, index: int | str | slice) -> Symbol:
        """One output by position or by name (``sym['fc1_output']``), or a slice of them."""
        if isinstance(index, slice):
            return Symbol(self._outputs[index])
        if isinstance(index, str):
            names = self.list_outputs()
            matches = [i for i, n in enumerate(names) if n == index]
            if not matches:
                raise UnknownOutputError(f"symbol has no output {index!r}; its outputs are "
                                         f"{', '.join(names)}")
            if len(matches) > 1:
                raise ValueError(f"there are {len(matches)} outputs named {index!r}")
            index = matches[0]
        if not isinstance(index, (int, np.integer)):
            raise SymbolArgumentError(f"symbol index must be an int, a str or a slice, got "
                                      f"{type(index).__name__}")
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError(f"symbol output {index} is out of range: it has "
                             f"{len(self._outputs)} output(s)")
        return Symbol([self._outputs[index]])

    def get_internals(self) -> Symbol:
        """Every output of every node in the graph, in graph order, as one group."""
        entries = []
        for node in self._nodes():
            entries.extend((node, i) for i in range(node.num_visible_outputs()))
        return Symbol(entries)

    def _gen_atomic_symbol(self) -> Symbol:
        """A new symbol of this symbol's operator with the same parameters and fresh,
        automatically named inputs (MXNet's atomic symbol of the node)."""
        node = self._outputs[0][0]
        if node.op is None:
            raise NotImplementedForSymbol(f"_gen_atomic_symbol: {node.name!r} is a variable, "
                                          f"not an operator's output")
        from ._frontend import function

        return function(node.op.name)(**node.params)

    def get_children(self) -> Symbol | None:
        """The inputs of this symbol's node(s), as one group; None for a variable."""
        nodes = list({id(node): node for node, _ in self._outputs}.values())  # each once
        entries = [e for node in nodes for e in node.inputs]
        return Symbol(entries) if entries else None

    # -- attributes -----------------------------------------------------------
    def attr(self, key: str) -> str | None:
        """The attribute or parameter ``key`` of this symbol's node, None when absent or
        when the symbol has several outputs.  ``'ctx_group'``, ``'lr_mult'`` and the
        other hidden keys find their ``__key__`` form."""
        if len(self._outputs) != 1:
            return None
        return self._outputs[0][0].all_attrs().get(_attribute.stored_key(key))

    def list_attr(self, recursive: bool = False) -> dict[str, str]:
        """The attributes and parameters of this symbol's node (of the first output's node
        for a group); hidden keys appear both as ``__key__`` and as ``key``.

        ``recursive=True`` was removed in MXNet 1.x and raises; use :meth:`attr_dict`.
        """
        if recursive:
            raise DeprecationWarning("Symbol.list_attr(recursive=True) was removed; use "
                                     "Symbol.attr_dict() for every node's attributes")
        return _with_plain_keys(self._outputs[0][0].all_attrs())

    def attr_dict(self) -> dict[str, dict[str, str]]:
        """Every node's attributes and parameters by node name (nodes without any are left
        out); hidden keys appear both as ``__key__`` and as ``key``."""
        result = {}
        for node in self._nodes():
            attrs = node.all_attrs()
            if attrs:
                result[node.name] = _with_plain_keys(attrs)
        return result

    def _set_attr(self, **kwargs: str) -> None:
        """Set attributes on this symbol's node (values must be strings; ``lr_mult`` and
        the other hidden keys are stored as ``__key__``)."""
        _attribute.check_values(kwargs, "_set_attr")
        nodes = {id(n): n for n, _ in self._outputs}
        if len(nodes) != 1:
            raise OperatorError(f"_set_attr() sets one node's attributes, but this symbol groups "
                                f"{len(nodes)} nodes; set them on each output (symbol[i])")
        node = self._outputs[0][0]
        node.attr.update({_attribute.stored_key(k): v for k, v in kwargs.items()})

    # -- composition ------------------------------------------------------------
    def __call__(self, *args: Symbol, **kwargs: Symbol) -> Symbol:
        """A copy of this symbol with variables replaced: positionally in
        ``list_arguments`` order, or by name (``net(data=other)``)."""
        result = _copy.deepcopy(self)
        result._compose(*args, **kwargs)
        return result

    def _compose(self, *args: Symbol, name: str | None = None, **kwargs: Symbol) -> None:
        """Replace variables of this symbol in place (see :meth:`__call__`)."""
        if args and kwargs:
            raise SymbolArgumentError(
                "compose takes symbols either positionally or by name, not both")
        arguments = self._variables()[0]
        replace: dict[int, Entry] = {}
        if args:
            if len(args) > len(arguments):
                raise SymbolArgumentError(f"compose got {len(args)} symbols for {len(arguments)} "
                                          f"arguments ({', '.join(n.name for n in arguments)})")
            for node, symbol in zip(arguments, args):
                replace[id(node)] = single_entry(_check_symbol(symbol, node.name), node.name)
        by_name = {n.name: n for n in self._nodes() if n.op is None}
        for key, symbol in kwargs.items():
            if key not in by_name:
                raise UnknownOutputError(f"compose: the symbol has no variable {key!r}; its "
                                         f"variables are {', '.join(by_name)}")
            replace[id(by_name[key])] = single_entry(_check_symbol(symbol, key), key)
        self._outputs = copy_graph(self._outputs, replace)
        if name is not None and len(self._outputs) == 1:
            self._outputs[0][0].name = name

    def __copy__(self) -> Symbol:
        return Symbol(copy_graph(self._outputs))

    def __deepcopy__(self, memo: dict) -> Symbol:
        return Symbol(copy_graph(self._outputs))

    def __getstate__(self) -> dict:
        return {"json": self.tojson()}

    def __setstate__(self, state: dict) -> None:
        from ._json import load_json

        self._outputs = load_json(state["json"])._outputs

    # -- inference ----------------------------------------------------------------
    def _given(self, args: Sequence[Any], kwargs: dict[str, Any], what: str,
               convert: Any) -> dict[Entry, Any]:
        arguments = self._variables()[0]
        every = {n.name: n for n in self._nodes() if n.op is None}
        if len(args) > len(arguments):
            raise SymbolArgumentError(
                f"{what} got {len(args)} positional values for {len(arguments)} arguments "
                f"({', '.join(n.name for n in arguments)})")
        given: dict[Entry, Any] = {}
        for node, value in zip(arguments, args):
            if value is not None:
                given[(node, 0)] = convert(value, node.name)
        outputs: dict[str, Entry] | None = None
        for key, value in kwargs.items():
            if key not in every:
                # an output's value informs inference backward (a subgraph node's outputs)
                if outputs is None:
                    outputs = dict(zip(self.list_outputs(), self._outputs))
                if key in outputs:
                    if value is not None:
                        given[outputs[key]] = convert(value, key)
                    continue
                raise UnknownOutputError(
                    f"{what}: the symbol has no argument {key!r}; its arguments are "
                    f"{', '.join(n.name for n in arguments)}"
                    + (f" and auxiliary states {', '.join(self.list_auxiliary_states())}"
                       if self.list_auxiliary_states() else ""))
            if value is not None:
                given[(every[key], 0)] = convert(value, key)
        return given

    def _infer_shape_entries(self, *args: Any, **kwargs: Any) -> tuple[dict, dict]:
        """Shapes of every entry of the graph (None where unknown) and the rules that could
        not run yet, from argument shapes given here or in ``__shape__`` attributes."""
        nodes = self._nodes()
        given = {(n, 0): parse_shape_attr(n.attr["__shape__"])
                 for n in nodes if n.op is None and "__shape__" in n.attr}
        given.update(self._given(args, kwargs, "infer_shape", _as_shape))
        return infer_shapes(nodes, given)

    @staticmethod
    def _shape_is_final(values: dict, entry: Entry) -> bool:
        """Whether an entry's inferred shape is settled (see ``shape_is_final``)."""
        return shape_is_final(values, entry)

    def _infer_type_entries(self, *args: Any, **kwargs: Any) -> tuple[dict, dict]:
        """Dtypes of every entry of the graph (None where unknown)."""
        nodes = self._nodes()
        given = {(n, 0): dtype_from_attr(n.attr["__dtype__"])
                 for n in nodes if n.op is None and "__dtype__" in n.attr}
        given.update(self._given(args, kwargs, "infer_type", _as_dtype))
        return infer_types(nodes, given)

    def _split(self, values: dict) -> tuple[list, list, list]:
        arguments, aux = self._variables()
        return ([values.get((n, 0)) for n in arguments],
                [values.get(e) for e in self._outputs],
                [values.get((n, 0)) for n in aux])

    def infer_shape(self, *args: Any, **kwargs: Any) -> tuple:
        """``(arg_shapes, out_shapes, aux_shapes)`` from some argument shapes, positionally in
        ``list_arguments`` order or by name (a name may also be an output's, from
        ``list_outputs``: its shape then informs the inference backward, as MXNet's
        subgraph operators infer their subgraphs).  A 0 in a shape is an unknown dimension.
        When some shape stays unknown, warns naming the arguments and returns
        ``(None, None, None)``; an inconsistency raises :class:`~dagnet.ShapeError`."""
        values, deferred = self._infer_shape_entries(*args, **kwargs)
        arg_shapes, out_shapes, aux_shapes = self._split(values)
        from ..operator import shape_is_known

        if all(shape_is_known(s) for s in arg_shapes + aux_shapes) \
                and all(self._shape_is_final(values, e) for e in self._outputs):
            return arg_shapes, out_shapes, aux_shapes
        names = self.list_arguments() + self.list_auxiliary_states()
        unknown = [f"{n}: {() if s is None else tuple(s)}"
                   for n, s in zip(names, arg_shapes + aux_shapes) if not shape_is_known(s)]
        reason = "; ".join(f"{e}" for e in deferred.values())
        warnings.warn("Cannot decide shape for the following arguments (0s in shape mean "
                      "unknown dimensions): " + ", ".join(unknown or ["outputs only"])
                      + (f" ({reason})" if reason else "") + ". Give their shapes to "
                      "infer_shape, or use infer_shape_partial.", stacklevel=2)
        return None, None, None

    def infer_shape_partial(self, *args: Any, **kwargs: Any) -> tuple:
        """Like :meth:`infer_shape` but returns what is known: ``()`` for a shape nothing is
        known about, 0 for an unknown dimension (None and -1 with NumPy shape semantics on,
        ``mx.np_shape()``)."""
        from ..util import is_np_shape

        values, _ = self._infer_shape_entries(*args, **kwargs)
        nothing = None if is_np_shape() else ()
        return tuple([nothing if s is None else tuple(s) for s in part]
                     for part in self._split(values))

    def infer_type(self, *args: Any, **kwargs: Any) -> tuple:
        """``(arg_types, out_types, aux_types)`` as numpy types (``numpy.float32``) from some
        argument dtypes; ``(None, None, None)`` when some stay unknown."""
        values, _ = self._infer_type_entries(*args, **kwargs)
        parts = self._split(values)
        if any(t is None for part in parts for t in part):
            names = self.list_arguments() + self.list_auxiliary_states()
            unknown = [n for n, t in zip(names, parts[0] + parts[2]) if t is None]
            warnings.warn("Cannot decide type for the following arguments: "
                          + ", ".join(unknown or ["outputs only"]) + ". Give their dtypes to "
                          "infer_type, or use infer_type_partial.", stacklevel=2)
            return None, None, None
        return tuple([np.dtype(t).type for t in part] for part in parts)

    def infer_type_partial(self, *args: Any, **kwargs: Any) -> tuple:
        """Like :meth:`infer_type` with None for the dtypes that stay unknown."""
        values, _ = self._infer_type_entries(*args, **kwargs)
        return tuple([None if t is None else np.dtype(t).type for t in part]
                     for part in self._split(values))

    # -- serialization -----------------------------------------------------------
    def tojson(self, remove_amp_cast: bool = True) -> str:
        """The graph in MXNet 1.x's symbol JSON format."""
        from ._json import to_json

        return to_json(self)

    def save(self, fname: str, remove_amp_cast: bool = True) -> None:
        """Write :meth:`tojson` to ``fname`` (``mx.sym.load`` reads it back)."""
        with open(fname, "w") as handle:
            handle.write(self.tojson())

    # -- execution ------------------------------------------------------------------
    def simple_bind(self, ctx: Any, grad_req: Any = "write", type_dict: dict | None = None,
                    stype_dict: dict | None = None, group2ctx: dict | None = None,
                    shared_arg_names: list | None = None, shared_exec: Any = None,
                    shared_buffer: dict | None = None, **kwargs: Any) -> Any:
        """Allocate every array from argument shapes (``kwargs``) and bind an executor
        (see :func:`dagnet.executor.simple_bind`)."""
        from ..executor import simple_bind

        return simple_bind(self, ctx, grad_req=grad_req, type_dict=type_dict,
                           group2ctx=group2ctx, shared_exec=shared_exec,
                           shared_arg_names=shared_arg_names, shared_buffer=shared_buffer,
                           **kwargs)

    def bind(self, ctx: Any, args: Any, args_grad: Any = None, grad_req: Any = "write",
             aux_states: Any = None, group2ctx: dict | None = None,
             shared_exec: Any = None) -> Any:
        """Bind an executor to given arrays (lists in ``list_arguments`` order, or dicts)."""
        from ..executor import bind

        return bind(self, ctx, args, args_grad=args_grad, grad_req=grad_req,
                    aux_states=aux_states, group2ctx=group2ctx, shared_exec=shared_exec)

    def optimize_for(self, backend: str, args: dict | None = None, aux: dict | None = None,
                     ctx: Any = None, shape_dict: dict | None = None,
                     type_dict: dict | None = None, stype_dict: dict | None = None,
                     skip_infer: bool = False, **kwargs: Any) -> Symbol:
        """A new symbol rewritten by the graph passes serving the subgraph ``backend``
        (``'default'`` and ``'default_v2'`` partition by operator names, ``'MKLDNN'`` /
        ``'ONEDNN'`` run the built-in CPU passes; plugins add more).  ``args``/``aux``
        (name -> NDArray) or ``shape_dict``/``type_dict`` let the passes see shapes and
        dtypes; ``kwargs`` are the backend's options.  ``stype_dict`` is accepted for
        MXNet's signature (dagnet arrays carry their storage type).  See
        :func:`dagnet.executor.optimize_for`."""
        from ..executor import optimize_for

        return optimize_for(self, backend, args, aux, ctx, shape_dict, type_dict, skip_infer,
                            **kwargs)

    def get_backend_symbol(self, backend: str) -> Symbol:
        """This symbol rewritten for the subgraph ``backend`` without shapes, with the
        backend's default options (MXNet's ``MXGenBackendSubgraph``): :meth:`optimize_for`
        given only the backend."""
        return self.optimize_for(backend)

    def eval(self, ctx: Any = None, **kwargs: Any) -> list:
        """Bind to the NDArrays in ``kwargs``, run forward and return the outputs."""
        from ..context import current_context

        executor = self.bind(ctx or current_context(), kwargs)
        return executor.forward()

    # -- arithmetic (the names MXNet's frontend calls, so automatic names match:
    #    ``_PlusScalar`` names ``_plusscalar0``, ``_equal_scalar`` names ``_equal_scalar0``) --
    def _binary(self, other: Any, array_op: str, scalar_op: str, reflected: bool = False
                ) -> Symbol:
        if isinstance(other, Symbol):
            lhs, rhs = (other, self) if reflected else (self, other)
            return apply_op(array_op, [lhs, rhs], {})
        if isinstance(other, _NUMBER):
            return apply_op(scalar_op, [self], {"scalar": other})
        raise SymbolArgumentError(f"type {type(other).__name__} is not supported with a Symbol; "
                                  f"use a Symbol or a number")

    def __add__(self, other: Any) -> Symbol:
        return self._binary(other, "_Plus", "_PlusScalar")

    __radd__ = __add__

    def __sub__(self, other: Any) -> Symbol:
        return self._binary(other, "_Minus", "_MinusScalar")

    def __rsub__(self, other: Any) -> Symbol:
        return self._binary(other, "_Minus", "_RMinusScalar", reflected=True)

    def __mul__(self, other: Any) -> Symbol:
        return self._binary(other, "_Mul", "_MulScalar")

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Symbol:
        return self._binary(other, "_Div", "_DivScalar")

    def __rtruediv__(self, other: Any) -> Symbol:
        return self._binary(other, "_Div", "_RDivScalar", reflected=True)

    def __mod__(self, other: Any) -> Symbol:
        return self._binary(other, "_Mod", "_ModScalar")

    def __rmod__(self, other: Any) -> Symbol:
        return self._binary(other, "_Mod", "_RModScalar", reflected=True)

    def __pow__(self, other: Any) -> Symbol:
        return self._binary(other, "_Power", "_PowerScalar")

    def __rpow__(self, other: Any) -> Symbol:
        return self._binary(other, "_Power", "_rpower_scalar", reflected=True)

    def __neg__(self) -> Symbol:
        return apply_op("_MulScalar", [self], {"scalar": -1.0})

    def __abs__(self) -> Symbol:
        return apply_op("abs", [self], {})

    def __eq__(self, other: Any) -> Symbol:  # type: ignore[override]
        return self._binary(other, "_Equal", "_equal_scalar")

    def __ne__(self, other: Any) -> Symbol:  # type: ignore[override]
        return self._binary(other, "_Not_Equal", "_not_equal_scalar")

    def __gt__(self, other: Any) -> Symbol:
        return self._binary(other, "_Greater", "_greater_scalar")

    def __ge__(self, other: Any) -> Symbol:
        return self._binary(other, "_Greater_Equal", "_greater_equal_scalar")

    def __lt__(self, other: Any) -> Symbol:
        return self._binary(other, "_Lesser", "_lesser_scalar")

    def __le__(self, other: Any) -> Symbol:
        return self._binary(other, "_Lesser_Equal", "_lesser_equal_scalar")

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise NotImplementedForSymbol("a Symbol has no truth value: comparisons build symbols; "
                                      "evaluate it (bind and forward) to test values")

    def __getattr__(self, name: str) -> Any:
        # MXNet's fluent methods: ``x.reshape((2, 3))`` is ``mx.sym.reshape(x, (2, 3))``.
        if name in _FLUENT:
            from . import _frontend

            function = _frontend.function(name)
            return lambda *args, **kwargs: function(self, *args, **kwargs)
        raise AttributeError(f"'Symbol' object has no attribute {name!r}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | _FLUENT)

    def as_np_ndarray(self) -> Symbol:
        """This symbol, for ``mx.sym.np`` functions (MXNet's numpy symbol; dagnet's symbols
        serve both namespaces)."""
        return self

    def as_nd_ndarray(self) -> Symbol:
        """This symbol, for the legacy ``mx.sym`` operators (see :meth:`as_np_ndarray`)."""
        return self

    def astype(self, *args: Any, **kwargs: Any) -> Symbol:
        """MXNet's fluent ``cast``: ``x.astype('int32')`` is ``mx.sym.cast(x, dtype='int32')``
        (as for NDArrays, which GluonNLP's hybridized blocks rely on)."""
        from . import _frontend

        return _frontend.function("cast")(self, *args, **kwargs)

    def __repr__(self) -> str:
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        return f"<Symbol group [{', '.join(self.list_outputs())}]>"

    __str__ = __repr__

    def debug_str(self) -> str:
        """The graph as text in MXNet's layout: the outputs, then every node in graph order
        with its inputs (``name(output index)``) and attributes."""
        lines = ["Symbol Outputs:"]
        lines.extend(f"\toutput[{i}]={node.name}({index})"
                     for i, (node, index) in enumerate(self._outputs))
        for node in self._nodes():
            if node.op is None:
                lines.append(f"Variable:{node.name}")
                continue
            lines.extend(["--------------------", f"Op:{node.op.name}, Name={node.name}",
                          "Inputs:"])
            # as in MXNet, only variable inputs show a version (always 0 here)
            lines.extend(f"\targ[{i}]={child.name}({index})"
                         + (" version=0" if child.op is None else "")
                         for i, (child, index) in enumerate(node.inputs))
            attrs = node.all_attrs()
            if attrs:
                lines.append("Attrs:")
                lines.extend(f"\t{key}={value}" for key, value in sorted(attrs.items()))
        return "\n".join(lines) + "\n"


_FLUENT = frozenset("""
reshape reshape_like zeros_like ones_like broadcast_to broadcast_like broadcast_axes repeat
swapaxes split slice slice_axis slice_like take one_hot pick sort topk argsort argmax argmin
argmax_channel clip abs sign flatten shape_array size_array expand_dims tile transpose flip
sum nansum prod nanprod mean max min norm round rint fix floor ceil trunc sin cos tan arcsin
arccos arctan degrees radians sinh cosh tanh arcsinh arccosh arctanh exp expm1 log log10 log2
log1p sqrt rsqrt cbrt rcbrt square reciprocal relu sigmoid softmax log_softmax squeeze softmin
pad diag depth_to_space space_to_depth dot
""".split())


def _with_plain_keys(attrs: dict[str, str]) -> dict[str, str]:
    result = dict(attrs)
    for key in _attribute.HIDDEN_KEYS:
        if f"__{key}__" in attrs:
            result[key] = attrs[f"__{key}__"]
    return result


def _check_symbol(value: Any, name: str) -> Symbol:
    if not isinstance(value, Symbol):
        raise SymbolArgumentError(f"compose: {name}= must be a Symbol, got {type(value).__name__}")
    return value


def _as_shape(value: Any, name: str) -> tuple[int, ...]:
    if isinstance(value, (tuple, list)) and all(isinstance(d, (int, np.integer)) for d in value):
        return tuple(int(d) for d in value)
    raise ShapeError(f"shape of {name!r} must be a tuple of ints (0 for an unknown dimension), "
                     f"got {value!r}")


def _as_dtype(value: Any, name: str) -> np.dtype:
    try:
        return np.dtype(value)
    except TypeError:
        raise DTypeError(f"dtype of {name!r} must be a numpy dtype or its name, got "
                         f"{value!r}") from None


def Variable(name: str, attr: dict | None = None, shape: Any = None, lr_mult: float | None = None,
             wd_mult: float | None = None, dtype: Any = None, init: Any = None,
             stype: str | None = None, **kwargs: Any) -> Symbol:
    """A named input of a graph (MXNet's ``mx.sym.Variable``), with optional attributes:
    ``shape`` (0 for unknown dimensions), ``dtype``, ``init`` (an initializer or its JSON),
    ``lr_mult``/``wd_mult``, ``attr`` (a dict of strings, added to the current
    :class:`~dagnet.AttrScope`'s) and extra ``__key__=value`` attributes."""
    if not isinstance(name, str):
        raise SymbolArgumentError(f"Variable name must be a str, got {type(name).__name__}")
    if attr is not None and not isinstance(attr, dict):
        raise SymbolArgumentError(f"Variable {name!r}: attr= must be a dict of strings, got "
                                  f"{type(attr).__name__}")
    given = _attribute.current().get(attr)
    _attribute.check_values(given, f"Variable {name!r}")
    node_attr = {_attribute.stored_key(k): v for k, v in given.items()}
    if shape is not None:
        # MXNet stores str(shape); an int is a one-dimensional shape
        node_attr["__shape__"] = (str(int(shape)) if isinstance(shape, (int, np.integer))
                                  else str(tuple(int(d) for d in shape)))
    if lr_mult is not None:
        node_attr["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        node_attr["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        node_attr["__dtype__"] = dtype_to_attr(dtype)
    if init is not None:
        node_attr["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        if stype not in _STORAGE_TYPE_IDS:
            raise _attribute.AttributeValueError(
                f"Variable {name!r}: stype={stype!r} is not a storage type; use 'default', "
                f"'row_sparse' or 'csr'")
        node_attr["__storage_type__"] = str(_STORAGE_TYPE_IDS[stype])
    for key, value in kwargs.items():
        if not is_hidden_attr(key):
            raise _attribute.AttributeValueError(
                f"Variable {name!r}: attribute {key}= is not supported; extra attributes must "
                f"start and end with double underscores (__{key}__=...)")
        node_attr[key] = str(value)
    return Symbol([(Node(None, name, attr=node_attr), 0)])


var = Variable


def Group(symbols: Sequence[Symbol]) -> Symbol:
    """One symbol with the outputs of all ``symbols``, in order."""
    symbols = list(symbols)
    if not symbols or not all(isinstance(s, Symbol) for s in symbols):
        raise SymbolArgumentError("Group expects a non-empty list of Symbols")
    return Symbol([entry for s in symbols for entry in s._outputs])
