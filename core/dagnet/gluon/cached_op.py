"""What a hybridized block runs: its traced symbol bound once per input signature and
run through dagnet's planned executor (MXNet's ``CachedOp``).

A call outside ``autograd.record()`` copies the data into a bound executor, runs its
forward pass and returns copies of the outputs.  Inside ``record()`` the whole graph
is one recorded node (an :class:`autograd.Function`) whose gradient runs the
executor's backward pass, so a hybridized block trains exactly as its imperative
run does; a parameter's gradient that is all its variable gets is written by that
pass straight into the parameter's ``.grad``.  A small graph (no more operators than
the ``inline_limit`` flag, default 2, and no ``static_alloc``) is inlined instead, as in
MXNet: a recorded call runs its operators one by one, each recorded on its own.
Executors are kept per signature
(shapes, dtypes, context, and the parameter arrays they are bound to); an executor
whose forward pass awaits its backward pass is not lent to another call until that
backward ran or its recorded node died.  The first time a call passes the very data
arrays the signature's previous call passed, an executor is bound to those arrays
themselves (it takes the place of a free one) and serves the later calls with them
without copying them in, as MXNet's static graph keeps its prepared operators while
the inputs stay the same; it reads them as they are when it runs, as an imperative
call would.  Calls with other arrays copy theirs into an executor's own.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Sequence
from typing import Any

from .. import autograd
from ..ndarray import NDArray
from ..runtime import in_graph
from ._errors import GluonValueError

__all__ = ["CachedOp"]


class _Bound:
    """One executor and whether a recorded call still needs its state."""

    __slots__ = ("executor", "busy", "generation", "data_arrays", "grad_of", "arg_of",
                 "own_grads")

    def __init__(self, executor: Any, data_arrays: list[NDArray], grad_of: list[Any],
                 arg_of: list[int | None]):
        self.executor = executor
        self.busy = False
        self.generation = 0  # how many calls it served: a recorded call's state is current
        self.data_arrays = data_arrays
        self.grad_of = grad_of  # per differentiated input: the executor's gradient array
        self.arg_of = arg_of  # per differentiated input: its position among the arguments
        self.own_grads = list(executor.grad_arrays)


class CachedOp:
    """A symbol run as one operation on NDArrays: ``op(*data, *params)``.

    ``data_names`` name the symbol's data inputs, ``param_names`` its parameters (both
    arguments and auxiliary states); a call passes the arrays in that order.
    ``static_alloc`` and ``static_shape`` are accepted as in MXNet: dagnet always keeps
    the memory of a signature's executor between calls.  ``inline_limit`` (default 2)
    is the most operators a graph may have to be inlined into a recording; with
    ``static_alloc`` no graph is."""

    def __init__(self, sym: Any, data_names: Sequence[str], param_names: Sequence[str],
                 flags: Sequence[tuple[str, Any]] = ()):
        self.symbol = sym
        self.data_names = list(data_names)
        self.param_names = list(param_names)
        self.flags = dict(flags)
        self._arg_names = sym.list_arguments()
        self._aux_names = sym.list_auxiliary_states()
        known = set(self.data_names) | set(self.param_names)
        missing = [n for n in self._arg_names + self._aux_names if n not in known]
        if missing:
            raise GluonValueError(f"CachedOp: the symbol's inputs {missing} are neither data "
                                  f"nor parameters; name every input in data_names or "
                                  f"param_names")
        self._aux_set = set(self._aux_names)
        self._executors: dict[tuple, list[_Bound]] = {}
        # per signature: the executor bound to the caller's own data arrays, and the data
        # arrays of the last call (when they come again, such an executor is bound)
        self._direct: dict[tuple, _Bound] = {}
        self._last_data: dict[tuple, list[NDArray]] = {}
        self._steps = _InlineSteps(sym)
        self.inlined = (not self.flags.get("static_alloc", False)
                        and self._steps.num_ops <= self.flags.get("inline_limit", 2))

    def __call__(self, *arrays: NDArray) -> list[NDArray]:
        count = len(self.data_names) + len(self.param_names)
        if len(arrays) != count:
            raise GluonValueError(f"CachedOp: expected {count} arrays ({len(self.data_names)} "
                                  f"data, {len(self.param_names)} parameters), got "
                                  f"{len(arrays)}")
        for name, array in zip(self.data_names + self.param_names, arrays):
            if not isinstance(array, NDArray):
                raise GluonValueError(f"CachedOp: input {name!r} must be an NDArray, got "
                                      f"{type(array).__name__}")
        data = list(arrays[:len(self.data_names)])
        params = dict(zip(self.param_names, arrays[len(self.data_names):]))
        recording = autograd.is_recording()
        if recording and self.inlined:
            values = dict(zip(self.data_names, data))
            values.update(params)
            return self._steps.run(values, arrays[0].context if arrays else None)
        # inputs the recorded node differentiates: data in a graph, trainable parameters
        needs_grad = tuple(recording and in_graph(a) for a in data) + tuple(
            recording and name not in self._aux_set and in_graph(params[name])
            for name in self.param_names)
        bound = self._acquire(data, params, needs_grad)
        if not recording or not any(needs_grad):
            try:
                return self._forward(bound, data)
            finally:
                bound.busy = False
        inputs = data + [params[n] for n in self.param_names if n not in self._aux_set]
        function = _GraphFunction(self, bound)
        outputs = function(*inputs)
        return [outputs] if isinstance(outputs, NDArray) else list(outputs)

    def _forward(self, bound: _Bound, data: list[NDArray]) -> list[NDArray]:
        for source, target in zip(data, bound.data_arrays):
            if source is not target:
                source.copyto(target)
        outputs = bound.executor.forward(is_train=autograd.is_training())
        return [out.copy() for out in outputs]

    def _acquire(self, data: list[NDArray], params: dict[str, NDArray],
                 needs_grad: tuple[bool, ...]) -> _Bound:
        ctx = data[0].context if data else next(iter(params.values())).context
        key = (ctx, needs_grad,
               tuple((a.shape, a.dtype) for a in data),
               tuple(id(params[n]) for n in self.param_names))
        pool = self._executors.get(key)
        if pool is None:  # new, or parameters changed arrays: forget executors of the old ones
            for table in (self._executors, self._direct, self._last_data):
                for old in [k for k in table if k[:3] == key[:3]]:
                    del table[old]
            pool = self._executors[key] = []
        direct = self._direct.get(key)
        if direct is not None and not _same(direct.data_arrays, data):
            direct = None
        elif direct is None and data and _same(self._last_data.get(key, ()), data) \
                and self._bindable(ctx, data):
            free = next((bound for bound in pool if not bound.busy), None)
            if free is not None:  # the executor bound to the data takes its place
                pool.remove(free)
            direct = self._direct[key] = self._bind(ctx, data, params, needs_grad,
                                                    bind_data=True)
        self._last_data[key] = data
        if direct is not None and not direct.busy:
            return _lend(direct)
        for bound in pool:
            if not bound.busy:
                return _lend(bound)
        bound = self._bind(ctx, data, params, needs_grad)
        pool.append(bound)
        return _lend(bound)

    @staticmethod
    def _bindable(ctx: Any, data: list[NDArray]) -> bool:
        """Whether an executor can read the data arrays themselves: dense, on its
        device, and no array given twice."""
        return all(a.stype == "default" and a.context == ctx for a in data) \
            and len({id(a) for a in data}) == len(data)

    def _bind(self, ctx: Any, data: list[NDArray], params: dict[str, NDArray],
              needs_grad: tuple[bool, ...], bind_data: bool = False) -> _Bound:
        """An executor bound to the parameters and, with ``bind_data``, to the data arrays
        themselves; without, to arrays of its own that calls copy the data into."""
        from .. import ndarray

        data_arrays = list(data) if bind_data else [
            ndarray.zeros(a.shape, ctx=ctx, dtype=a.dtype) for a in data]
        values = dict(zip(self.data_names, data_arrays))
        values.update(params)
        wants = dict(zip(self.data_names + [n for n in self.param_names
                                            if n not in self._aux_set], needs_grad))
        args = {n: values[n] for n in self._arg_names}
        grads = {n: ndarray.zeros(values[n].shape, ctx=ctx, dtype=values[n].dtype)
                 for n in self._arg_names if wants.get(n)}
        reqs = {n: "write" if n in grads else "null" for n in self._arg_names}
        aux = {n: values[n] for n in self._aux_names}
        executor = self.symbol.bind(ctx, args, args_grad=grads or None, grad_req=reqs,
                                    aux_states=aux)
        inputs = self.data_names + [n for n in self.param_names if n not in self._aux_set]
        grad_of = [grads.get(n) if n in self._arg_names else None for n in inputs]
        arg_of = [self._arg_names.index(n) if n in self._arg_names else None for n in inputs]
        return _Bound(executor, data_arrays, grad_of, arg_of)


class _InlineSteps:
    """A graph as the operator calls it makes, in order (its symbol JSON's nodes), to run
    them one by one on NDArrays so that autograd records each: MXNet's inlining."""

    def __init__(self, sym: Any):
        graph = json.loads(sym.tojson())
        self._nodes = graph["nodes"]
        self._heads = [(node, index) for node, index, *_ in graph["heads"]]
        self.num_ops = sum(node["op"] != "null" for node in self._nodes)

    def run(self, values: dict[str, NDArray], ctx: Any) -> list[NDArray]:
        """The graph's outputs from its inputs ``values`` (by name); ``ctx`` places an
        operator without inputs."""
        from .. import ndarray

        outputs: list[list[NDArray]] = []
        for node in self._nodes:
            if node["op"] == "null":
                outputs.append([values[node["name"]]])
                continue
            params = {k: v for k, v in node.get("attrs", {}).items() if not k.startswith("__")}
            if "subgraphs" in node:  # control flow and fused nodes keep theirs beside attrs
                params["subgraphs"] = json.dumps(node["subgraphs"])
            inputs = [outputs[source][index] for source, index, *_ in node["inputs"]]
            result = ndarray.invoke(node["op"], inputs, params, ctx=ctx)
            outputs.append(result if isinstance(result, list) else [result])
        return [outputs[node][index] for node, index in self._heads]


class _GraphFunction(autograd.Function):
    """The recorded node of one call: forward runs the executor, backward its backward."""

    graph_op_name = "_CachedOp"

    def __init__(self, op: CachedOp, bound: _Bound):
        super().__init__()
        self._op = op
        self._bound = bound
        self._generation = bound.generation
        self._finalizer = weakref.finalize(self, _release, bound)
        self._input_meta: list[tuple] = []

    def forward(self, *inputs: NDArray) -> Any:
        outputs = self._op._forward(self._bound, list(inputs[:len(self._op.data_names)]))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def backward(self, *output_grads: NDArray) -> Any:
        count = len(self._input_meta)
        results = self._backward(list(output_grads), [None] * count, [True] * count)
        return results[0] if len(results) == 1 else tuple(results)

    def gradients_into(self, node: Any, head_grads: list[NDArray],
                       targets: list[tuple[NDArray, str] | None],
                       needed: list[bool]) -> list[NDArray | None]:
        """The executor's backward pass writes a parameter's gradient straight into its
        ``.grad`` when that is all the parameter gets, as MXNet's cached graph does."""
        return self._backward(head_grads, targets, needed)

    def _backward(self, output_grads: list[NDArray], targets: list[tuple[NDArray, str] | None],
                  needed: list[bool]) -> list[NDArray | None]:
        from .. import ndarray

        bound = self._bound
        if bound.generation != self._generation:
            raise GluonValueError("this recorded call of a hybridized block cannot be "
                                  "differentiated any more: its executor has run another call "
                                  "since; run backward before calling the block again")
        into = list(bound.own_grads)
        written = [False] * len(targets)
        for position, target in enumerate(targets):
            # the executor writes (grad_req 'write'): it can take a target that is written
            if target is not None and target[1] == "write" and bound.grad_of[position] is not None:
                into[bound.arg_of[position]] = target[0]
                written[position] = True
        bound.executor.set_grad_arrays(into)
        bound.executor.backward(out_grads=output_grads, is_train=True)
        # the executor's own arrays are overwritten by its next backward pass: hand out copies
        results = [None if done or not wanted else grad.copy() if grad is not None else
                   ndarray.zeros(shape, ctx=ctx, dtype=dtype)
                   for done, wanted, grad, (shape, ctx, dtype)
                   in zip(written, needed, bound.grad_of, self._input_meta)]
        # free for the next call; a second backward (retain_graph) works until one comes
        bound.busy = False
        return results

    def __call__(self, *inputs: NDArray) -> Any:
        self._input_meta = [(a.shape, a.context, a.dtype) for a in inputs]
        return super().__call__(*inputs)


def _release(bound: _Bound) -> None:
    bound.busy = False


def _lend(bound: _Bound) -> _Bound:
    bound.busy = True
    bound.generation += 1
    return bound


def _same(arrays: Sequence[NDArray], others: Sequence[NDArray]) -> bool:
    """Whether two lists hold the very same array objects."""
    return len(arrays) == len(others) and all(a is b for a, b in zip(arrays, others))
