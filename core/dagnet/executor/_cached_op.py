"""``mx.nd.CachedOp``: a symbol called like an operator on NDArrays (MXNet's ``CachedOp``).

``op = CachedOp(sym)`` then ``op(*arrays)`` with one array per ``sym.list_inputs()``
(arguments and auxiliary states, in that order).  Each call runs the symbol through a
bound :class:`Executor`, kept per input signature (context, shapes, dtypes, and which
inputs need a gradient), so the graph is planned once and only the values are copied
in.  Inside ``autograd.record()`` a call with an input in a graph is one recorded node
whose gradient runs the executor's backward pass; auxiliary states (BatchNorm's moving
statistics) are updated in place in training mode, as the operator would.  An executor
whose forward pass a recorded call still needs is not lent to another call until that
call's gradient ran (a second ``backward(retain_graph=True)`` works until the next
call) or its recorded node died.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from .. import autograd
from .._errors import DagnetError
from ..ndarray import NDArray, zeros
from ..runtime import in_graph

__all__ = ["CachedOp", "CachedOpError"]

# MXNet's CachedOpConfig: dagnet plans memory and bulks steps by its own config, so
# these are accepted for compatibility and kept in ``flags``.
_FLAGS = {
    "static_alloc": bool, "static_shape": bool, "inline_limit": int,
    "forward_bulk_size": int, "backward_bulk_size": int, "data_indices": tuple,
    "param_indices": tuple, "subgraph": str, "is_dynamic": bool,
}


class CachedOpError(DagnetError, ValueError):
    """A CachedOp built or called with arguments it cannot take."""


def _flag(name: str, value: Any) -> Any:
    kind = _FLAGS[name]
    if kind is bool and isinstance(value, str):
        lowered = value.strip().lower()
        if lowered not in ("0", "1", "true", "false"):
            raise CachedOpError(f"CachedOp: flag {name!r} must be a boolean, got {value!r}")
        return lowered in ("1", "true")
    if kind is tuple and isinstance(value, str):
        text = value.strip().strip("()[]")
        return tuple(int(v) for v in text.split(",") if v.strip())
    if kind is tuple:
        return tuple(int(v) for v in value)
    return kind(value)


class _Bound:
    """One executor, its input arrays, and whether a recorded call still needs it."""

    __slots__ = ("executor", "busy", "generation", "args", "aux", "grad_of")

    def __init__(self, executor: Any, args: list[NDArray], aux: list[NDArray],
                 grad_of: list[NDArray | None]):
        self.executor = executor
        self.busy = False
        self.generation = 0
        self.args = args
        self.aux = aux
        self.grad_of = grad_of


class CachedOp:
    """A symbol run as one operation: ``CachedOp(sym)(*arrays, out=None)``.

    The arrays are the symbol's inputs in ``sym.list_inputs()`` order.  Returns one
    NDArray for a symbol of one output, else a list; with ``out`` (an NDArray or a
    list) the results are written there and ``out`` is returned.  ``flags`` are
    MXNet's ``(name, value)`` pairs (``static_alloc``, ``static_shape``, ...): accepted
    and checked, though dagnet always keeps a signature's executor and memory plan.
    """

    def __init__(self, sym: Any, flags: Sequence[tuple[str, Any]] = ()):
        self.symbol = sym
        self.flags: dict[str, Any] = {}
        for pair in flags:
            try:
                name, value = pair
            except (TypeError, ValueError):
                raise CachedOpError(f"CachedOp: flags must be (name, value) pairs, got "
                                    f"{pair!r}") from None
            if name not in _FLAGS:
                raise CachedOpError(f"CachedOp: unknown flag {name!r}; the flags are "
                                    f"{', '.join(_FLAGS)}")
            self.flags[name] = _flag(name, value)
        self._input_names = sym.list_inputs()
        self._arg_names = sym.list_arguments()
        aux_names = set(sym.list_auxiliary_states())
        self._aux_positions = [i for i, n in enumerate(self._input_names) if n in aux_names]
        self._arg_positions = [i for i, n in enumerate(self._input_names) if n not in aux_names]
        self._executors: dict[tuple, list[_Bound]] = {}

    @property
    def num_inputs(self) -> int:
        """How many arrays a call takes."""
        return len(self._input_names)

    def __call__(self, *args: NDArray, out: Any = None, default_ctx: Any = None) -> Any:
        if len(args) != len(self._input_names):
            raise CachedOpError(f"CachedOp: expected {len(self._input_names)} input arrays "
                                f"({', '.join(self._input_names)}), got {len(args)}")
        for name, array in zip(self._input_names, args):
            if not isinstance(array, NDArray):
                raise CachedOpError(f"CachedOp: input {name!r} must be an NDArray, got "
                                    f"{type(array).__name__}")
        recording = autograd.is_recording()
        arg_inputs = [args[i] for i in self._arg_positions]
        aux_inputs = [args[i] for i in self._aux_positions]
        needs_grad = tuple(recording and in_graph(a) for a in arg_inputs)
        ctx = args[0].context if args else default_ctx
        bound = self._acquire(ctx, arg_inputs, aux_inputs, needs_grad)
        if any(needs_grad):
            function = _GraphFunction(self, bound, aux_inputs)
            result = function(*arg_inputs)
            outputs = [result] if isinstance(result, NDArray) else list(result)
        else:
            try:
                outputs = self._forward(bound, arg_inputs, aux_inputs)
            finally:
                bound.busy = False
        if out is not None:
            targets = [out] if isinstance(out, NDArray) else list(out)
            if len(targets) != len(outputs):
                raise CachedOpError(f"CachedOp: out has {len(targets)} array(s) for "
                                    f"{len(outputs)} output(s)")
            for value, target in zip(outputs, targets):
                value.copyto(target)
            return out
        return outputs[0] if len(outputs) == 1 else outputs

    def _forward(self, bound: _Bound, arg_inputs: list[NDArray],
                 aux_inputs: list[NDArray]) -> list[NDArray]:
        for source, target in zip(arg_inputs, bound.args):
            source.copyto(target)
        for source, target in zip(aux_inputs, bound.aux):
            source.copyto(target)
        is_train = autograd.is_training()
        outputs = bound.executor.forward(is_train=is_train)
        if is_train:  # the operators updated the auxiliary states: hand them back
            for source, target in zip(bound.aux, aux_inputs):
                source.copyto(target)
        return [o.copy() for o in outputs]

    def _acquire(self, ctx: Any, arg_inputs: list[NDArray], aux_inputs: list[NDArray],
                 needs_grad: tuple[bool, ...]) -> _Bound:
        key = (ctx, needs_grad, tuple((a.shape, a.dtype) for a in arg_inputs),
               tuple((a.shape, a.dtype) for a in aux_inputs))
        pool = self._executors.setdefault(key, [])
        for bound in pool:
            if not bound.busy:
                bound.busy = True
                bound.generation += 1
                return bound
        bound = self._bind(ctx, arg_inputs, aux_inputs, needs_grad)
        bound.busy = True
        pool.append(bound)
        return bound

    def _bind(self, ctx: Any, arg_inputs: list[NDArray], aux_inputs: list[NDArray],
              needs_grad: tuple[bool, ...]) -> _Bound:
        args = [zeros(a.shape, ctx=ctx, dtype=a.dtype) for a in arg_inputs]
        aux = [zeros(a.shape, ctx=ctx, dtype=a.dtype) for a in aux_inputs]
        grads = [zeros(a.shape, ctx=ctx, dtype=a.dtype) if wanted else None
                 for a, wanted in zip(arg_inputs, needs_grad)]
        reqs = ["write" if wanted else "null" for wanted in needs_grad]
        executor = self.symbol.bind(ctx, args, args_grad=grads, grad_req=reqs, aux_states=aux)
        return _Bound(executor, args, aux, grads)


class _GraphFunction(autograd.Function):
    """The recorded node of one call: forward runs the executor, backward its backward."""

    graph_op_name = "_CachedOp"

    def __init__(self, op: CachedOp, bound: _Bound, aux_inputs: list[NDArray]):
        super().__init__()
        self._op = op
        self._bound = bound
        self._aux_inputs = aux_inputs
        self._generation = bound.generation
        self._finalizer = weakref.finalize(self, _release, bound)
        self._input_meta: list[tuple] = []

    def forward(self, *inputs: NDArray) -> Any:
        self._input_meta = [(a.shape, a.context, a.dtype) for a in inputs]
        outputs = self._op._forward(self._bound, list(inputs), self._aux_inputs)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def backward(self, *output_grads: NDArray) -> Any:
        bound = self._bound
        if bound.generation != self._generation:
            raise CachedOpError("CachedOp: this recorded call cannot be differentiated any "
                                "more, its executor has run another call since; run backward "
                                "before calling the CachedOp again with the same signature")
        bound.executor.backward(out_grads=list(output_grads), is_train=True)
        results = [grad.copy() if grad is not None else zeros(shape, ctx=ctx, dtype=dtype)
                   for grad, (shape, ctx, dtype) in zip(bound.grad_of, self._input_meta)]
        bound.busy = False  # a retained graph's second backward works until the next call
        return results[0] if len(results) == 1 else tuple(results)


def _release(bound: _Bound) -> None:
    bound.busy = False
