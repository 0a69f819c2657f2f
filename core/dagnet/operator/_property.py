"""Operators as ``OperatorProperty`` + ``Operator`` classes (seed: system-architecture.md,
"Operator Interface" and "Operator Property").

The *property* says what an operator is — its arguments, outputs and
auxiliary states, shape and type inference, which arrays its backward pass
needs, which buffers may be shared, which resources it asks for — and
creates the *operator*, which computes::

    class QuadraticOperator(Operator):
        def __init__(self, attrs):
            self.attrs = attrs

        def forward(self, ctx, in_data, req, out_data, aux):
            x, p = in_data[0], self.attrs
            assign(out_data[0], req[0], x * (p.a * x + p.b) + p.c)

        def backward(self, ctx, out_grad, in_data, out_data, req, in_grad, aux):
            x, p = in_data[0], self.attrs
            assign(in_grad[0], req[0], out_grad[0] * (2 * p.a * x + p.b))

    class QuadraticProperty(OperatorProperty):
        params = QuadraticParam

        def infer_shape(self, in_shapes):
            return in_shapes, [in_shapes[0]], []

        def declare_backward_dependency(self, out_grad, in_data, out_data):
            return [out_grad[0], in_data[0]]          # out_data[0] may be freed

        def forward_inplace_option(self, in_data, out_data):
            return [(in_data[0], out_data[0])]

        def create_operator(self, ctx):
            return QuadraticOperator(self.attrs)

    quadratic, backward_quadratic = op_from_property(QuadraticProperty, "quadratic")

:func:`op_from_property` turns the pair into the same :class:`Op` records
the builder makes: the forward op, whose inputs are the arguments followed
by the auxiliary states (declared as mutated inputs), and ``_backward_<name>``.
A property is instantiated once per parameter set (``self.attrs`` holds the
parsed :class:`Params`); ``create_operator(ctx)`` is called once per
parameter set and device, and that operator serves both passes.

Where MXNet passes integer ids (``DeclareBackwardDependency``, the in-place
options) dagnet passes integer ids too: distinct ints standing for the
arrays, to be returned as they are.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import OperatorError, ParamError
from ..resource import ResourceRequest
from ._builder import GRADIENT_USES, OpBuilder
from ._op import (
    XP,
    Domain,
    Gradient,
    NoGradient,
    Op,
    OpContext,
    ShapeList,
    TypeList,
    merge_dtype,
    merge_shape,
)
from ._param import NoParams, Params
from ._req import OpReqType

__all__ = ["Operator", "OperatorProperty", "op_from_property"]

_CACHE_SIZE = 256  # parameter sets (and devices) remembered per operator


class Operator:
    """The computation of an operator (MXNet's ``Operator``), created by
    :meth:`OperatorProperty.create_operator`.

    Arrays are the device's ``xp`` arrays, already allocated; write each
    output as ``req[i]`` says, with :func:`~dagnet.operator.assign`.
    ``ctx`` is the :class:`~dagnet.operator.OpContext` (``is_train``,
    ``run_ctx``, ``requested`` resources in the order the property asked
    for them, ``xp``).  One operator serves every call with its parameters
    on its device, possibly from several threads: keep no per-call state.
    """

    def forward(self, ctx: OpContext, in_data: list, req: list[OpReqType], out_data: list,
                aux: list) -> None:
        """Compute ``out_data`` from ``in_data`` (the arguments) and ``aux`` (auxiliary states,
        which the forward pass may update)."""
        raise OperatorError(f"{type(self).__name__} does not implement forward(ctx, in_data, req, "
                            f"out_data, aux)")

    def backward(self, ctx: OpContext, out_grad: list, in_data: list, out_data: list,
                 req: list[OpReqType], in_grad: list, aux: list) -> None:
        """Compute ``in_grad`` (one per argument) from the head gradients ``out_grad``.

        Arrays the property's ``declare_backward_dependency`` did not ask
        for are None.
        """
        raise OperatorError(f"{type(self).__name__} does not implement backward(ctx, out_grad, "
                            f"in_data, out_data, req, in_grad, aux)")


class OperatorProperty:
    """What an operator is (MXNet's ``OperatorProperty``); subclass it and override
    what differs from the defaults, then register ``op_from_property(cls, name)``.

    Class attributes: ``params`` (the :class:`Params` subclass, parsed into
    ``self.attrs``), and optionally ``name``, ``description`` (default: the
    class docstring), ``domain`` (for the conformance suite), ``aliases``,
    and ``no_gradient`` (a reason string for a non-differentiable op: then
    no backward op is made).

    Shapes are tuples, None (unknown) or with 0 dimensions (partly known);
    dtypes are numpy dtypes or None.
    """

    params: type[Params] = NoParams
    name: str | None = None
    description: str | None = None
    domain: Domain | None = None
    aliases: tuple[str, ...] = ()
    no_gradient: str | None = None

    def __init__(self, attrs: Params):
        self.attrs = attrs

    # -- names and counts -----------------------------------------------------------------------
    def list_arguments(self) -> list[str]:
        """Argument names (default ``["data"]``)."""
        return ["data"]

    def list_outputs(self) -> list[str]:
        """Output names (default ``["output"]``)."""
        return ["output"]

    def list_auxiliary_states(self) -> list[str]:
        """Auxiliary state names (BatchNorm's moving statistics); default none."""
        return []

    def num_outputs(self) -> int:
        """How many outputs (default: one per name in :meth:`list_outputs`)."""
        return len(self.list_outputs())

    def num_visible_outputs(self) -> int:
        """How many outputs the user sees (default: all)."""
        return self.num_outputs()

    # -- inference --------------------------------------------------------------------------------
    def infer_shape(self, in_shapes: list) -> tuple[list, list, list] | None:
        """``(in_shapes, out_shapes, aux_shapes)`` from the argument shapes, or None when
        too little is known yet (MXNet returns false).  Raise
        :class:`~dagnet.ShapeError` on shapes that contradict.

        The default: every argument and output has one shape.
        """
        merged = None
        for name, shape in zip(self.list_arguments(), in_shapes, strict=True):
            merged = merge_shape(merged, shape, f"{type(self).__name__}, argument {name!r}")
        if merged is None:
            return None
        return ([merged] * len(in_shapes), [merged] * self.num_outputs(),
                [None] * len(self.list_auxiliary_states()))

    def infer_type(self, in_types: list) -> tuple[list, list, list] | None:
        """``(in_types, out_types, aux_types)`` from the argument dtypes, or None when none
        is known.  The default: one dtype for every argument, output and auxiliary state."""
        merged = None
        for name, dtype in zip(self.list_arguments(), in_types, strict=True):
            merged = merge_dtype(merged, dtype, f"{type(self).__name__}, argument {name!r}")
        if merged is None:
            return None
        return ([merged] * len(in_types), [merged] * self.num_outputs(),
                [merged] * len(self.list_auxiliary_states()))

    # -- backward dependency and memory sharing ---------------------------------------------------
    def declare_backward_dependency(
        self, out_grad: list[int], in_data: list[int], out_data: list[int]
    ) -> list[int]:
        """The ids (from the three lists) of the arrays :meth:`Operator.backward` reads;
        arrays left out may be freed after the forward pass.  Default: all of them."""
        return [*out_grad, *in_data, *out_data]

    def forward_inplace_option(
        self, in_data: list[int], out_data: list[int]
    ) -> list[tuple[int, int]]:
        """``(in_data id, out_data id)`` pairs that may share memory in the forward pass."""
        return []

    def backward_inplace_option(
        self, out_grad: list[int], in_data: list[int], out_data: list[int], in_grad: list[int]
    ) -> list[tuple[int, int]]:
        """``(id of out_grad/in_data/out_data, in_grad id)`` pairs that may share memory
        in the backward pass (e.g. ``[(out_grad[0], in_grad[0])]``)."""
        return []

    # -- resources and the operator ---------------------------------------------------------------
    def forward_resource(self, in_shapes: list | None = None) -> list[ResourceRequest | str]:
        """Resources the forward pass finds in ``ctx.requested``.  dagnet asks once per
        parameter set, before shapes are known, so ``in_shapes`` is None."""
        return []

    def backward_resource(self, in_shapes: list | None = None) -> list[ResourceRequest | str]:
        """Resources the backward pass finds in ``ctx.requested`` (as :meth:`forward_resource`)."""
        return []

    def create_operator(self, ctx: Any) -> Operator:
        """The :class:`Operator` that computes on device ``ctx`` (a :class:`~dagnet.Context`)."""
        raise OperatorError(f"{type(self).__name__} does not implement create_operator(ctx)")


# -- what a property says about one parameter set -------------------------------------------------
@dataclass
class _Layout:
    prop: OperatorProperty
    arguments: list[str]
    aux: list[str]
    outputs: list[str]
    visible: int
    needs: frozenset  # the groups declare_backward_dependency asked for
    inplace: list[tuple[int, int]]
    backward_inplace: list[
        tuple[int, int]
    ]  # (position among the backward op's inputs, in_grad index)
    forward_resources: list[ResourceRequest]
    backward_resources: list[ResourceRequest]


class _Lru:
    """A small thread-safe least-recently-used map that builds each missing value once."""

    def __init__(self, build: Callable[[Any], Any]):
        self._build = build
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.RLock()  # held while building, so a value is built once

    def get(self, key: Any) -> Any:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            value = self._items[key] = self._build(key)
            while len(self._items) > _CACHE_SIZE:
                self._items.popitem(last=False)
            return value


class _PropertyOp:
    """Everything :func:`op_from_property` builds on: layouts and operators, cached."""

    def __init__(self, cls: type[OperatorProperty], name: str, uses: tuple[str, ...]):
        self.cls, self.name, self.uses = cls, name, uses
        self.layouts = _Lru(self._layout)
        self.operators = _Lru(self._operator)

    def fail(self, message: str) -> OperatorError:
        return OperatorError(f"operator {self.name!r} ({self.cls.__name__}): {message}")

    def _layout(self, attrs: Params) -> _Layout:
        prop = self.cls(attrs)
        arguments, aux = list(prop.list_arguments()), list(prop.list_auxiliary_states())
        outputs, n_out = list(prop.list_outputs()), int(prop.num_outputs())
        visible = int(prop.num_visible_outputs())
        if len(outputs) != n_out:
            raise self.fail(
                f"list_outputs() gives {len(outputs)} names {outputs} but num_outputs() "
                f"is {n_out}; make them agree"
            )
        if not 0 <= visible <= n_out:
            raise self.fail(f"num_visible_outputs() is {visible}, outside 0..{n_out}")
        # ids as MXNet hands them out: out_grad, in_data, out_data, in_grad, all distinct
        n_args = len(arguments)
        ids = iter(range(visible + 2 * n_args + n_out))
        og, ind, outd, ing = (
            [next(ids) for _ in range(k)] for k in (visible, n_args, n_out, n_args)
        )
        group_of = {
            **{i: "out_grad" for i in og},
            **{i: "in_data" for i in ind},
            **{i: "out_data" for i in outd},
        }
        declared = list(prop.declare_backward_dependency(list(og), list(ind), list(outd)))
        unknown = [i for i in declared if i not in group_of]
        if unknown:
            raise self.fail(
                f"declare_backward_dependency() returned {unknown}, which are not among "
                f"the ids it was given; return ids from out_grad, in_data, out_data"
            )
        needs = frozenset(group_of[i] for i in declared)
        if aux:  # the backward pass gets the auxiliary states, which travel with in_data
            needs |= {"in_data"}
        if self.uses is not None and not needs <= set(self.uses):
            raise self.fail(
                f"declare_backward_dependency() for {attrs!r} needs {sorted(needs)}, but the "
                f"operator record was declared with backward_uses={self.uses}; pass "
                f"backward_uses={tuple(u for u in GRADIENT_USES if u in needs | set(self.uses))} "
                f"to op_from_property"
            )
        inplace = []
        for pair in prop.forward_inplace_option(list(ind), list(outd)):
            i, o = pair
            if i not in ind or o not in outd:
                raise self.fail(
                    f"forward_inplace_option() returned {tuple(pair)}; pairs are "
                    f"(an id from in_data, an id from out_data)"
                )
            inplace.append((ind.index(i), outd.index(o)))
        backward_inplace = (
            []
            if self.uses is None
            else self._backward_inplace(
                prop, (og, ind, outd, ing), group_of, visible, n_args + len(aux), n_out
            )
        )
        return _Layout(
            prop,
            arguments,
            aux,
            outputs,
            visible,
            needs,
            inplace,
            backward_inplace,
            self._resources(prop.forward_resource(None), "forward_resource"),
            self._resources(prop.backward_resource(None), "backward_resource"),
        )

    def _backward_inplace(
        self,
        prop: OperatorProperty,
        ids: tuple[list[int], ...],
        group_of: dict[int, str],
        visible: int,
        n_in: int,
        n_out: int,
    ) -> list[tuple[int, int]]:
        """``backward_inplace_option`` as pairs (position among the backward op's inputs,
        in_grad index)."""
        og, ind, outd, ing = ids
        groups = {"out_grad": (og, visible), "in_data": (ind, n_in), "out_data": (outd, n_out)}
        position, start = {}, 0
        for use in self.uses:
            arrays, size = groups[use]
            position.update({array: start + k for k, array in enumerate(arrays)})
            start += size
        pairs = []
        for pair in prop.backward_inplace_option(list(og), list(ind), list(outd), list(ing)):
            source, target = pair
            if target not in ing or source not in group_of:
                raise self.fail(
                    f"backward_inplace_option() returned {tuple(pair)}; pairs are (an id "
                    f"from out_grad, in_data or out_data, an id from in_grad)"
                )
            if source not in position:
                raise self.fail(
                    f"backward_inplace_option() shares {group_of[source]} id {source} "
                    f"with a gradient, but the backward op does not receive "
                    f"{group_of[source]} (declare it in declare_backward_dependency)"
                )
            pairs.append((position[source], ing.index(target)))
        return pairs

    def _resources(self, requests: Sequence[Any], method: str) -> list[ResourceRequest]:
        out = []
        for r in requests or ():
            if isinstance(r, str):
                r = ResourceRequest(r)
            if not isinstance(r, ResourceRequest):
                raise self.fail(
                    f"{method}() returned {r!r}; return ResourceRequest objects or "
                    f"'random' / 'temp_space'"
                )
            out.append(r)
        return out

    def _operator(self, key: tuple[Params, Any]) -> Operator:
        attrs, ctx = key
        operator = self.layouts.get(attrs).prop.create_operator(ctx)
        if not isinstance(operator, Operator):
            raise self.fail(f"create_operator() returned {operator!r}, not an Operator")
        return operator

    def operator(self, attrs: Params, op_ctx: OpContext) -> Operator:
        ctx = op_ctx.ctx
        if ctx is None:  # a kernel called directly, outside the engine
            from ..context import cpu

            ctx = cpu()
        return self.operators.get((attrs, ctx))

    # -- the Op record's attributes ---------------------------------------------------------------
    def num_inputs(self, attrs: Params) -> int:
        layout = self.layouts.get(attrs)
        return len(layout.arguments) + len(layout.aux)

    def num_outputs(self, attrs: Params) -> int:
        return len(self.layouts.get(attrs).outputs)

    def num_visible_outputs(self, attrs: Params) -> int:
        return self.layouts.get(attrs).visible

    def input_names(self, attrs: Params) -> list[str]:
        layout = self.layouts.get(attrs)
        return layout.arguments + layout.aux

    def output_names(self, attrs: Params) -> list[str]:
        return self.layouts.get(attrs).outputs

    def mutate_inputs(self, attrs: Params) -> list[int]:
        layout = self.layouts.get(attrs)
        return list(range(len(layout.arguments), len(layout.arguments) + len(layout.aux)))

    def inplace(self, attrs: Params) -> list[tuple[int, int]]:
        return self.layouts.get(attrs).inplace

    def backward_inplace(self, attrs: Params) -> list[tuple[int, int]]:
        return self.layouts.get(attrs).backward_inplace

    def forward_resources(self, attrs: Params) -> list[ResourceRequest]:
        return self.layouts.get(attrs).forward_resources

    def backward_resources(self, attrs: Params) -> list[ResourceRequest]:
        return self.layouts.get(attrs).backward_resources

    def _infer(
        self, attrs: Params, ins: list, outs: list, method: str, merge: Callable
    ) -> tuple[list, list]:
        layout = self.layouts.get(attrs)
        n_args, n_aux = len(layout.arguments), len(layout.aux)
        if len(ins) != n_args + n_aux:
            raise self.fail(
                f"takes {n_args + n_aux} inputs ({', '.join(layout.arguments + layout.aux)}), "
                f"got {len(ins)}"
            )
        normal = _shape if method == "infer_shape" else _dtype
        result = getattr(layout.prop, method)([normal(v) for v in ins[:n_args]])
        if result is None:
            return ins, outs
        try:
            new_args, new_outs, new_aux = (list(part) for part in result)
        except (TypeError, ValueError):
            raise self.fail(
                f"{method}() must return (in, out, aux) lists or None, got {result!r}"
            ) from None
        for what, got, want in (
            ("in", new_args, n_args),
            ("out", new_outs, len(outs)),
            ("aux", new_aux, n_aux),
        ):
            if len(got) != want:
                raise self.fail(f"{method}() returned {len(got)} {what} entries, expected {want}")
        names = layout.arguments + layout.aux
        merged_in = [
            merge(a, b, f"operator {self.name!r}, input {names[k]!r}")
            for k, (a, b) in enumerate(zip(ins, new_args + new_aux, strict=True))
        ]
        merged_out = [
            merge(a, b, f"operator {self.name!r}, output {layout.outputs[k]!r}")
            for k, (a, b) in enumerate(zip(outs, new_outs, strict=True))
        ]
        return merged_in, merged_out

    def infer_shape(
        self, attrs: Params, ins: ShapeList, outs: ShapeList
    ) -> tuple[ShapeList, ShapeList]:
        return self._infer(attrs, ins, outs, "infer_shape", _merge_any_shape)

    def infer_type(self, attrs: Params, ins: TypeList, outs: TypeList) -> tuple[TypeList, TypeList]:
        return self._infer(attrs, ins, outs, "infer_type", _merge_any_dtype)

    # -- kernels ----------------------------------------------------------------------------------
    def forward(
        self, attrs: Params, op_ctx: OpContext, inputs: list, req: list, outputs: list
    ) -> None:
        layout = self.layouts.get(attrs)
        n_args = len(layout.arguments)
        if len(inputs) != n_args + len(layout.aux) or len(outputs) != len(layout.outputs):
            raise self.fail(
                f"forward takes {n_args + len(layout.aux)} inputs and "
                f"{len(layout.outputs)} outputs, got {len(inputs)} and {len(outputs)}"
            )
        self.operator(attrs, op_ctx).forward(
            op_ctx, list(inputs[:n_args]), list(req), list(outputs), list(inputs[n_args:])
        )

    def backward(
        self, attrs: Params, op_ctx: OpContext, inputs: list, req: list, outputs: list
    ) -> None:
        layout = self.layouts.get(attrs)
        n_args, n_aux, n_out = len(layout.arguments), len(layout.aux), len(layout.outputs)
        sizes = {"out_grad": layout.visible, "in_data": n_args + n_aux, "out_data": n_out}
        if len(inputs) != sum(sizes[u] for u in self.uses) or len(outputs) != n_args:
            raise self.fail(
                f"backward takes {sum(sizes[u] for u in self.uses)} inputs "
                f"({', '.join(self.uses)}) and {n_args} outputs, got {len(inputs)} "
                f"and {len(outputs)}"
            )
        groups, start = {}, 0
        for use in self.uses:
            groups[use] = list(inputs[start : start + sizes[use]])
            start += sizes[use]
        out_grad = groups.get("out_grad", [None] * layout.visible)
        in_all = groups.get("in_data", [None] * (n_args + n_aux))
        out_data = groups.get("out_data", [None] * n_out)
        self.operator(attrs, op_ctx).backward(
            op_ctx, out_grad, in_all[:n_args], out_data, list(req), list(outputs), in_all[n_args:]
        )


def _shape(value: Any) -> tuple[int, ...] | None:
    return None if value is None else tuple(int(d) for d in value)


def _dtype(value: Any) -> np.dtype | None:
    return None if value is None else np.dtype(value)


def _merge_any_shape(a: Any, b: Any, what: str) -> Any:
    return merge_shape(_shape(a), _shape(b), what)


def _merge_any_dtype(a: Any, b: Any, what: str) -> Any:
    return merge_dtype(_dtype(a), _dtype(b), what)


def _probe_params(params: type[Params]) -> tuple[Params, bool]:
    """A parameter set to read the static declarations from, and whether it is complete:
    the defaults, with None standing in for required parameters."""
    try:
        return params.parse("<probe>", {}), True
    except ParamError:
        return params(
            **{
                name: (None if field.required else field.default)
                for name, field in params.fields().items()
            }
        ), False


def op_from_property(
    cls: type[OperatorProperty],
    name: str | None = None,
    *,
    backward_uses: Sequence[str] | None = None,
    description: str | None = None,
    domain: Domain | None = None,
    aliases: Sequence[str] | None = None,
) -> tuple[Op, ...]:
    """The :class:`Op` records of an ``OperatorProperty`` class: ``(forward, backward)``,
    or ``(forward,)`` when the property sets ``no_gradient``.

    ``name`` defaults to ``cls.name``.  The forward op's inputs are the
    arguments followed by the auxiliary states, which it declares as
    mutated inputs.  Its ``Gradient`` reads the groups (``out_grad``,
    ``in_data``, ``out_data``) that ``declare_backward_dependency`` asks
    for with the default parameters (auxiliary states travel with
    ``in_data``; when a required parameter makes the property unusable
    without values, all three); pass ``backward_uses`` when the declaration
    depends on parameters.  The backward op ``_backward_<name>`` checks at
    run time that the declaration for the actual parameters fits.
    """
    if not (isinstance(cls, type) and issubclass(cls, OperatorProperty)):
        raise OperatorError(f"op_from_property() takes an OperatorProperty subclass, got {cls!r}")
    name = name or cls.name
    if not name:
        raise OperatorError(
            f"op_from_property({cls.__name__}): give the operator a name, as "
            f"op_from_property({cls.__name__}, 'name') or a class attribute name = ..."
        )
    if not (isinstance(cls.params, type) and issubclass(cls.params, Params)):
        raise OperatorError(
            f"operator {name!r} ({cls.__name__}): params must be a Params subclass, "
            f"got {cls.params!r}"
        )
    differentiable = cls.no_gradient is None
    if backward_uses is not None:
        backward_uses = (backward_uses,) if isinstance(backward_uses, str) else tuple(backward_uses)
        bad = [u for u in backward_uses if u not in GRADIENT_USES]
        if bad:
            raise OperatorError(
                f"operator {name!r}: backward_uses items must be out_grad, in_data or "
                f"out_data, got {bad}"
            )
        uses = tuple(u for u in GRADIENT_USES if u in backward_uses)
    elif differentiable:
        probe_attrs, complete = _probe_params(cls.params)
        try:
            needs = _PropertyOp(cls, name, None).layouts.get(probe_attrs).needs
        except Exception:
            if complete:  # the defaults are valid parameters: this is a bug in the property
                raise
            needs = GRADIENT_USES  # it needs values for its required parameters: declare all
        uses = tuple(u for u in GRADIENT_USES if u in needs)
    else:
        uses = ()
    impl = _PropertyOp(cls, name, uses)
    doc = (
        description if description is not None else (cls.description or (cls.__doc__ or "").strip())
    )
    builder = (
        OpBuilder(name)
        .describe(doc)
        .set_params(cls.params)
        .set_num_inputs(impl.num_inputs)
        .set_num_outputs(impl.num_outputs)
        .set_num_visible_outputs(impl.num_visible_outputs)
        .set_input_names(impl.input_names)
        .set_output_names(impl.output_names)
        .set_mutate_inputs(impl.mutate_inputs)
        .set_infer_shape(impl.infer_shape)
        .set_infer_type(impl.infer_type)
        .set_compute(impl.forward, device=XP)
        .set_inplace(impl.inplace)
        .set_resources(impl.forward_resources)
        .set_aliases(*(aliases if aliases is not None else cls.aliases))
    )
    if domain is not None or cls.domain is not None:
        builder.set_domain(domain if domain is not None else cls.domain)
    if not differentiable:
        return (builder.set_gradient(NoGradient(cls.no_gradient)).build(),)
    forward = builder.set_gradient(Gradient(f"_backward_{name}", uses)).build()
    backward = (
        OpBuilder.backward_for(forward)
        .set_compute(impl.backward, device=XP)
        .set_inplace(impl.backward_inplace)
        .set_resources(impl.backward_resources)
        .build()
    )
    return forward, backward
