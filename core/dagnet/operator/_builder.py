"""The nnvm-style operator builder (seed: implementing-operators.md).

An operator is declared as one fluent block, the way ``NNVM_REGISTER_OP``
reads in C++, and ``build()`` checks it and returns the :class:`Op` record::

    quadratic = (
        OpBuilder("quadratic")
        .describe("f(x) = a*x**2 + b*x + c, element-wise")
        .set_params(QuadraticParam)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_input_names(["data"])
        .set_infer_shape(elemwise_shape)          # two-way; or set_forward_shape(rule)
        .set_infer_type(elemwise_type)
        .set_compute(quadratic_forward)           # device=XP: one kernel for every device
        .set_gradient("_backward_quadratic", uses=("out_grad", "in_data"))
        .set_inplace([(0, 0)])
        .build()
    )
    backward_quadratic = (
        OpBuilder.backward_for(quadratic)         # _backward_quadratic, is_backward, same params
        .set_compute(quadratic_backward)
        .build()
    )

``backward_for`` fills in what the backward op's layout follows from the
forward's gradient declaration: its inputs are the arrays named in
``Gradient.uses`` (head gradients, then the forward inputs, then the
forward outputs), its outputs one gradient per non-auxiliary input, and its
shape and type inference run the forward's two-way rules.

Shape rules may be written forward-only, ``rule(attrs, in_shapes) ->
out_shapes``; :func:`forward_shape` (or ``set_forward_shape``) lifts such a
rule into the two-way form an :class:`Op` holds: while an input shape is
unknown the shapes are returned unchanged, and the computed output shapes
are checked against any already known.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .._errors import DTypeError, OperatorError, ShapeError
from ..resource import ResourceRequest
from ._op import (
    XP,
    Domain,
    Gradient,
    NoGradient,
    Op,
    ShapeList,
    TypeList,
    ZeroGradient,
    elemwise_shape,
    elemwise_type,
    merge_dtype,
    merge_shape,
    shape_is_known,
)
from ._param import NoParams, Params
from ._req import OpReqType

__all__ = ["OpBuilder", "forward_shape", "forward_type", "GRADIENT_USES"]

GRADIENT_USES = ("out_grad", "in_data", "out_data")  # the order the backward op receives them in

_FIELDS = (
    "description", "params", "num_inputs", "num_outputs", "num_visible_outputs", "input_names",
    "output_names", "mutate_inputs", "infer_shape", "infer_type", "compute", "gradient", "inplace",
    "resources", "supported_req", "is_backward", "forward_op", "domain", "key_var_num_args",
    "aliases", "expand",
)


# -- forward-only inference rules lifted to the two-way form -----------------------------------
class _ForwardRule:
    """A forward-only shape or type rule in the two-way form (see :func:`forward_shape`)."""

    def __init__(self, rule: Callable[..., Any], kind: str, op_name: str | None):
        if not callable(rule):
            raise OperatorError(f"a forward {kind} rule must be callable, got {rule!r}")
        self.rule = rule
        self.kind = kind
        self.op_name = op_name
        self.__wrapped__ = rule
        self.__doc__ = getattr(rule, "__doc__", None)

    def named(self, op_name: str) -> _ForwardRule:
        """The same rule, reporting errors as operator ``op_name``'s."""
        return _ForwardRule(self.rule, self.kind, op_name)

    def __call__(self, attrs: Params, ins: list, outs: list) -> tuple[list, list]:
        who = (f"operator {self.op_name!r}" if self.op_name
               else f"{self.kind} rule {_qualname(self.rule)}")
        if self.kind == "shape":
            if not all(shape_is_known(s) for s in ins):
                return ins, outs
            got = self.rule(attrs, [tuple(int(d) for d in s) for s in ins])
            if got is None:
                return ins, outs
            got = _shape_list(got, len(outs))
            merge = merge_shape
        else:
            if any(t is None for t in ins):
                return ins, outs
            got = self.rule(attrs, [np.dtype(t) for t in ins])
            if got is None:
                return ins, outs
            got = [got] if not isinstance(got, (list, tuple)) else list(got)
            merge = merge_dtype
        if len(got) != len(outs):
            raise OperatorError(
                f"{who}: its forward {self.kind} rule {_qualname(self.rule)} returned {len(got)} "
                f"output {self.kind}s for {len(outs)} outputs; return one per output")
        merged = []
        for k, (known, new) in enumerate(zip(outs, got, strict=True)):
            try:
                merged.append(merge(known, new, ""))
            except (ShapeError, DTypeError) as error:
                raise type(error)(
                    f"{who}, output {k}: the {self.kind} rule {_qualname(self.rule)} gives "
                    f"{_text(new)} for inputs {_show(ins)}, but {_text(known)} is already known "
                    f"for this output") from None
        return ins, merged

    def __repr__(self) -> str:
        return f"forward_{self.kind}({_qualname(self.rule)})"


def forward_shape(
    rule: Callable[[Params, list[tuple[int, ...]]], Any], op_name: str | None = None
) -> Callable[[Params, ShapeList, ShapeList], tuple[ShapeList, ShapeList]]:
    """Lift a forward-only shape rule ``rule(attrs, in_shapes) -> out_shapes`` to the
    two-way form ``(attrs, in_shapes, out_shapes) -> (in_shapes, out_shapes)``.

    The rule is called only once every input shape is fully known (no None,
    no 0 dimension); until then the shapes come back unchanged.  It may
    return a list of shapes, a single shape when the op has one output, or
    None when it cannot decide.  Output shapes it computes are merged with
    those already known; a contradiction raises :class:`~dagnet.ShapeError`
    naming the operator (the builder fills in ``op_name``).
    """
    return _ForwardRule(rule, "shape", op_name)


def forward_type(
    rule: Callable[[Params, list[np.dtype]], Any], op_name: str | None = None
) -> Callable[[Params, TypeList, TypeList], tuple[TypeList, TypeList]]:
    """Lift a forward-only dtype rule ``rule(attrs, in_types) -> out_types`` (a list, or
    one dtype for a single output) to the two-way form, as :func:`forward_shape` does."""
    return _ForwardRule(rule, "type", op_name)


def _shape_list(value: Any, count: int) -> list:
    single = isinstance(value, tuple) and all(isinstance(d, (int, np.integer)) for d in value)
    if single and count == 1:
        return [value]
    return [None if s is None else tuple(s) for s in value]


def _text(value: Any) -> str:
    """A shape as ``(2, 3)``, a dtype as ``float32``."""
    if value is None:
        return "unknown"
    return str(tuple(value)) if isinstance(value, (tuple, list)) else np.dtype(value).name


def _show(values: list) -> str:
    return "(" + ", ".join(_text(v) for v in values) + ")"


def _qualname(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


# -- the builder --------------------------------------------------------------------------------
class OpBuilder:
    """Declare an operator attribute by attribute, nnvm style; ``build()`` returns the :class:`Op`.

    Every setter returns the builder, so a definition reads as one block.
    Counts, names, in-place pairs, mutated inputs and resources may be fixed
    values or functions of the parsed parameters.  ``build()`` checks the
    declaration and raises :class:`~dagnet.operator.OperatorError` naming
    the operator and what to add or change.
    """

    def __init__(self, name: str):
        if not isinstance(name, str) or not name.isidentifier():
            raise OperatorError(
                f"an operator name must be a Python identifier such as 'quadratic' or "
                f"'_backward_quadratic' (it becomes dagnet.nd.<name>), got {name!r}"
            )
        self.name = name
        self._attrs: dict[str, Any] = {"compute": {}}

    def __repr__(self) -> str:
        return f"<OpBuilder {self.name!r}>"

    def _set(self, key: str, value: Any) -> OpBuilder:
        self._attrs[key] = value
        return self

    def _fail(self, message: str) -> OperatorError:
        return OperatorError(f"operator {self.name!r}: {message}")

    # -- description and parameters ------------------------------------------------------------
    def describe(self, text: str) -> OpBuilder:
        """The docstring of ``dagnet.nd.<name>``: the math, an example, dtype and gradient
        caveats."""
        if not isinstance(text, str):
            raise self._fail(f"describe() takes a string, got {type(text).__name__}")
        return self._set("description", text)

    def set_params(self, params: type[Params]) -> OpBuilder:
        """The parameter schema, a :class:`Params` subclass (nnvm's ``set_attr_parser``)."""
        if not (isinstance(params, type) and issubclass(params, Params)):
            raise self._fail(
                f"set_params() takes a Params subclass (class MyParam(Params): ...), got {params!r}"
            )
        return self._set("params", params)

    # -- inputs and outputs --------------------------------------------------------------------
    def set_num_inputs(self, count: int | Callable[[Params], int]) -> OpBuilder:
        """How many inputs, auxiliary states included; or a function of the parameters."""
        return self._set("num_inputs", self._count(count, "set_num_inputs"))

    def set_num_outputs(self, count: int | Callable[[Params], int]) -> OpBuilder:
        """How many outputs; or a function of the parameters."""
        return self._set("num_outputs", self._count(count, "set_num_outputs"))

    def set_num_visible_outputs(self, count: int | Callable[[Params], int]) -> OpBuilder:
        """How many outputs the user sees (the first ones); the rest are internal."""
        return self._set("num_visible_outputs", self._count(count, "set_num_visible_outputs"))

    def set_input_names(
        self, names: Sequence[str] | Callable[[Params], Sequence[str]]
    ) -> OpBuilder:
        """Input names (nnvm's ``FListInputNames``): ``["data", "weight", "bias"]``."""
        return self._set("input_names", self._names(names, "set_input_names"))

    def set_output_names(
        self, names: Sequence[str] | Callable[[Params], Sequence[str]]
    ) -> OpBuilder:
        """Output names (nnvm's ``FListOutputNames``)."""
        return self._set("output_names", self._names(names, "set_output_names"))

    def set_mutate_inputs(
        self, indices: Sequence[int] | Callable[[Params], Sequence[int]]
    ) -> OpBuilder:
        """Inputs the op writes (nnvm's ``FMutateInputs``): auxiliary states, optimizer states."""
        return self._set("mutate_inputs", indices if callable(indices) else tuple(indices))

    def set_key_var_num_args(self, param: str) -> OpBuilder:
        """The parameter that counts variadic inputs (``Concat``'s ``num_args``)."""
        return self._set("key_var_num_args", param)

    def set_aliases(self, *names: str) -> OpBuilder:
        """Other names the op answers to (``_plus`` for ``elemwise_add``)."""
        return self._set("aliases", tuple(names))

    # -- inference ------------------------------------------------------------------------------
    def set_infer_shape(
        self, fn: Callable[[Params, ShapeList, ShapeList], tuple[ShapeList, ShapeList]]
    ) -> OpBuilder:
        """The two-way shape rule ``fn(attrs, in_shapes, out_shapes) -> (in_shapes, out_shapes)``
        (nnvm's ``FInferShape``); None or a 0 dimension is unknown.

        ``elemwise_shape`` may be passed as it is (it is bound to this op's name);
        a forward-only rule goes through :meth:`set_forward_shape`.
        """
        if fn is elemwise_shape:
            fn = elemwise_shape(self.name)
        elif isinstance(fn, _ForwardRule) and fn.op_name is None:
            fn = fn.named(self.name)
        if not callable(fn):
            raise self._fail(f"set_infer_shape() takes a function, got {fn!r}")
        return self._set("infer_shape", fn)

    def set_forward_shape(self, rule: Callable[[Params, list[tuple[int, ...]]], Any]) -> OpBuilder:
        """A forward-only shape rule ``rule(attrs, in_shapes) -> out_shapes``
        (see :func:`forward_shape`)."""
        return self._set("infer_shape", forward_shape(rule, self.name))

    def set_infer_type(
        self, fn: Callable[[Params, TypeList, TypeList], tuple[TypeList, TypeList]]
    ) -> OpBuilder:
        """The two-way dtype rule (nnvm's ``FInferType``); the default gives every
        input and output one dtype."""
        if isinstance(fn, _ForwardRule) and fn.op_name is None:
            fn = fn.named(self.name)
        if not callable(fn):
            raise self._fail(f"set_infer_type() takes a function, got {fn!r}")
        return self._set("infer_type", fn)

    def set_forward_type(self, rule: Callable[[Params, list[np.dtype]], Any]) -> OpBuilder:
        """A forward-only dtype rule ``rule(attrs, in_types) -> out_types``
        (see :func:`forward_type`)."""
        return self._set("infer_type", forward_type(rule, self.name))

    # -- compute and gradient ----------------------------------------------------------------------
    def set_compute(self, fn: Callable[..., None], device: str = XP) -> OpBuilder:
        """The kernel ``fn(attrs, ctx, inputs, req, outputs)`` (nnvm's ``FCompute<xpu>``) for
        ``device``: ``"cpu"``, ``"gpu"``, another backend's device type, or ``XP`` (the
        default) for a kernel written against ``ctx.xp`` that serves every device.
        It must honour each ``req[i]`` (use :func:`~dagnet.operator.assign`)."""
        if not callable(fn):
            raise self._fail(
                f"set_compute() takes a function (attrs, ctx, inputs, req, outputs), got {fn!r}"
            )
        if not isinstance(device, str) or not device:
            raise self._fail(
                f"set_compute(device=...) takes a device type such as 'cpu', 'gpu' "
                f"or XP, got {device!r}"
            )
        compute = self._attrs["compute"]
        if device in compute:
            raise self._fail(
                f"a compute function for device {device!r} is already set "
                f"({_qualname(compute[device])}); set each device once"
            )
        compute[device] = fn
        return self

    def set_gradient(
        self,
        backward: str | Gradient | NoGradient | ZeroGradient,
        uses: Iterable[str] = ("out_grad",),
    ) -> OpBuilder:
        """The gradient rule (nnvm's ``FGradient``): the backward op's name and what it
        reads, any of ``"out_grad"``, ``"in_data"``, ``"out_data"`` (MXNet's
        ``ElemwiseGradUseNone`` is ``("out_grad",)``, ``ElemwiseGradUseIn``
        ``("out_grad", "in_data")``, ``ElemwiseGradUseOut`` ``("out_grad", "out_data")``).

        A :class:`Gradient`, :class:`NoGradient` or :class:`ZeroGradient` is accepted too.
        """
        if isinstance(backward, (NoGradient, ZeroGradient)):
            return self._set("gradient", backward)
        if isinstance(backward, Gradient):
            backward, uses = backward.backward, backward.uses
        if not isinstance(backward, str) or not backward.isidentifier():
            raise self._fail(
                f"set_gradient() takes the backward operator's name, conventionally "
                f"'_backward_{self.name}', got {backward!r}"
            )
        if backward == self.name:
            raise self._fail(
                f"the gradient names the operator itself; name its backward operator, "
                f"conventionally '_backward_{self.name}'"
            )
        uses = (uses,) if isinstance(uses, str) else tuple(uses)
        bad = [u for u in uses if u not in GRADIENT_USES]
        if bad:
            raise self._fail(
                f"set_gradient(uses=...) names what the backward op reads, any of 'out_grad', "
                f"'in_data', 'out_data'; got {uses!r}"
            )
        return self._set(
            "gradient", Gradient(backward, tuple(u for u in GRADIENT_USES if u in uses))
        )

    def set_no_gradient(self, reason: str) -> OpBuilder:
        """The op is not differentiable; ``reason`` is shown to whoever asks for a gradient."""
        return self._set("gradient", NoGradient(reason))

    def set_zero_gradient(self) -> OpBuilder:
        """The gradient exists and is zero everywhere (comparisons, ``BlockGrad``)."""
        return self._set("gradient", ZeroGradient())

    # -- memory and resources ----------------------------------------------------------------------
    def set_inplace(
        self, pairs: Sequence[tuple[int, int]] | Callable[[Params], Sequence[tuple[int, int]]]
    ) -> OpBuilder:
        """``(input, output)`` index pairs that may share memory (nnvm's ``FInplaceOption``)."""
        return self._set("inplace", pairs if callable(pairs) else tuple(tuple(p) for p in pairs))

    def set_resources(
        self,
        requests: Sequence[ResourceRequest | str] | Callable[[Params], Sequence[ResourceRequest]],
    ) -> OpBuilder:
        """Resources the kernel finds in ``ctx.requested``, in order (nnvm's
        ``FResourceRequest``): ``ResourceRequest("temp_space")`` or ``"random"``."""
        if callable(requests):
            return self._set("resources", requests)
        return self._set("resources", tuple(self._resource(r) for r in requests))

    def set_supported_req(self, reqs: Iterable[OpReqType | str]) -> OpBuilder:
        """The write modes the kernel honours (default: all of null, write, inplace, add)."""
        try:
            parsed = frozenset(r if isinstance(r, OpReqType) else OpReqType(r) for r in reqs)
        except ValueError as error:
            raise self._fail(
                f"set_supported_req(): {error}; use OpReqType or one of "
                f"{', '.join(r.value for r in OpReqType)}"
            ) from None
        return self._set("supported_req", parsed)

    def set_expand(self, fn: Callable[[Params, list, list], Any]) -> OpBuilder:
        """Make this a graph-only operator: ``fn(attrs, in_shapes, in_dtypes)`` returns the
        symbol (over variables ``arg0``, ``arg1`` ... standing for the inputs) that replaces
        the node once its input shapes and dtypes are known; it needs no compute."""
        if not callable(fn):
            raise self._fail(f"set_expand() takes a function, got {fn!r}")
        return self._set("expand", fn)

    # -- testing ----------------------------------------------------------------------------------
    def set_domain(self, domain: Domain) -> OpBuilder:
        """Where the conformance suite samples the op and its numpy reference."""
        if not isinstance(domain, Domain):
            raise self._fail(f"set_domain() takes a dagnet.operator.Domain, got {domain!r}")
        return self._set("domain", domain)

    # -- backward operators ------------------------------------------------------------------------
    @classmethod
    def backward_for(cls, forward: Op, name: str | None = None) -> OpBuilder:
        """A builder for ``forward``'s backward operator, laid out from its gradient declaration.

        Preset: the name from ``forward.gradient`` (``_backward_<name>``),
        ``is_backward``, ``forward_op``, the forward's parameters, inputs
        (the arrays of ``Gradient.uses``: head gradients, then every forward
        input, then every forward output) and outputs (one gradient per
        non-auxiliary input) with their names, and shape and type inference
        derived from the forward's two-way rules.  Set the compute function;
        override anything else as for a forward op.
        """
        if not isinstance(forward, Op):
            raise OperatorError(f"OpBuilder.backward_for() takes the forward Op, got {forward!r}")
        gradient = forward.gradient
        if not isinstance(gradient, Gradient):
            raise OperatorError(
                f"operator {forward.name!r} declares no Gradient, so it has no backward operator "
                f"to build; declare one with .set_gradient('_backward_{forward.name}', "
                f"uses=(...)) first (got {gradient!r})"
            )
        builder = cls(name or gradient.backward)
        layout = _BackwardLayout(forward)
        builder._attrs.update(
            description=f"Backward of {forward.name!r}: the gradients of its non-auxiliary inputs.",
            params=forward.params,
            num_inputs=layout.num_inputs,
            num_outputs=layout.num_outputs,
            input_names=layout.input_names,
            output_names=layout.output_names,
            infer_shape=layout.infer_shape,
            infer_type=layout.infer_type,
            is_backward=True,
            forward_op=forward.name,
        )
        return builder

    # -- build ------------------------------------------------------------------------------------
    def build(self) -> Op:
        """Check the declaration and return the :class:`Op` record."""
        attrs = dict(self._attrs)
        attrs["compute"] = dict(attrs["compute"])
        attrs.setdefault("params", NoParams)
        is_backward = attrs.get("is_backward", False)
        if not attrs["compute"] and attrs.get("expand") is None:
            raise self._fail(
                "no compute function; add .set_compute(fn) (fn(attrs, ctx, inputs, req, "
                "outputs), written against ctx.xp) or .set_compute(fn, device='cpu')"
            )
        if attrs.get("infer_shape") is None and not is_backward:
            raise self._fail(
                "no shape inference; add .set_infer_shape(elemwise_shape) for an "
                "element-wise op, or .set_forward_shape(rule) with "
                "rule(attrs, in_shapes) -> out_shapes"
            )
        self._check_counts(attrs)
        key = attrs.get("key_var_num_args")
        if key is not None and key not in attrs["params"].fields():
            raise self._fail(
                f"set_key_var_num_args({key!r}) names no parameter of "
                f"{attrs['params'].__name__} ({', '.join(attrs['params'].fields()) or 'none'})"
            )
        return Op(name=self.name, **{k: v for k, v in attrs.items() if k in _FIELDS})

    # -- checks ---------------------------------------------------------------------------------
    def _count(self, count: Any, setter: str) -> Any:
        if callable(count):
            return count
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise self._fail(
                f"{setter}() takes a count >= 0 or a function of the parameters, got {count!r}"
            )
        return int(count)

    def _names(self, names: Any, setter: str) -> Any:
        if callable(names):
            return names
        if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
            raise self._fail(f"{setter}() takes a list of names such as ['data'], got {names!r}")
        names = tuple(names)
        if len(set(names)) != len(names):
            raise self._fail(f"{setter}() got repeated names {list(names)}")
        return names

    def _resource(self, request: Any) -> ResourceRequest:
        if isinstance(request, ResourceRequest):
            return request
        if isinstance(request, str):
            return ResourceRequest(request)
        raise self._fail(
            f"set_resources() takes ResourceRequest objects or 'random' / "
            f"'temp_space', got {request!r}"
        )

    def _check_counts(self, attrs: dict[str, Any]) -> None:
        """Check what can be checked without parameters: names, pairs and indexes in range."""

        def static(key: str, default: Any) -> Any:
            value = attrs.get(key, default)
            return None if callable(value) else value

        n_in, n_out = static("num_inputs", 1), static("num_outputs", 1)
        n_visible = static("num_visible_outputs", None)
        for key, count, what in (
            ("input_names", n_in, "inputs"),
            ("output_names", n_out, "outputs"),
        ):
            names = static(key, None)
            if names is not None and count is not None and len(names) != count:
                setter = "set_num_inputs" if what == "inputs" else "set_num_outputs"
                raise self._fail(
                    f"{len(names)} {key.replace('_', ' ')} {list(names)} for {count} "
                    f"{what}; make {setter}() and set_{key}() agree"
                )
        if n_visible is not None and n_out is not None and n_visible > n_out:
            raise self._fail(f"{n_visible} visible outputs but only {n_out} outputs")
        mutated = static("mutate_inputs", ())
        if mutated is not None and n_in is not None:
            bad = [i for i in mutated if not 0 <= i < n_in]
            if bad:
                raise self._fail(
                    f"mutate_inputs {list(mutated)} name input {bad[0]}, but the op "
                    f"has {n_in} inputs (indexes 0..{n_in - 1})"
                )
        pairs = static("inplace", ())
        for pair in pairs or ():
            if len(pair) != 2:
                raise self._fail(f"in-place pair {pair!r} must be (input index, output index)")
            i, o = pair
            if (n_in is not None and not 0 <= i < n_in) or (
                n_out is not None and not 0 <= o < n_out
            ):
                raise self._fail(
                    f"in-place pair {tuple(pair)} is out of range: the op has {n_in} inputs and "
                    f"{n_out} outputs; a pair is (input index, output index)"
                )
        for resource in static("resources", ()) or ():
            if not isinstance(resource, ResourceRequest):
                raise self._fail(f"resource {resource!r} is not a ResourceRequest")


# -- the backward op's layout, derived from the forward's declaration ---------------------------
class _BackwardLayout:
    """What a backward op's attributes follow from: the forward op and its ``Gradient.uses``."""

    def __init__(self, forward: Op):
        self.forward = forward
        self.uses = tuple(forward.gradient.uses)
        self.out_data = getattr(forward.gradient, "out_data", None)

    def _sizes(self, attrs: Params) -> dict[str, int]:
        f = self.forward
        return {
            "out_grad": f.n_visible_outputs(attrs),
            "in_data": f.n_inputs(attrs),
            "out_data": len(self._outputs_read(attrs)),
        }

    def _outputs_read(self, attrs: Params) -> list[int]:
        """The forward outputs the backward op reads (its ``out_data`` inputs)."""
        if self.out_data is None:
            return list(range(self.forward.n_outputs(attrs)))
        return list(self.out_data)

    def _arguments(self, attrs: Params) -> list[int]:
        mutated = set(self.forward.mutated_inputs(attrs))
        return [i for i in range(self.forward.n_inputs(attrs)) if i not in mutated]

    def num_inputs(self, attrs: Params) -> int:
        sizes = self._sizes(attrs)
        return sum(sizes[u] for u in self.uses)

    def num_outputs(self, attrs: Params) -> int:
        return len(self._arguments(attrs))

    def input_names(self, attrs: Params) -> list[str]:
        f = self.forward
        outputs = f.list_outputs(attrs)
        names = {
            "out_grad": [f"{n}_grad" for n in outputs[: f.n_visible_outputs(attrs)]],
            "in_data": f.list_inputs(attrs),
            "out_data": [outputs[k] for k in self._outputs_read(attrs)],
        }
        return [n for u in self.uses for n in names[u]]

    def output_names(self, attrs: Params) -> list[str]:
        inputs = self.forward.list_inputs(attrs)
        return [f"{inputs[i]}_grad" for i in self._arguments(attrs)]

    def _split(self, attrs: Params, values: list) -> dict[str, list]:
        sizes, parts, start = self._sizes(attrs), {}, 0
        if len(values) != self.num_inputs(attrs):
            raise OperatorError(
                f"operator {self.forward.gradient.backward!r} takes {self.num_inputs(attrs)} "
                f"inputs ({', '.join(self.uses)} of {self.forward.name!r}), got {len(values)}"
            )
        for use in self.uses:
            parts[use] = list(values[start : start + sizes[use]])
            start += sizes[use]
        return parts

    def _infer(self, attrs: Params, ins: list, outs: list, merge: Callable, rule: Callable | None):
        name = self.forward.gradient.backward
        parts, sizes, args = self._split(attrs, ins), self._sizes(attrs), self._arguments(attrs)
        fwd_in = parts.get("in_data") or [None] * sizes["in_data"]
        for k, i in enumerate(args):  # a gradient has its input's shape and dtype
            fwd_in[i] = merge(fwd_in[i], outs[k], f"operator {name!r}, gradient of input {i}")
        read = self._outputs_read(attrs)
        fwd_out = [None] * self.forward.n_outputs(attrs)
        for k, value in zip(read, parts.get("out_data", [])):
            fwd_out[k] = value
        for k, value in enumerate(parts.get("out_grad", [])):  # a head gradient has its output's
            fwd_out[k] = merge(fwd_out[k], value, f"operator {name!r}, head gradient {k}")
        if rule is not None:
            fwd_in, fwd_out = rule(attrs, list(fwd_in), list(fwd_out))
        rebuilt = {
            "out_grad": list(fwd_out[: sizes["out_grad"]]),
            "in_data": list(fwd_in),
            "out_data": [fwd_out[k] for k in read],
        }
        return [v for u in self.uses for v in rebuilt[u]], [fwd_in[i] for i in args]

    def infer_shape(
        self, attrs: Params, ins: ShapeList, outs: ShapeList
    ) -> tuple[ShapeList, ShapeList]:
        """Run the forward's two-way shape rule on what the backward op knows."""
        try:
            return self._infer(attrs, ins, outs, merge_shape, self.forward.infer_shape)
        except ShapeError as error:
            raise ShapeError(
                f"{error} (while inferring the shapes of {self.forward.gradient.backward!r})"
            ) from None

    def infer_type(self, attrs: Params, ins: TypeList, outs: TypeList) -> tuple[TypeList, TypeList]:
        """Run the forward's two-way dtype rule on what the backward op knows."""
        return self._infer(attrs, ins, outs, merge_dtype, self.forward.infer_type or elemwise_type)
