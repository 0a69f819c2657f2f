"""SimpleOp, the unified operator API for unary and binary operators (seed:
unified-operator-api.md; system-architecture.md, "SimpleOp").

An operator is a function, a gradient and, optionally, a shape function;
``build()`` returns the same :class:`Op` records as the other two ways (the
forward op and ``_backward_<name>``)::

    def smooth_l1(x, env):
        s2 = env.scalar ** 2
        return env.xp.where(abs(x) < 1 / s2, 0.5 * s2 * x * x, abs(x) - 0.5 / s2)

    def smooth_l1_grad(out_grad, x, env):
        s2 = env.scalar ** 2
        return out_grad * env.xp.clip(s2 * x, -1, 1)

    ops = (SimpleOp.unary("smooth_l1")
           .set_function(smooth_l1)
           .set_gradient(smooth_l1_grad, GradKind.WITH_INPUT, inplace=True)
           .set_enable_scalar(True)
           .describe("Smooth L1 loss, element-wise")
           .build())

How MXNet's C++ signatures read here:

- ``UnaryFunction(src, env, ret, req, ctx)`` → ``fn(src, env) -> result``;
  ``BinaryFunction(lhs, rhs, env, ret, req, ctx)`` → ``fn(lhs, rhs, env)``.
  dagnet writes the result into ``ret`` as ``req`` says (``ASSIGN_DISPATCH``),
  and skips the call when there is nothing to write.
- The gradient kinds (``UnaryGradFunctionT0/T1/T2``) are declared with a
  :class:`GradKind`: ``HEAD_ONLY`` → ``grad(out_grad, env)``,
  ``WITH_OUTPUT`` → ``grad(out_grad, out_value, env)``, ``WITH_INPUT`` →
  ``grad(out_grad, src, env)`` (binary: ``grad(out_grad, lhs, rhs, env)``).
  A unary gradient returns the input's gradient, a binary one the pair
  ``(lhs_grad, rhs_grad)``.  The kind becomes ``Gradient.uses``:
  ``("out_grad",)``, ``("out_grad", "out_data")``, ``("out_grad", "in_data")``.
- ``UnaryShapeFunction(src, env)`` → ``shape_fn(src_shape, env) -> shape``;
  binary ``shape_fn(lhs_shape, rhs_shape, env)``.  Without one the output
  has the input's shape (a binary op's operands must agree), inferred both ways.
- ``EnvArguments`` → :class:`SimpleOpEnv`: ``scalar`` (with
  ``set_enable_scalar``: the op takes a ``scalar`` parameter), ``kwargs``
  (with ``set_enable_kwargs(Params)``: the parsed parameters),
  ``resources`` (``set_resource_request``), plus ``xp``, ``is_train`` and
  ``run_ctx`` in place of the ``RunContext`` argument.
- ``SimpleOpInplaceOption`` → ``inplace=True`` on ``set_function``
  (``kInplaceInOut`` / ``kInplaceLhsOut``: the output may reuse the first
  input) and on ``set_gradient`` (``kInplaceOutIn`` / ``kInplaceOutLhs``:
  the first input's gradient may reuse the head gradient).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._errors import OperatorError, ShapeError
from ..resource import ResourceRequest
from ._builder import OpBuilder, forward_shape
from ._op import XP, Domain, NoGradient, Op, OpContext, ZeroGradient, elemwise_shape, merge_shape
from ._param import REQUIRED, Field, NoParams, Params
from ._req import OpReqType, assign

__all__ = ["SimpleOp", "SimpleOpEnv", "GradKind"]


class GradKind(enum.Enum):
    """What a SimpleOp gradient reads besides the head gradient (MXNet's gradient
    function types ``T0``/``T1``/``T2``), and so what the backward pass keeps alive."""

    HEAD_ONLY = "head"      # grad(out_grad, env)
    WITH_OUTPUT = "output"  # grad(out_grad, out_value, env)
    WITH_INPUT = "input"    # grad(out_grad, *inputs, env)

    @property
    def uses(self) -> tuple[str, ...]:
        """The ``Gradient.uses`` this kind declares."""
        return {"head": ("out_grad",), "output": ("out_grad", "out_data"),
                "input": ("out_grad", "in_data")}[self.value]


@dataclass
class SimpleOpEnv:
    """What a SimpleOp function receives besides its arrays (MXNet's ``EnvArguments``).

    ``scalar``: the ``scalar`` parameter when enabled; ``kwargs``: the parsed
    parameters (the declared :class:`Params`, or the one holding ``scalar``);
    ``resources``: the requested resources, in order; ``op_ctx``: the
    :class:`OpContext` (None while inferring shapes).
    """

    scalar: float | None = None
    kwargs: Params | None = None
    resources: list = field(default_factory=list)
    op_ctx: OpContext | None = None

    @property
    def xp(self) -> Any:
        """The device's array module (numpy, cupy)."""
        return self.op_ctx.xp if self.op_ctx is not None else None

    @property
    def is_train(self) -> bool:
        return bool(self.op_ctx.is_train) if self.op_ctx is not None else False

    @property
    def run_ctx(self) -> Any:
        """The engine's RunContext (device and stream)."""
        return self.op_ctx.run_ctx if self.op_ctx is not None else None


def _env(attrs: Params, op_ctx: OpContext | None, scalar: bool) -> SimpleOpEnv:
    return SimpleOpEnv(
        scalar=attrs.scalar if scalar else None,
        kwargs=attrs if attrs.fields() else None,
        resources=list(op_ctx.requested) if op_ctx is not None else [],
        op_ctx=op_ctx,
    )


class SimpleOp:
    """Declare a unary or binary operator from a function, a gradient and a shape function.

    Create one with :meth:`unary` or :meth:`binary`; every setter returns the
    SimpleOp; ``build()`` returns ``(forward, backward)`` (just ``(forward,)``
    when no gradient function is set).
    """

    def __init__(self, name: str, arity: int = 1):
        if arity not in (1, 2):
            raise OperatorError(
                f"SimpleOp {name!r}: arity must be 1 (unary) or 2 (binary), got {arity!r}; "
                f"for more operands use OpBuilder or OperatorProperty"
            )
        if not isinstance(name, str) or not name.isidentifier():
            raise OperatorError(f"a SimpleOp name must be a Python identifier, got {name!r}")
        self.name = name
        self.arity = arity
        self._description = ""
        self._shape_fn: Callable[..., Any] | None = None
        self._functions: dict[str, Callable[..., Any]] = {}
        self._inplace = False
        self._gradients: dict[str, Callable[..., Any]] = {}
        self._grad_kind: GradKind | None = None
        self._grad_inplace = False
        self._gradient_rule: NoGradient | ZeroGradient | None = None
        self._scalar: Field | None = None
        self._kwargs: type[Params] | None = None
        self._resources: list[ResourceRequest] = []
        self._input_names: Sequence[str] = ("data",) if arity == 1 else ("lhs", "rhs")
        self._domain: Domain | None = None
        self._aliases: tuple[str, ...] = ()

    @classmethod
    def unary(cls, name: str) -> SimpleOp:
        """A one-operand operator (input ``data``)."""
        return cls(name, 1)

    @classmethod
    def binary(cls, name: str) -> SimpleOp:
        """A two-operand operator (inputs ``lhs``, ``rhs``)."""
        return cls(name, 2)

    def _fail(self, message: str) -> OperatorError:
        return OperatorError(f"SimpleOp {self.name!r}: {message}")

    def describe(self, text: str) -> SimpleOp:
        """The docstring of ``dagnet.nd.<name>``."""
        self._description = text
        return self

    def set_shape_function(self, fn: Callable[..., Any]) -> SimpleOp:
        """``fn(src_shape, env) -> out_shape`` (binary: ``fn(lhs_shape, rhs_shape, env)``);
        it may raise :class:`~dagnet.ShapeError` to reject shapes."""
        if not callable(fn):
            raise self._fail(f"set_shape_function() takes a function, got {fn!r}")
        self._shape_fn = fn
        return self

    def set_function(
        self, fn: Callable[..., Any], *, inplace: bool = False, device: str = XP
    ) -> SimpleOp:
        """The forward function ``fn(src, env) -> result`` (binary ``fn(lhs, rhs, env)``),
        written against ``env.xp`` (or for one ``device``).  ``inplace=True``: the
        output may share the first input's memory."""
        if not callable(fn):
            raise self._fail(f"set_function() takes a function, got {fn!r}")
        self._functions[device] = fn
        self._inplace = bool(inplace)
        return self

    def set_gradient(
        self,
        fn: Callable[..., Any],
        kind: GradKind | str = GradKind.HEAD_ONLY,
        *,
        inplace: bool = False,
        device: str = XP,
    ) -> SimpleOp:
        """The gradient function and what it reads (see :class:`GradKind`; the strings
        ``"head"``, ``"output"``, ``"input"`` work too).  ``inplace=True``: the first
        input's gradient may share the head gradient's memory."""
        if not callable(fn):
            raise self._fail(f"set_gradient() takes a function, got {fn!r}")
        try:
            kind = GradKind(kind)
        except ValueError:
            raise self._fail(
                f"unknown gradient kind {kind!r}; expected one of "
                f"{', '.join(k.value for k in GradKind)} (or a GradKind)"
            ) from None
        if self._grad_kind is not None and self._grad_kind is not kind:
            raise self._fail(
                f"gradient functions of kinds {self._grad_kind.value} and {kind.value}; "
                f"every device's gradient must read the same arrays"
            )
        self._gradients[device] = fn
        self._grad_kind = kind
        self._grad_inplace = bool(inplace)
        return self

    def set_no_gradient(self, reason: str) -> SimpleOp:
        """The operator is not differentiable (no backward op is made)."""
        self._gradient_rule = NoGradient(reason)
        return self

    def set_zero_gradient(self) -> SimpleOp:
        """The gradient is zero everywhere (no backward op is made)."""
        self._gradient_rule = ZeroGradient()
        return self

    def set_enable_scalar(
        self, enable: bool = True, *, default: Any = REQUIRED, desc: str = "scalar input"
    ) -> SimpleOp:
        """The operator takes a float parameter ``scalar``, found in ``env.scalar``."""
        self._scalar = Field(float, default, desc) if enable else None
        return self

    def set_enable_kwargs(self, params: type[Params] | bool) -> SimpleOp:
        """The operator takes the parameters ``params`` declares, found in ``env.kwargs``
        (MXNet's ``set_enable_kwargs`` parsed through a parameter struct)."""
        if params is False:
            self._kwargs = None
            return self
        if not (isinstance(params, type) and issubclass(params, Params)):
            raise self._fail(
                f"set_enable_kwargs() takes the Params subclass that declares the "
                f"keyword arguments, got {params!r}"
            )
        self._kwargs = params
        return self

    def set_resource_request(
        self, requests: ResourceRequest | str | Sequence[ResourceRequest | str]
    ) -> SimpleOp:
        """Resources found in ``env.resources`` in forward and backward: ``"random"``,
        ``"temp_space"`` or :class:`~dagnet.resource.ResourceRequest` s."""
        if isinstance(requests, (ResourceRequest, str)):
            requests = [requests]
        self._resources = [
            r if isinstance(r, ResourceRequest) else ResourceRequest(r) for r in requests
        ]
        return self

    def set_input_names(self, names: Sequence[str]) -> SimpleOp:
        """Input names (default ``data``, or ``lhs``, ``rhs``)."""
        if isinstance(names, str) or len(names) != self.arity:
            raise self._fail(f"set_input_names() takes {self.arity} names, got {names!r}")
        self._input_names = tuple(names)
        return self

    def set_domain(self, domain: Domain) -> SimpleOp:
        """Where the conformance suite samples the op and its numpy reference."""
        self._domain = domain
        return self

    def set_aliases(self, *names: str) -> SimpleOp:
        """Other names the op answers to."""
        self._aliases = tuple(names)
        return self

    # -- build ------------------------------------------------------------------------------------
    def _params(self) -> type[Params]:
        if self._scalar is not None and self._kwargs is not None:
            raise self._fail(
                "set_enable_scalar and set_enable_kwargs cannot both be on (a scalar "
                "and keyword arguments would be ambiguous); declare the scalar as a "
                "field of the Params class instead"
            )
        if self._kwargs is not None:
            return self._kwargs
        if self._scalar is not None:
            return type(f"{self.name}_ScalarParam", (Params,), {"scalar": self._scalar})
        return NoParams


    def _infer_shape(self) -> Callable[..., Any]:
        if self._shape_fn is None:
            return elemwise_shape(self.name) if self.arity == 1 else self._same_operands
        shape_fn, scalar = self._shape_fn, self._scalar is not None

        def rule(attrs: Params, in_shapes: list) -> Any:
            return shape_fn(*in_shapes, _env(attrs, None, scalar))

        rule.__qualname__ = getattr(shape_fn, "__qualname__", "shape function")
        return forward_shape(rule, self.name)

    def _same_operands(self, attrs: Params, ins: list, outs: list) -> tuple[list, list]:
        lhs, rhs = ins
        try:
            merged = merge_shape(lhs, rhs, "")
        except ShapeError:
            raise ShapeError(
                f"operator {self.name!r}: lhs shape {tuple(lhs)} and rhs shape {tuple(rhs)} "
                f"differ; its operands must have one shape"
            ) from None
        merged = merge_shape(merged, outs[0], f"operator {self.name!r}, output")
        return [merged, merged], [merged]

    def _forward_kernel(self, fn: Callable[..., Any]) -> Callable[..., None]:
        scalar = self._scalar is not None

        def forward(
            attrs: Params, op_ctx: OpContext, inputs: list, req: list, outputs: list
        ) -> None:
            if req[0] is OpReqType.NULL:
                return
            assign(outputs[0], req[0], fn(*inputs, _env(attrs, op_ctx, scalar)))

        forward.__qualname__ = f"{self.name}.forward[{getattr(fn, '__qualname__', fn)}]"
        return forward

    def _backward_kernel(self, fn: Callable[..., Any]) -> Callable[..., None]:
        kind, arity, name, scalar = self._grad_kind, self.arity, self.name, self._scalar is not None

        def backward(
            attrs: Params, op_ctx: OpContext, inputs: list, req: list, outputs: list
        ) -> None:
            if all(r is OpReqType.NULL for r in req):
                return
            env = _env(attrs, op_ctx, scalar)
            out_grad, rest = inputs[0], list(inputs[1:])
            grads = fn(out_grad, env) if kind is GradKind.HEAD_ONLY else fn(out_grad, *rest, env)
            if arity == 1:
                grads = [grads]
            elif not isinstance(grads, (list, tuple)) or len(grads) != 2:
                raise OperatorError(
                    f"the gradient function of {name!r} must return "
                    f"(lhs_grad, rhs_grad), got {type(grads).__name__}"
                )
            for out, r, value in zip(outputs, req, grads, strict=True):
                assign(out, r, value)

        backward.__qualname__ = f"{self.name}.backward[{getattr(fn, '__qualname__', fn)}]"
        return backward

    def build(self) -> tuple[Op, ...]:
        """The records: ``(forward, _backward_<name>)``, or ``(forward,)`` without a gradient."""
        if not self._functions:
            raise self._fail(
                "no function; add .set_function(fn) with fn(src, env) -> result"
                + (" (fn(lhs, rhs, env) for a binary op)" if self.arity == 2 else "")
            )
        if self._gradients and self._gradient_rule is not None:
            raise self._fail(
                "both a gradient function and set_no_gradient/set_zero_gradient; keep one"
            )
        builder = (
            OpBuilder(self.name)
            .describe(self._description)
            .set_params(self._params())
            .set_num_inputs(self.arity)
            .set_num_outputs(1)
            .set_input_names(list(self._input_names))
            .set_infer_shape(self._infer_shape())
            .set_inplace([(0, 0)] if self._inplace else [])
            .set_resources(self._resources)
            .set_aliases(*self._aliases)
        )
        for device, fn in self._functions.items():
            builder.set_compute(self._forward_kernel(fn), device=device)
        if self._domain is not None:
            builder.set_domain(self._domain)
        if not self._gradients:
            if self._gradient_rule is not None:
                builder.set_gradient(self._gradient_rule)
            return (builder.build(),)
        forward = builder.set_gradient(f"_backward_{self.name}", uses=self._grad_kind.uses).build()
        backward = (
            OpBuilder.backward_for(forward)
            .set_inplace([(0, 0)] if self._grad_inplace else [])
            .set_resources(self._resources)
        )
        for device, fn in self._gradients.items():
            backward.set_compute(self._backward_kernel(fn), device=device)
        return forward, backward.build()
