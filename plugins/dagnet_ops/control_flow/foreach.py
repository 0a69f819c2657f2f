"""``_foreach``: run a subgraph over the slices of its data inputs along axis 0 (what
``mx.sym.contrib.foreach`` builds).

Inputs are the data arrays, the initial loop states, then what else the subgraph reads
(parameters, values of the enclosing graph); ``in_data_locs``, ``in_state_locs`` and
``remain_locs`` say which subgraph input each one feeds.  The subgraph's first
``num_out_data`` outputs are the step's outputs (stacked along a new axis 0), the rest the
next states (the last ones are outputs too).  A hidden output carries the token of the
executor kept for the backward pass (see :mod:`._subgraph`).

A call runs the loop unrolled for the number of steps its data has, bound once per
signature: the subgraph composed once per step, fed by slices of the data, the states of
the step before, and the same parameter arrays.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from dagnet import ShapeError
from dagnet import symbol as sym
from dagnet.operator import (
    REQUIRED,
    Case,
    Domain,
    Field,
    Params,
    Shape,
    merge_dtype,
    merge_shape,
)

from . import _subgraph as S

__all__ = ["OPS"]


class ForeachParam(Params):
    subgraphs = Field(str, REQUIRED, "the loop body, a JSON list of one symbol graph: its "
                                     "outputs are the step's outputs, then the next states")
    num_args = Field(int, REQUIRED, "the body (1) and the node's inputs: data, states, then "
                                    "the rest", low=1)
    num_outputs = Field(int, REQUIRED, "the body's outputs: step outputs and states", low=0)
    num_out_data = Field(int, REQUIRED, "how many of the body's outputs are step outputs",
                         low=0)
    in_data_locs = Field(Shape, REQUIRED, "the body input each data array feeds")
    in_state_locs = Field(Shape, REQUIRED, "the body input each loop state feeds")
    remain_locs = Field(Shape, REQUIRED, "the body input each remaining input feeds")


class _Layout:
    """A ``_foreach`` node's structure, read once per parameter set."""

    def __init__(self, attrs: ForeachParam):
        self.body = S.subgraphs_of(attrs, 1, "operator '_foreach'")[0]
        self.n_args = attrs.num_args - 1
        self.names = self.body.list_inputs()
        self.n_data = len(attrs.in_data_locs)
        self.n_states = len(attrs.in_state_locs)
        self.n_out = attrs.num_out_data
        locs = list(attrs.in_data_locs) + list(attrs.in_state_locs) + list(attrs.remain_locs)
        if len(locs) != self.n_args or sorted(locs) != list(range(len(self.names))):
            raise ShapeError(f"operator '_foreach': in_data_locs, in_state_locs and remain_locs "
                             f"({locs}) must name each of the body's {len(self.names)} inputs "
                             f"once, one per input of the node ({self.n_args})")
        if attrs.num_outputs != self.n_out + self.n_states or \
                len(self.body.list_outputs()) != attrs.num_outputs:
            raise ShapeError(f"operator '_foreach': the body has "
                             f"{len(self.body.list_outputs())} outputs; num_outputs="
                             f"{attrs.num_outputs} must be num_out_data={self.n_out} plus one "
                             f"per state ({self.n_states})")
        self.body_input = [self.names[loc] for loc in locs]  # per node input
        aux = set(self.body.list_auxiliary_states())
        self.aux_inputs = [j for j, name in enumerate(self.body_input) if name in aux]

    def graph(self, steps: int, one_d: tuple[bool, ...]) -> tuple[Any, list[str]]:
        """The loop unrolled for ``steps`` steps, and its argument name per node input;
        ``one_d`` says which data inputs are 1-D (their slices keep shape ``(1,)``)."""
        names = [f"in{j}" for j in range(len(self.body_input))]
        inputs = [sym.var(n) for n in names]
        slices = [_slices(x, steps, flat) for x, flat in zip(inputs[:self.n_data], one_d)]
        states = inputs[self.n_data:self.n_data + self.n_states]
        shared = {self.body_input[j]: inputs[j]
                  for j in range(self.n_data + self.n_states, len(inputs))}
        outputs: list[list[Any]] = [[] for _ in range(self.n_out)]
        for t in range(steps):
            feed = dict(shared)
            feed.update({self.body_input[i]: slices[i][t] for i in range(self.n_data)})
            feed.update({self.body_input[self.n_data + k]: states[k]
                         for k in range(self.n_states)})
            step = self.body(**feed)
            for i in range(self.n_out):
                outputs[i].append(step[i])
            states = [step[self.n_out + k] for k in range(self.n_states)]
        stacked = [sym.stack(*column, axis=0, num_args=steps) for column in outputs]
        return sym.Group(stacked + states), names


def _slices(data: Any, steps: int, one_d: bool) -> list[Any]:
    """The ``steps`` slices of ``data`` along axis 0: the axis dropped, except for 1-D data,
    whose slices have shape ``(1,)`` (MXNet has no 0-d arrays outside its numpy mode)."""
    if steps == 1:
        return [sym.identity(data) if one_d else sym.squeeze(data, axis=0)]
    pieces = sym.split(data, num_outputs=steps, axis=0, squeeze_axis=not one_d)
    return [pieces[t] for t in range(steps)]


def _slice_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of one step's slice of data of ``shape``, as :func:`_slices` makes it."""
    return (1,) if len(shape) == 1 else tuple(shape[1:])


@functools.lru_cache(maxsize=256)
def _layout(attrs: ForeachParam) -> _Layout:
    return _Layout(attrs)


# -- shapes and dtypes ------------------------------------------------------------------------
def _known(shape: Any) -> bool:
    return shape is not None and len(shape) > 0


def _infer_shape(attrs, ins, outs):
    lay = _layout(attrs)
    n_data, n_states, n_out = lay.n_data, lay.n_states, lay.n_out
    steps = 0
    for shape in list(ins[:n_data]) + list(outs[:n_out]):
        if _known(shape) and shape[0] > 0:
            steps = shape[0]
    given: dict[str, Any] = {}
    one_d = [_known(shape) and len(shape) == 1 for shape in ins[:n_data]]
    for j, shape in enumerate(ins):
        if j < n_data:
            shape = _slice_shape(shape) if _known(shape) else None
        elif j < n_data + n_states and not _known(shape):
            shape = outs[n_out + j - n_data]
        if _known(shape):
            given[lay.body_input[j]] = tuple(shape)
    args, body_outs, aux = lay.body.infer_shape_partial(**given)
    inferred = dict(zip(lay.body.list_arguments(), args))
    inferred.update(zip(lay.body.list_auxiliary_states(), aux))
    new_ins = list(ins)
    for j, name in enumerate(lay.body_input):
        shape = inferred.get(name)
        if not _known(shape):
            continue
        if j < n_data:
            shape = (steps,) if one_d[j] else (steps,) + tuple(shape)
        new_ins[j] = merge_shape(ins[j], tuple(shape), f"operator '_foreach', input {j}")
    new_outs = list(outs)
    for i, shape in enumerate(body_outs):
        if not _known(shape):
            continue
        if i < n_out:
            shape = (steps,) + tuple(shape)
        new_outs[i] = merge_shape(outs[i], tuple(shape), f"operator '_foreach', output {i}")
    for k in range(n_states):  # a state keeps its shape from step to step
        j, o = n_data + k, n_out + k
        merged = merge_shape(new_ins[j], new_outs[o], f"operator '_foreach', state {k}")
        new_ins[j] = new_outs[o] = merged
    new_outs[-1] = (1,)
    return new_ins, new_outs


def _infer_type(attrs, ins, outs):
    lay = _layout(attrs)
    given = {lay.body_input[j]: t for j, t in enumerate(ins) if t is not None}
    for k in range(lay.n_states):
        if ins[lay.n_data + k] is None and outs[lay.n_out + k] is not None:
            given[lay.body_input[lay.n_data + k]] = outs[lay.n_out + k]
    args, body_outs, aux = lay.body.infer_type_partial(**given)
    inferred = dict(zip(lay.body.list_arguments(), args))
    inferred.update(zip(lay.body.list_auxiliary_states(), aux))
    new_ins = [merge_dtype(t, inferred.get(name), f"operator '_foreach', input {j}")
               for j, (t, name) in enumerate(zip(ins, lay.body_input))]
    new_outs = [merge_dtype(outs[i], t, f"operator '_foreach', output {i}")
                for i, t in enumerate(body_outs)]
    new_outs.append(S.TOKEN_DTYPE)
    return new_ins, new_outs


# -- running ----------------------------------------------------------------------------------
def _runner(attrs, ctx, inputs, with_grad):
    lay = _layout(attrs)
    steps = int(inputs[0].shape[0]) if lay.n_data else 0
    one_d = tuple(a.ndim == 1 for a in inputs[:lay.n_data])
    return S.runner((attrs, steps), functools.partial(lay.graph, steps, one_d),
                    S.device_of(ctx),
                    [a.shape for a in inputs], [a.dtype for a in inputs], with_grad)


def _forward(attrs, ctx, inputs, req, outputs):
    lay = _layout(attrs)
    xp = ctx.xp
    token = outputs[-1]
    if lay.n_data == 0 or inputs[0].shape[0] == 0:  # no steps: the states go through
        for i in range(lay.n_out):
            S.write(xp, outputs[i], req[i], None)
        for k in range(lay.n_states):
            S.write(xp, outputs[lay.n_out + k], req[lay.n_out + k], inputs[lay.n_data + k])
        token[...] = -1
        return
    with S.inline():
        run = _runner(attrs, ctx, inputs, bool(ctx.is_train))
        run.load(inputs)
        results = run.executor.forward(is_train=bool(ctx.is_train))
        for i, value in enumerate(results):
            S.write(xp, outputs[i], req[i], value)
        run.store_aux(xp, inputs)
    if ctx.is_train:
        token[...] = S.keep(run)
    else:
        S.release(run)
        token[...] = -1


def _backward(attrs, ctx, inputs, req, outputs):
    lay = _layout(attrs)
    xp = ctx.xp
    n_visible = attrs.num_outputs
    head = inputs[:n_visible]
    data = inputs[n_visible:n_visible + lay.n_args]
    token = int(S.host(inputs[-1]).reshape(-1)[0])
    grads_of = [j for j in range(lay.n_args) if j not in lay.aux_inputs]
    if lay.n_data == 0 or data[0].shape[0] == 0:
        for k, j in enumerate(grads_of):
            state = j - lay.n_data
            passed = head[lay.n_out + state] if 0 <= state < lay.n_states else None
            S.write(xp, outputs[k], req[k], passed)
        return
    with S.inline():
        run = S.backward_runner(token, lambda: _runner(attrs, ctx, data, True), data)
        S.run_backward(run, head, ctx)
        S.write_gradients(xp, run, lay.n_args, lay.aux_inputs, req, outputs)
    S.release(run)


# -- the conformance suite's example: a running sum scaled by a parameter -------------------
def _example() -> tuple[str, tuple, tuple, tuple]:
    import json

    data, state, weight = sym.var("x"), sym.var("h"), sym.var("w")
    step = sym.broadcast_mul(data, weight) + state
    body = sym.Group([sym.tanh(step), sym.identity(step)])
    names = body.list_inputs()
    return (json.dumps([json.loads(body.tojson())]), (names.index("x"),), (names.index("h"),),
            (names.index("w"),))


def _sample(draw):
    from .._draw import Draw

    d = Draw(draw)
    steps, width = d.int(1, 4, "steps"), d.int(1, 3, "width")
    subgraphs, data_locs, state_locs, remain_locs = _example()
    arrays = [d.uniform((steps, width)), d.uniform((width,)), d.uniform((width,))]
    return Case(arrays, {"subgraphs": subgraphs, "num_args": 4, "num_outputs": 2,
                         "num_out_data": 1, "in_data_locs": data_locs,
                         "in_state_locs": state_locs, "remain_locs": remain_locs})


def _reference(params, x, h, w):
    outs = []
    for row in x:
        h = row * w + h
        outs.append(np.tanh(h))
    return [np.stack(outs), h]


OPS = S.control_flow_ops(
    "_foreach", 1, ForeachParam,
    "Run the subgraph (``subgraphs``) over the slices of the data inputs along axis 0 "
    "(``mx.sym.contrib.foreach``): each step reads one slice of each data array, the "
    "states the step before left and the remaining inputs; the step outputs are stacked "
    "along a new axis 0 and the last states returned after them.",
    _layout, _infer_shape, _infer_type, _forward, _backward,
    Domain(_sample, reference=_reference, rtol=1e-4, atol=1e-6))
