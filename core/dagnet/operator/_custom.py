"""MXNet's Python custom operators: :class:`CustomOp`, :class:`CustomOpProp` and
:func:`register` -- the fourth front door to the operator record, for code written
against ``mx.operator``::

    class Square(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] * in_data[0])

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], 2 * in_data[0] * out_grad[0])

    @mx.operator.register("square")
    class SquareProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Square()

    y = mx.nd.Custom(x, op_type="square")          # or mx.sym.Custom(data=x, op_type=...)

This module holds the classes and the registry of property classes by name;
the ``Custom`` operator that runs them (through the engine, like any operator,
with NDArrays over the device buffers) comes with the operator library.
``op_type`` picks the registered class; every other keyword argument of
``Custom`` reaches the property's constructor as a string, as in MXNet.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

from .._errors import OperatorError, ParamError
from ._param import REQUIRED, Field, Params

__all__ = ["CustomOp", "CustomOpProp", "CustomParams", "register", "registered_custom_ops",
           "custom_prop_class", "custom_prop"]


class CustomOp:
    """The computation of a custom operator; subclass it and override :meth:`forward`
    and :meth:`backward`.

    Arrays are NDArrays over the operator's own buffers: write the outputs
    with :meth:`assign` (or ``out[:] = ...``) as ``req`` says.  The operator
    calls made here run before the custom operator counts as finished.
    """

    def __init__(self) -> None:
        pass

    def forward(self, is_train: bool, req: list[str], in_data: list, out_data: list,
                aux: list) -> None:
        """Compute ``out_data`` from ``in_data`` (the arguments) and ``aux`` (the
        auxiliary states, which may be updated).  ``req[i]`` says how to write
        ``out_data[i]``: ``'null'``, ``'write'``, ``'inplace'`` or ``'add'``."""

    def backward(self, req: list[str], out_grad: list, in_data: list, out_data: list,
                 in_grad: list, aux: list) -> None:
        """Compute ``in_grad`` (one per argument) from the head gradients ``out_grad``;
        ``req[i]`` says how to write ``in_grad[i]``.  Arrays the property's
        ``declare_backward_dependency`` left out are None."""

    def assign(self, dst: Any, req: str, src: Any) -> None:
        """Write ``src`` into ``dst`` as ``req`` says: nothing for ``'null'``, overwrite
        for ``'write'`` and ``'inplace'``, add for ``'add'``."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] += src
        else:
            raise OperatorError(f"CustomOp.assign: req must be 'null', 'write', 'inplace' or "
                                f"'add', got {req!r}")


class CustomOpProp:
    """What a custom operator is: its arguments, outputs and auxiliary states, shape and
    type inference, which arrays its backward pass needs, and the :class:`CustomOp`
    that computes.  Subclass it, override what differs from the defaults, and
    register it with :func:`register`.

    ``need_top_grad``: whether the backward pass reads the head gradients (a
    loss layer does not); the default :meth:`declare_backward_dependency`
    follows it.  Keyword arguments given to ``Custom`` besides ``op_type``
    reach the subclass's ``__init__`` as strings.
    """

    def __init__(self, need_top_grad: bool = True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape: list) -> tuple:
        """``(in_shapes, out_shapes[, aux_shapes])`` from the argument shapes; default:
        every output has the first argument's shape."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type: list) -> tuple:
        """``(in_types, out_types[, aux_types])`` from the argument dtypes; default: all
        the first argument's dtype."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype: list) -> tuple:
        """Storage types (dagnet arrays are all ``'default'``, dense)."""
        for i, stype in enumerate(in_stype):
            if stype != "default":
                raise OperatorError(f"{type(self).__name__}: input {i} has storage type "
                                    f"{stype!r}; dagnet custom operators take dense arrays")
        return (in_stype, ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def infer_storage_type_backward(self, ograd_stype: list, in_stype: list, out_stype: list,
                                    igrad_stype: list, aux_stype: list) -> tuple:
        """Storage types of the backward pass (all ``'default'``)."""
        return (["default"] * len(ograd_stype), ["default"] * len(in_stype),
                ["default"] * len(out_stype), ["default"] * len(igrad_stype),
                ["default"] * len(aux_stype))

    def list_outputs(self) -> list[str]:
        """Output names (default ``['output']``)."""
        return ["output"]

    def list_arguments(self) -> list[str]:
        """Argument names (default ``['data']``)."""
        return ["data"]

    def list_auxiliary_states(self) -> list[str]:
        """Auxiliary state names (default none)."""
        return []

    def declare_backward_dependency(self, out_grad: list[int], in_data: list[int],
                                    out_data: list[int]) -> list[int]:
        """The ids of the arrays the backward pass reads: by default the head gradients
        (when ``need_top_grad``), every input and every output."""
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)

    def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> CustomOp:
        """The :class:`CustomOp` computing on device ``ctx`` for inputs of these shapes and
        dtypes (arguments, then auxiliary states)."""
        raise OperatorError(f"{type(self).__name__} does not implement "
                            f"create_operator(ctx, in_shapes, in_dtypes)")


# -- the registry of property classes ------------------------------------------------------
_registry: dict[str, type[CustomOpProp]] = {}
_registry_lock = threading.Lock()


def register(reg_name: str) -> Callable[[type[CustomOpProp]], type[CustomOpProp]]:
    """Class decorator: register a :class:`CustomOpProp` subclass as ``op_type=reg_name``.

    Registering a name again replaces the class, as in MXNet (a script run twice
    in one session re-registers its operators).
    """
    if not isinstance(reg_name, str) or not reg_name:
        raise OperatorError(f"mx.operator.register takes the operator's name as a non-empty "
                            f"string, got {reg_name!r}")

    def do_register(prop_cls: type[CustomOpProp]) -> type[CustomOpProp]:
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise OperatorError(f"mx.operator.register({reg_name!r}) decorates a CustomOpProp "
                                f"subclass, got {prop_cls!r}")
        with _registry_lock:
            _registry[reg_name] = prop_cls
            _props.clear()  # properties made from a replaced class must not be reused
        return prop_cls

    return do_register


def registered_custom_ops() -> dict[str, type[CustomOpProp]]:
    """The registered property classes by ``op_type``."""
    with _registry_lock:
        return dict(_registry)


def custom_prop_class(op_type: str) -> type[CustomOpProp]:
    """The class registered as ``op_type``; the error lists the registered names."""
    with _registry_lock:
        cls = _registry.get(op_type)
        names = sorted(_registry)
    if cls is None:
        raise ParamError(
            f"operator 'Custom': no custom operator is registered as op_type={op_type!r} "
            f"(registered: {', '.join(names) or 'none'}); register a CustomOpProp subclass "
            f"with @mx.operator.register({op_type!r}) before using it")
    return cls


# -- the parameters of the Custom operator -------------------------------------------------------
class CustomParams(Params):
    """``Custom``'s parameters: ``op_type`` and any other keyword, kept as strings for
    the property's constructor (they are stored in symbol JSON as they are)."""

    op_type = Field(str, REQUIRED, "the name the custom operator was registered under")
    takes_any_keyword = True  # keys beyond the fields are parameters too (symbol JSON)

    def __init__(self, op_type: str = "", extra: tuple[tuple[str, str], ...] = ()):
        object.__setattr__(self, "op_type", op_type)
        object.__setattr__(self, "extra", extra)

    @classmethod
    def parse(cls, op_name: str, kwargs: Mapping[str, Any]) -> CustomParams:
        """``op_type`` (a registered name) and the other keywords as strings."""
        if "op_type" not in kwargs:
            raise ParamError(f"operator {op_name!r} needs parameter 'op_type' (the name a "
                             f"CustomOpProp was registered under with mx.operator.register)")
        op_type = kwargs["op_type"]
        if not isinstance(op_type, str):
            raise ParamError(f"operator {op_name!r}: op_type must be a string, got {op_type!r}")
        custom_prop_class(op_type)
        extra = tuple(sorted((str(k), _as_string(v)) for k, v in kwargs.items()
                             if k != "op_type"))
        return cls(op_type, extra)

    def kwargs(self) -> dict[str, str]:
        """The keywords for the property's constructor."""
        return dict(self.extra)

    def to_dict(self) -> dict[str, Any]:
        return {"op_type": self.op_type, **dict(self.extra)}

    def to_strings(self) -> dict[str, str]:
        return self.to_dict()

    def replace(self, **changes: Any) -> CustomParams:
        return type(self).parse("Custom", {**self.to_dict(), **changes})


def _as_string(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode()
    return str(value)


_props: OrderedDict[CustomParams, CustomOpProp] = OrderedDict()
_PROPS_KEPT = 256


def custom_prop(params: CustomParams) -> CustomOpProp:
    """The property for ``params``: the registered class made with the extra keywords
    (made once per parameter set and kept)."""
    with _registry_lock:
        prop = _props.get(params)
        if prop is not None:
            _props.move_to_end(params)
            return prop
    cls = custom_prop_class(params.op_type)
    try:
        prop = cls(**params.kwargs())
    except TypeError as error:
        raise ParamError(f"custom operator {params.op_type!r}: {cls.__name__}"
                         f"({', '.join(f'{k}={v!r}' for k, v in params.extra)}) failed: {error}; "
                         f"pass Custom the keyword arguments its __init__ takes") from error
    if not isinstance(prop, CustomOpProp):
        raise OperatorError(f"custom operator {params.op_type!r}: {cls.__name__}() did not "
                            f"make a CustomOpProp")
    with _registry_lock:
        _props[params] = prop
        while len(_props) > _PROPS_KEPT:
            _props.popitem(last=False)
    return prop
