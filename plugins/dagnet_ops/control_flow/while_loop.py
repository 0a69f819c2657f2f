"""``_while_loop``: run the subgraph ``func`` while the subgraph ``cond`` gives true, at most
``max_iterations`` times (what ``mx.sym.contrib.while_loop`` builds; ``subgraphs`` holds
both, as MXNet's symbol files do).

The node's inputs are shared by both subgraphs: ``cond_input_locs`` / ``func_input_locs``
give the node input feeding each subgraph input, and ``func_var_locs`` which of ``func``'s
inputs are the loop variables (the first step reads them from the node's inputs, the next
ones from the step before).  ``func``'s first ``num_out_data`` outputs are the step's
outputs, stacked into ``max_iterations`` rows (rows after the last step are zeros); the
rest are the next loop variables, the last of which are outputs too.

Each step runs ``cond`` and then ``func`` through executors bound once per signature; in
training mode every step's executor is kept for the backward pass, which runs them in
reverse (see :mod:`._subgraph`).
"""

from __future__ import annotations

import functools
import json

import numpy as np

from dagnet import ShapeError
from dagnet import ndarray as nd
from dagnet import symbol as sym
from dagnet.operator import (
    REQUIRED,
    Case,
    Domain,
    Field,
    OpReqType,
    Params,
    Shape,
    merge_dtype,
    merge_shape,
)

from . import _subgraph as S

__all__ = ["OPS"]


class WhileLoopParam(Params):
    subgraphs = Field(str, REQUIRED, "a JSON list of two symbol graphs: the condition (one "
                                     "one-element output), then the body (the step's outputs, "
                                     "then the next loop variables)")
    num_args = Field(int, REQUIRED, "the two subgraphs and the node's inputs", low=2)
    num_outputs = Field(int, REQUIRED, "func's outputs: step outputs and loop variables",
                        low=1)
    num_out_data = Field(int, REQUIRED, "how many of func's outputs are step outputs", low=0)
    max_iterations = Field(int, REQUIRED, "the most steps the loop runs", low=0)
    cond_input_locs = Field(Shape, REQUIRED, "the node input feeding each input of cond")
    func_input_locs = Field(Shape, REQUIRED, "the node input feeding each input of func")
    func_var_locs = Field(Shape, REQUIRED, "the input of func each loop variable is")


class _Layout:
    def __init__(self, attrs: WhileLoopParam):
        where = "operator '_while_loop'"
        self.cond, self.func = S.subgraphs_of(attrs, 2, where)
        self.n_args = attrs.num_args - 2
        self.cond_fed = S.feeds(self.cond, attrs.cond_input_locs, self.n_args, where)
        self.func_fed = S.feeds(self.func, attrs.func_input_locs, self.n_args, where)
        self.n_out = attrs.num_out_data
        self.n_vars = len(attrs.func_var_locs)
        if attrs.num_outputs != self.n_out + self.n_vars or \
                len(self.func.list_outputs()) != attrs.num_outputs:
            raise ShapeError(f"{where}: func has {len(self.func.list_outputs())} outputs; "
                             f"num_outputs={attrs.num_outputs} must be num_out_data="
                             f"{self.n_out} plus one per loop variable ({self.n_vars})")
        if len(self.cond.list_outputs()) != 1:
            raise ShapeError(f"{where}: cond must have one output, it has "
                             f"{len(self.cond.list_outputs())}")
        self.var_inputs = [attrs.func_input_locs[loc] for loc in attrs.func_var_locs]
        aux = set(self.func.list_auxiliary_states()) | set(self.cond.list_auxiliary_states())
        self.aux_inputs = [j for j in range(self.n_args)
                           if self.func_fed[j] in aux or self.cond_fed[j] in aux]


@functools.lru_cache(maxsize=256)
def _layout(attrs: WhileLoopParam) -> _Layout:
    return _Layout(attrs)


def _infer_shape(attrs, ins, outs):
    lay = _layout(attrs)
    where = "operator '_while_loop'"
    ins = list(ins)
    for k, j in enumerate(lay.var_inputs):  # a loop variable keeps its shape
        ins[j] = merge_shape(ins[j], outs[lay.n_out + k], f"{where}, loop variable {k}")
    func_in, func_out = S.graph_shapes(lay.func, lay.func_fed, ins)
    cond_in, _ = S.graph_shapes(lay.cond, lay.cond_fed, ins)
    new_ins = list(ins)
    for j in range(lay.n_args):
        for fed, inferred in ((lay.func_fed, func_in), (lay.cond_fed, cond_in)):
            if fed[j] is not None and fed[j] in inferred:
                new_ins[j] = merge_shape(new_ins[j], inferred[fed[j]], f"{where}, input {j}")
    new_outs = list(outs)
    for i, shape in enumerate(func_out):
        if shape is None:
            continue
        if i < lay.n_out:
            shape = (attrs.max_iterations,) + shape
        new_outs[i] = merge_shape(outs[i], shape, f"{where}, output {i}")
    for k, j in enumerate(lay.var_inputs):
        merged = merge_shape(new_ins[j], new_outs[lay.n_out + k], f"{where}, loop variable {k}")
        new_ins[j] = new_outs[lay.n_out + k] = merged
    new_outs[-1] = (1,)
    return new_ins, new_outs


def _infer_type(attrs, ins, outs):
    lay = _layout(attrs)
    where = "operator '_while_loop'"
    ins = list(ins)
    for k, j in enumerate(lay.var_inputs):
        ins[j] = merge_dtype(ins[j], outs[lay.n_out + k], f"{where}, loop variable {k}")
    func_in, func_out = S.graph_types(lay.func, lay.func_fed, ins)
    cond_in, _ = S.graph_types(lay.cond, lay.cond_fed, ins)
    new_ins = list(ins)
    for j in range(lay.n_args):
        for fed, inferred in ((lay.func_fed, func_in), (lay.cond_fed, cond_in)):
            if fed[j] is not None and fed[j] in inferred:
                new_ins[j] = merge_dtype(new_ins[j], inferred[fed[j]], f"{where}, input {j}")
    new_outs = [merge_dtype(outs[i], t, f"{where}, output {i}") for i, t in enumerate(func_out)]
    for k, j in enumerate(lay.var_inputs):
        merged = merge_dtype(new_ins[j], new_outs[lay.n_out + k], f"{where}, loop variable {k}")
        new_ins[j] = new_outs[lay.n_out + k] = merged
    new_outs.append(S.TOKEN_DTYPE)
    return new_ins, new_outs


# -- running ----------------------------------------------------------------------------------
def _graph(graph, fed):
    return lambda: (graph, list(fed))


def _steps(attrs, ctx, inputs, is_train, with_grad, on_step):
    """Run the loop on the node's ``inputs``; ``on_step(step, results, runner)`` sees each
    step's func results.  Returns the number of steps and the last loop variables."""
    lay = _layout(attrs)
    device = S.device_of(ctx)
    current = list(inputs)
    shapes = [a.shape for a in inputs]
    dtypes = [a.dtype for a in inputs]
    cond_run = S.runner(("cond", attrs), _graph(lay.cond, lay.cond_fed), device, shapes,
                        dtypes, False)
    step = 0
    try:
        while step < attrs.max_iterations:
            cond_run.load(current)
            verdict = cond_run.executor.forward(is_train=False)[0].asnumpy()
            if verdict.size != 1:
                raise ShapeError(f"operator '_while_loop': cond must give one value, it gave "
                                 f"shape {verdict.shape}")
            if not verdict.reshape(-1)[0]:
                break
            run = S.runner(("func", attrs), _graph(lay.func, lay.func_fed), device, shapes,
                           dtypes, with_grad)
            run.load(current)
            results = run.executor.forward(is_train=is_train)
            for k, j in enumerate(lay.var_inputs):
                current[j] = results[lay.n_out + k].asnumpy()
            on_step(step, results, run)
            step += 1
    finally:
        S.release(cond_run)
    return step, [current[j] for j in lay.var_inputs]


def _forward(attrs, ctx, inputs, req, outputs):
    lay = _layout(attrs)
    xp = ctx.xp
    is_train = bool(ctx.is_train)
    kept: list = []

    def on_step(step, results, run):
        for i in range(lay.n_out):
            if req[i] is not OpReqType.NULL:
                S.write(xp, outputs[i][step], req[i], results[i])
        if is_train:
            kept.append(run)
        else:
            run.store_aux(xp, inputs)
            S.release(run)

    with S.inline():
        steps, last = _steps(attrs, ctx, inputs, is_train, is_train, on_step)
        if kept:
            kept[-1].store_aux(xp, inputs)
    for i in range(lay.n_out):
        if steps < attrs.max_iterations and req[i] is not OpReqType.NULL:
            S.write(xp, outputs[i][steps:], req[i], None)
    for k, value in enumerate(last):
        S.write(xp, outputs[lay.n_out + k], req[lay.n_out + k], value)
    outputs[-1][...] = S.keep(kept) if is_train else -1


def _backward(attrs, ctx, inputs, req, outputs):
    lay = _layout(attrs)
    xp = ctx.xp
    head = inputs[:attrs.num_outputs]
    data = inputs[attrs.num_outputs:attrs.num_outputs + lay.n_args]
    token = int(S.host(inputs[-1]).reshape(-1)[0])
    device = S.device_of(ctx)
    with S.inline():
        runs = S.take_kept(token) if token > 0 else None
        if runs is None:  # nothing kept: run the loop again, as the call did
            runs = []
            _steps(attrs, ctx, data, token != -1, True, lambda s, r, run: runs.append(run))
        carry = [S.host(head[lay.n_out + k]) for k in range(lay.n_vars)]
        totals: dict[int, np.ndarray] = {}
        for step in reversed(range(len(runs))):
            run = runs[step]
            heads = [S.host(head[i])[step] for i in range(lay.n_out)] + carry
            run.executor.backward([nd.array(h, ctx=device, dtype=h.dtype) for h in heads])
            carry = [_grad_or_zeros(run, j, data) for j in lay.var_inputs]
            for j in range(lay.n_args):
                if j in lay.var_inputs:
                    continue
                grad = run.gradient(j)
                if grad is not None:
                    value = grad.asnumpy()
                    totals[j] = totals[j] + value if j in totals else value
            S.release(run)
        grads = dict(totals)
        for k, j in enumerate(lay.var_inputs):
            grads[j] = carry[k]
    position = 0
    for j in range(lay.n_args):
        if j in lay.aux_inputs:
            continue
        S.write(xp, outputs[position], req[position], grads.get(j))
        position += 1


def _grad_or_zeros(run, j, data):
    grad = run.gradient(j)
    if grad is None:
        return np.zeros(data[j].shape, S.host(data[j]).dtype)
    return grad.asnumpy()


# -- the conformance suite's example: x <- tanh(x * w), counted by an int32 counter -----------
def _example():
    i, x, w, limit = sym.var("i"), sym.var("x"), sym.var("w"), sym.var("limit")
    cond = sym.broadcast_lesser(i, limit)
    nxt = sym.tanh(sym.broadcast_mul(x, w))
    func = sym.Group([nxt * 2, i + 1, nxt])
    return cond, func


def _sample(draw):
    from .._draw import Draw

    d = Draw(draw)
    width, limit, most = d.int(1, 3, "width"), d.int(0, 4, "limit"), d.int(1, 4, "most")
    cond, func = _example()
    node_inputs = ["i", "x", "w", "limit"]
    cond_locs = tuple(node_inputs.index(n) for n in cond.list_inputs())
    func_names = func.list_inputs()
    func_locs = tuple(node_inputs.index(n) for n in func_names)
    var_locs = (func_names.index("i"), func_names.index("x"))
    arrays = [np.zeros(1, np.int32), d.uniform((width,)), d.uniform((width,)),
              np.full(1, limit, np.int32)]
    graphs = json.dumps([json.loads(cond.tojson()), json.loads(func.tojson())])
    return Case(arrays, {"subgraphs": graphs, "num_args": 6,
                         "num_outputs": 3, "num_out_data": 1, "max_iterations": most,
                         "cond_input_locs": cond_locs, "func_input_locs": func_locs,
                         "func_var_locs": var_locs})


def _reference(params, i, x, w, limit):
    most = int(params["max_iterations"])
    rows = np.zeros((most,) + x.shape, x.dtype)
    step = 0
    while step < most and i[0] < limit[0]:
        x = np.tanh(x * w)
        rows[step] = x * 2
        i = i + 1
        step += 1
    return [rows, i, x]


OPS = S.control_flow_ops(
    "_while_loop", 2, WhileLoopParam,
    "Run the subgraph ``func`` while the subgraph ``cond`` gives true, at most "
    "``max_iterations`` times (``mx.sym.contrib.while_loop``): the step outputs are "
    "stacked into ``max_iterations`` rows (zeros after the last step), then come the "
    "last loop variables.",
    _layout, _infer_shape, _infer_type, _forward, _backward,
    Domain(_sample, reference=_reference, rtol=1e-4, atol=1e-6))
