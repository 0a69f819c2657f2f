"""The one place an operator's kernel meets device arrays.

Every kernel run -- an imperative call, an executor step, a backward
operator of autograd, the operator conformance suite -- is a function made
by :func:`kernel_function`, pushed to the engine with the variables it reads
and writes (the executor bundles such functions into engine operators), its
resources requested by :func:`request_resources`.  The function enters the engine's
stream, builds the :class:`~dagnet.operator.OpContext` (training flag, run
context, requested resources, ``xp``) and calls the kernel with MXNet's
``FCompute`` signature ``(attrs, ctx, inputs, req, outputs)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import resource as _resource
from ..operator import OpContext
from ._stream import stream_scope

__all__ = ["kernel_function", "request_resources"]


def request_resources(ctx: Any, requests: Sequence[Any], writes: list[Any]) -> list[Any]:
    """The resources (random generator, temp space) ``requests`` ask for on ``ctx``.

    Each resource's engine variable is appended to ``writes``: a kernel using a
    resource mutates it, so users of one resource are serialized.
    """
    requested = [_resource.request(ctx, r) for r in requests]
    writes.extend(r.var for r in requested)
    return requested


def kernel_function(kernel: Any, attrs: Any, is_train: bool, requested: Sequence[Any], xp: Any,
                    inputs: list, reqs: list, outputs: list,
                    aside: Sequence[int] | None = None, state: Any = None
                    ) -> Callable[[Any], None]:
    """The engine function that runs ``kernel`` on device arrays ``inputs`` into ``outputs``.

    ``aside`` lists outputs that overlap an input without being the very same
    view: they are computed into temporaries and copied in afterwards, so the
    kernel never reads what it already wrote.  ``state`` is the node's
    :class:`~dagnet.operator.NodeState` (an executor's steps), handed to the kernel; a
    run that offers no replay leaves the state's ``replay`` None.
    """
    if aside:
        def run_aside(run_ctx: Any) -> None:
            if state is not None:
                state.runs += 1
            with stream_scope(run_ctx):
                targets = list(outputs)
                for index in aside:
                    targets[index] = xp.empty(outputs[index].shape, outputs[index].dtype)
                kernel(attrs, OpContext(is_train, run_ctx, requested, xp, state), inputs, reqs,
                       targets)
                if state is not None:
                    state.replay = None  # it ran on temporaries: not a run to replay
                for index in aside:
                    outputs[index][...] = targets[index]

        return run_aside

    def run(run_ctx: Any) -> None:
        if state is not None:
            state.runs += 1
            state.replay = None  # the kernel offers this run again, or nothing
        if run_ctx is None or run_ctx.stream is None:
            kernel(attrs, OpContext(is_train, run_ctx, requested, xp, state), inputs, reqs,
                   outputs)
        else:
            with run_ctx.stream:
                kernel(attrs, OpContext(is_train, run_ctx, requested, xp, state), inputs, reqs,
                       outputs)

    return run

