"""The operator record: every way of defining an operator produces one :class:`Op`.

Like an nnvm op, a record holds attributes: inputs, outputs and auxiliary
states with their names, a parameter schema, shape and type inference
(both ways), compute functions per device type or one written against the
array module ``xp`` for all, a gradient rule, in-place options, resource
requests, the write modes the compute honours, a description, and the
domain the conformance suite samples from.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .._errors import DTypeError, OperatorError, ShapeError
from ..resource import ResourceRequest
from ..util import dim_is_known
from ._param import NoParams, Params
from ._req import ALL_REQS, OpReqType

__all__ = [
    "Op",
    "OpContext",
    "NodeState",
    "Replay",
    "Gradient",
    "ComposedGradient",
    "NoGradient",
    "ZeroGradient",
    "Domain",
    "Case",
    "ShapeList",
    "TypeList",
    "XP",
    "elemwise_shape",
    "elemwise_type",
    "merge_shape",
    "merge_dtype",
    "shape_is_known",
]

XP = "xp"  # the compute key for a kernel written once against the array module

Shape = tuple | None
ShapeList = list  # list[tuple[int, ...] | None]; None or a 0 in a dim means unknown
TypeList = list  # list[np.dtype | None]


class OpContext:
    """What a compute function receives besides its arrays (MXNet's ``OpContext``).

    ``is_train``: training mode; ``run_ctx``: the engine's RunContext (device,
    stream); ``requested``: the resources the op asked for, in order (a sequence
    the kernel reads, not changes); ``xp``: the array module of the device;
    ``state``: the node's :class:`NodeState` when the kernel runs a node of a bound
    graph, None for an imperative call.
    """

    __slots__ = ("is_train", "run_ctx", "requested", "xp", "state")

    def __init__(self, is_train: bool, run_ctx: Any, requested: Sequence[Any], xp: Any,
                 state: NodeState | None = None):
        self.is_train = is_train
        self.run_ctx = run_ctx
        self.requested = requested
        self.xp = xp
        self.state = state

    @property
    def ctx(self) -> Any:
        """The device the function runs on."""
        return self.run_ctx.ctx if self.run_ctx is not None else None


class Replay(NamedTuple):
    """A kernel's run on a node of a bound graph, offered as calls that redo it exactly
    (see :meth:`NodeState.offer_replay`).

    ``calls``: functions of no arguments, run in order; each returns None or a status, a
    non-zero status meaning it failed, which ``check(status, call)`` turns into the
    kernel's own exception.  ``versions``: the inputs the run depends on besides the
    arrays it reads and writes, as (position, :meth:`NodeState.versions` of it then);
    ``scope()``: what else it depends on (the thread, its buffers, the configuration it
    read), equal to ``expected`` while the calls hold."""

    calls: tuple[Callable[[], Any], ...]
    versions: tuple[tuple[int, int], ...]
    scope: Callable[[], Hashable]
    expected: Hashable
    check: Callable[[int, Callable[[], Any]], None]


class NodeState:
    """What one node of a bound graph keeps from one run of its kernel to the next
    (MXNet's per-node operator state): ``cache``, a dict the kernel fills as it likes,
    and :meth:`versions` of the node's inputs, so that a kernel deriving something from
    inputs that rarely change (a convolution's weights, folded and reordered) derives it
    again only after they were written.

    ``replay`` is what the last run offered (:meth:`offer_replay`), None when it offered
    nothing: the kernel function clears it before each run."""

    __slots__ = ("cache", "runs", "replay", "_vars", "_own")

    def __init__(self, input_vars: Sequence[Any], mutated: Sequence[int] = ()):
        self.cache: dict[Any, Any] = {}
        self.runs = 0  # counted by the kernel function, before each run of the kernel
        self.replay: Replay | None = None
        self._vars = tuple(input_vars)
        self._own = frozenset(mutated)

    def versions(self, positions: Sequence[int]) -> tuple[int, ...]:
        """The engine versions of the inputs at ``positions``, as the running kernel sees
        them: equal to an earlier run's exactly when nothing else wrote them since (an
        input the node itself mutates, an auxiliary state, is written by each of its own
        runs; those writes are not counted)."""
        inputs, own, runs = self._vars, self._own, self.runs
        return tuple(inputs[i].version - (runs if i in own else 0) for i in positions)

    def offer_replay(self, calls: Sequence[Callable[[], Any]], positions: Sequence[int],
                     scope: Callable[[], Hashable],
                     check: Callable[[int, Callable[[], Any]], None]) -> None:
        """Offer the running kernel's run as ``calls`` that redo it exactly: the same
        work on the same arrays, with nothing else to do (see :class:`Replay`).  They
        hold while the inputs at ``positions`` keep their :meth:`versions` and
        ``scope()`` returns what it returns now.  An executor may run them instead of
        the kernel, for as long as they hold, sparing the kernel's own checks."""
        self.replay = Replay(tuple(calls), tuple(zip(positions, self.versions(positions))),
                             scope, scope(), check)

    def replay_checks(self) -> list[tuple[Any, int, NodeState | None]]:
        """What :attr:`replay`'s versions come to: (input variable, version, state), the
        state given where the input is one the node mutates, whose version then stands
        less the node's own runs (as in :meth:`versions`)."""
        inputs, own = self._vars, self._own
        return [(inputs[i], version, self if i in own else None)
                for i, version in self.replay.versions]


@dataclass(frozen=True)
class Gradient:
    """The gradient rule: the backward operator and what it reads.

    The backward op ``backward`` (named ``_backward_<name>``) receives, in
    this order, the arrays named in ``uses``: ``"out_grad"`` (one per
    visible output), ``"in_data"`` (every input, auxiliary states
    included), ``"out_data"`` (every output, or only the outputs
    ``out_data`` lists, in that order); it produces one gradient per
    non-auxiliary input.  ``uses`` is also the op's backward dependency
    declaration (MXNet's ``DeclareBackwardDependency`` / ``ElemwiseGradUse*``):
    arrays not listed may be freed after the forward pass, or overwritten by
    an in-place operator that reads them (BatchNorm's gradient reads its mean
    and variance, not its output, which the ReLU after it may then reuse).
    """

    backward: str
    uses: tuple[str, ...] = ("out_grad",)
    out_data: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        bad = [u for u in self.uses if u not in ("out_grad", "in_data", "out_data")]
        if bad:
            raise ValueError(
                f"Gradient.uses items must be out_grad, in_data or out_data, got {bad}"
            )
        if self.out_data is not None and "out_data" not in self.uses:
            raise ValueError("Gradient.out_data lists outputs read by the gradient; name "
                             "'out_data' in uses too")


@dataclass(frozen=True)
class ComposedGradient:
    """A gradient rule written as calls of registered operators (nnvm's ``FGradient``
    building nodes), so the gradient is itself differentiable: how backward operators
    (``_backward_<name>``) declare their own gradients, for higher-order gradients.

    ``compose(F, attrs, out_grads, inputs, outputs, needed)`` returns one gradient (or
    None: zero) per input that takes a gradient (every input that is not mutated), in
    input order.  ``F`` is an operator namespace: ``F.<op>(*arrays, **params)`` calls a
    registered operator; ``F.call(name, arrays, attrs, like)`` calls one whose outputs take
    the shapes and dtypes of the arrays ``like`` (backward operators infer no shapes) with
    parsed parameters ``attrs``.  ``out_grads`` are the head gradients of the visible
    outputs; ``inputs``/``outputs`` the operator's inputs and outputs (None unless ``uses``
    names them); ``needed[i]`` tells whether gradient ``i`` is used (others may be None).
    ``compose`` raises ``NotImplementedError`` (with the reason) for parameters it has no
    gradient for (max pooling); autograd reports it as a ``HigherOrderGradientError``.
    """

    compose: Callable[..., Sequence[Any]]
    uses: tuple[str, ...] = ("out_grad", "in_data")

    def __post_init__(self) -> None:
        bad = [u for u in self.uses if u not in ("out_grad", "in_data", "out_data")]
        if bad:
            raise ValueError(
                f"ComposedGradient.uses items must be out_grad, in_data or out_data, got {bad}"
            )
        if not callable(self.compose):
            raise ValueError(f"ComposedGradient.compose must be callable, got {self.compose!r}")


@dataclass(frozen=True)
class NoGradient:
    """The op is not differentiable; ``reason`` says why (shown when one is asked for)."""

    reason: str


@dataclass(frozen=True)
class ZeroGradient:
    """The gradient exists and is zero everywhere (comparisons, BlockGrad, argmax)."""


@dataclass
class Case:
    """One sampled test case: input arrays (numpy) and parameters."""

    inputs: list[np.ndarray]
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class Domain:
    """Where the conformance suite may sample an operator, and what to compare with.

    ``sample(draw)`` uses a hypothesis ``draw`` to return a valid
    :class:`Case`; ``reference(params, *inputs)`` is a numpy implementation
    returning the outputs (an array or a list); ``differentiable`` are the
    input indices whose gradient is checked numerically (None: every
    floating input that is not an auxiliary state); tolerances are for
    float64 forward and gradient checks.
    """

    sample: Callable[[Callable[[Any], Any]], Case]
    reference: Callable[..., Any] | None = None
    differentiable: tuple[int, ...] | None = None
    rtol: float = 1e-5
    atol: float = 1e-7
    grad_rtol: float = 1e-4
    grad_atol: float = 1e-6
    dtypes: tuple[str, ...] = ("float32", "float64")


InferShape = Callable[[Params, ShapeList, ShapeList], tuple[ShapeList, ShapeList]]
InferType = Callable[[Params, TypeList, TypeList], tuple[TypeList, TypeList]]
Compute = Callable[[Params, OpContext, list, list, list], None]


@dataclass
class Op:
    """One registered operator.  Build it with the nnvm-style builder,
    ``OperatorProperty`` classes or SimpleOp; all three produce this record.

    Counts and names may be fixed or functions of the parsed parameters
    (``Concat`` takes ``num_args`` inputs).  ``mutate_inputs`` are the inputs
    the op writes (auxiliary states such as BatchNorm's moving statistics,
    optimizer states); ``num_visible_outputs`` hides extra outputs from the
    user as MXNet does.
    """

    name: str
    description: str = ""
    params: type[Params] = NoParams
    num_inputs: int | Callable[[Params], int] = 1
    num_outputs: int | Callable[[Params], int] = 1
    num_visible_outputs: int | Callable[[Params], int] | None = None
    input_names: Sequence[str] | Callable[[Params], Sequence[str]] | None = None
    output_names: Sequence[str] | Callable[[Params], Sequence[str]] | None = None
    mutate_inputs: Sequence[int] | Callable[[Params], Sequence[int]] = ()
    infer_shape: InferShape | None = None
    infer_type: InferType | None = None
    compute: dict[str, Compute] = field(default_factory=dict)
    gradient: Gradient | ComposedGradient | NoGradient | ZeroGradient | None = None
    inplace: Sequence[tuple[int, int]] | Callable[[Params], Sequence[tuple[int, int]]] = ()
    resources: Sequence[ResourceRequest] | Callable[[Params], Sequence[ResourceRequest]] = ()
    supported_req: frozenset[OpReqType] = ALL_REQS
    is_backward: bool = False
    forward_op: str | None = None
    domain: Domain | None = None
    key_var_num_args: str | None = (
        None  # the parameter that counts variadic inputs (Concat: num_args)
    )
    aliases: tuple[str, ...] = ()
    # How a variable feeding an input should be initialized unless it says otherwise:
    # input name -> an initializer's dumps() (LeakyReLU's prelu slope starts at 0.25);
    # composing a symbol sets the variable's ``__init__`` (MXNet's
    # FSetInputVarAttrOnCompose).
    input_init: Mapping[str, str] = field(default_factory=dict)
    # Output shapes from the input *values* (host numpy arrays), for an operator whose
    # output shape depends on them (``boolean_mask``): imperative calls wait for the
    # inputs and ask it; ``infer_shape`` then leaves those outputs unknown, so a symbolic
    # graph holding such an operator cannot bind (as in MXNet 1.x outside np shape).
    value_shapes: Callable[[Params, list[Any]], list[tuple[int, ...]]] | None = None
    # A graph-only operator (no kernel): ``expand(attrs, in_shapes, in_dtypes)`` gives the
    # symbol, over variables ``arg0``, ``arg1`` ... for the inputs, that replaces the node
    # when an executor binds the graph (``mx.sym.np`` calls: their operators depend on
    # the input shapes).
    expand: Callable[[Params, list[Any], list[Any]], Any] | None = None

    # -- attributes as functions of the parameters ------------------------------
    def parse_params(self, kwargs: dict[str, Any]) -> Params:
        """Parse user keyword arguments (Python values or strings)."""
        return self.params.parse(self.name, kwargs)

    @staticmethod
    def _get(value: Any, attrs: Params) -> Any:
        return value(attrs) if callable(value) else value

    def n_inputs(self, attrs: Params) -> int:
        return int(self._get(self.num_inputs, attrs))

    def n_outputs(self, attrs: Params) -> int:
        return int(self._get(self.num_outputs, attrs))

    def n_visible_outputs(self, attrs: Params) -> int:
        if self.num_visible_outputs is None:
            return self.n_outputs(attrs)
        return int(self._get(self.num_visible_outputs, attrs))

    def list_inputs(self, attrs: Params) -> list[str]:
        """Every input name, auxiliary states included (``data``, ``weight``, ...)."""
        names = self._get(self.input_names, attrs)
        count = self.n_inputs(attrs)
        if names is None:
            return ["data"] if count == 1 else [f"arg{i}" for i in range(count)]
        return list(names)

    def list_outputs(self, attrs: Params) -> list[str]:
        names = self._get(self.output_names, attrs)
        count = self.n_outputs(attrs)
        if names is None:
            return ["output"] if count == 1 else [f"output{i}" for i in range(count)]
        return list(names)

    def mutated_inputs(self, attrs: Params) -> list[int]:
        return list(self._get(self.mutate_inputs, attrs))

    def list_arguments(self, attrs: Params) -> list[str]:
        """Input names that are not auxiliary states."""
        mutated = set(self.mutated_inputs(attrs))
        return [n for i, n in enumerate(self.list_inputs(attrs)) if i not in mutated]

    def list_auxiliary_states(self, attrs: Params) -> list[str]:
        names = self.list_inputs(attrs)
        return [names[i] for i in self.mutated_inputs(attrs)]

    def inplace_pairs(self, attrs: Params) -> list[tuple[int, int]]:
        return [tuple(p) for p in self._get(self.inplace, attrs)]

    def resource_requests(self, attrs: Params) -> list[ResourceRequest]:
        return list(self._get(self.resources, attrs))

    # -- inference -----------------------------------------------------------------
    def shapes(
        self, attrs: Params, in_shapes: ShapeList, out_shapes: ShapeList | None = None
    ) -> tuple[ShapeList, ShapeList]:
        """Run shape inference; unknown entries are None or have 0 dims."""
        n_out = self.n_outputs(attrs)
        out_shapes = list(out_shapes) if out_shapes is not None else [None] * n_out
        if self.infer_shape is None:
            raise ShapeError(f"operator {self.name!r} declares no shape inference")
        ins, outs = self.infer_shape(attrs, list(in_shapes), out_shapes)
        return [None if s is None else tuple(int(d) for d in s) for s in ins], [
            None if s is None else tuple(int(d) for d in s) for s in outs
        ]

    def dtypes(
        self, attrs: Params, in_types: TypeList, out_types: TypeList | None = None
    ) -> tuple[TypeList, TypeList]:
        """Run type inference (default: every input and output shares one dtype)."""
        n_out = self.n_outputs(attrs)
        out_types = list(out_types) if out_types is not None else [None] * n_out
        rule = self.infer_type or elemwise_type
        ins, outs = rule(attrs, list(in_types), out_types)
        return [None if t is None else np.dtype(t) for t in ins], [
            None if t is None else np.dtype(t) for t in outs
        ]

    # -- kernels ---------------------------------------------------------------------
    def kernel_for(self, device_type: str) -> Compute:
        """The compute function for ``device_type``: its own, else the ``xp`` one."""
        kernel = self.compute.get(device_type) or self.compute.get(XP)
        if kernel is None:
            have = ", ".join(sorted(self.compute)) or "none"
            raise OperatorError(
                f"operator {self.name!r} has no kernel for device type {device_type!r}; "
                f"it has kernels for: {have}"
            )
        return kernel

    def docstring(self) -> str:
        """The description followed by the parameter documentation (for ``mx.nd.<op>``)."""
        lines = [
            self.description.strip() or f"The {self.name} operator.",
            "",
            "Parameters",
            "----------",
        ]
        for name in self.input_names if isinstance(self.input_names, (list, tuple)) else []:
            lines.append(f"{name} : NDArray\n    input")
        lines.extend(f.doc() for f in self.params.fields().values())
        if isinstance(self.gradient, NoGradient):
            lines.extend(["", f"Not differentiable: {self.gradient.reason}"])
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Op {self.name!r}>"


# -- shared inference rules -----------------------------------------------------------
def shape_is_known(shape: Shape) -> bool:
    """Whether ``shape`` has no unknown part: not None, no negative dimension and, unless
    NumPy shape semantics are on (``mx.np_shape()``), no 0 dimension."""
    return shape is not None and all(dim_is_known(d) for d in shape)


def merge_shape(a: Shape, b: Shape, what: str) -> Shape:
    """Combine two partial shapes into one (an unknown dimension, see
    :func:`shape_is_known`, takes the other's), or raise naming both."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b) or any(dim_is_known(x) and dim_is_known(y) and x != y
                               for x, y in zip(a, b)):
        raise ShapeError(f"{what}: shapes {tuple(a)} and {tuple(b)} do not match")
    return tuple(x if dim_is_known(x) or not dim_is_known(y) else y for x, y in zip(a, b))


def merge_dtype(a: Any, b: Any, what: str) -> Any:
    """Combine two partial dtypes into one, or raise naming both."""
    if a is None:
        return b
    if b is None:
        return a
    if np.dtype(a) != np.dtype(b):
        raise DTypeError(f"{what}: dtypes {np.dtype(a).name} and {np.dtype(b).name} do not match")
    return a


def elemwise_shape(op_name: str) -> InferShape:
    """Every input and output has one shape (MXNet's ``ElemwiseShape``), inferred both ways."""

    def infer(attrs: Params, ins: ShapeList, outs: ShapeList) -> tuple[ShapeList, ShapeList]:
        merged = None
        for i, s in enumerate(ins + outs):
            side, index = ("input", i) if i < len(ins) else ("output", i - len(ins))
            label = f"operator {op_name!r}, {side} {index}"
            merged = merge_shape(merged, s, label)
        return [merged] * len(ins), [merged] * len(outs)

    return infer


def elemwise_type(attrs: Params, ins: TypeList, outs: TypeList) -> tuple[TypeList, TypeList]:
    """Every input and output has one dtype (MXNet's ``ElemwiseType``)."""
    merged = None
    for t in ins + outs:
        merged = merge_dtype(merged, t, "elementwise operator")
    return [merged] * len(ins), [merged] * len(outs)
