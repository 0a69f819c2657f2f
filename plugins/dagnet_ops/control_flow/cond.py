"""``_cond``: run the subgraph ``then_branch`` when the subgraph ``cond`` gives true, else
``else_branch`` (what ``mx.sym.contrib.cond`` builds; ``subgraphs`` holds the three, as
MXNet's symbol files do).

The node's inputs are shared by the three subgraphs; ``cond_input_locs``,
``then_input_locs`` and ``else_input_locs`` give the node input feeding each subgraph
input.  Both branches give ``num_outputs`` outputs of the same shapes.  In training mode the
executor of the branch that ran is kept for the backward pass (see :mod:`._subgraph`); the
inputs only the other branch reads get a zero gradient.
"""

from __future__ import annotations

import functools
import json

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
)

from . import _subgraph as S

__all__ = ["OPS"]


class CondParam(Params):
    subgraphs = Field(str, REQUIRED, "a JSON list of three symbol graphs: the condition (one "
                                     "one-element output), the branch run when it is true, "
                                     "the branch run when it is false")
    num_args = Field(int, REQUIRED, "the three subgraphs and the node's inputs", low=3)
    num_outputs = Field(int, REQUIRED, "how many outputs each branch gives", low=1)
    cond_input_locs = Field(Shape, REQUIRED, "the node input feeding each input of cond")
    then_input_locs = Field(Shape, REQUIRED, "the node input feeding each input of "
                                             "then_branch")
    else_input_locs = Field(Shape, REQUIRED, "the node input feeding each input of "
                                             "else_branch")


class _Layout:
    def __init__(self, attrs: CondParam):
        where = "operator '_cond'"
        self.graphs = list(S.subgraphs_of(attrs, 3, where))
        self.n_args = attrs.num_args - 3
        locs = [attrs.cond_input_locs, attrs.then_input_locs, attrs.else_input_locs]
        self.fed = [S.feeds(g, loc, self.n_args, where) for g, loc in zip(self.graphs, locs)]
        if len(self.graphs[0].list_outputs()) != 1:
            raise ShapeError(f"{where}: cond must have one output")
        for graph, kind in zip(self.graphs[1:], ("the then-branch", "the else-branch")):
            if len(graph.list_outputs()) != attrs.num_outputs:
                raise ShapeError(f"{where}: {kind} has {len(graph.list_outputs())} outputs, "
                                 f"num_outputs={attrs.num_outputs}")
        aux = set()
        for graph in self.graphs:
            aux |= set(graph.list_auxiliary_states())
        self.aux_inputs = [j for j in range(self.n_args)
                           if any(fed[j] in aux for fed in self.fed)]


@functools.lru_cache(maxsize=256)
def _layout(attrs: CondParam) -> _Layout:
    return _Layout(attrs)


def _infer(attrs, ins, outs, infer, merge, token):
    lay = _layout(attrs)
    where = "operator '_cond'"
    new_ins, new_outs = list(ins), list(outs)
    for graph, fed in zip(lay.graphs, lay.fed):
        inferred, graph_outs = infer(graph, fed, new_ins)
        for j in range(lay.n_args):
            if fed[j] is not None and fed[j] in inferred:
                new_ins[j] = merge(new_ins[j], inferred[fed[j]], f"{where}, input {j}")
        if graph is not lay.graphs[0]:
            for i, value in enumerate(graph_outs):
                if value is not None:
                    new_outs[i] = merge(new_outs[i], value, f"{where}, output {i}")
    new_outs[-1] = token
    return new_ins, new_outs


_infer_shape, _infer_type = S.infer_rules(_infer, lambda attrs: attrs.num_outputs)


# -- running ----------------------------------------------------------------------------------
def _run(attrs, ctx, inputs, is_train, with_grad):
    """Decide the branch and run it: ``(branch index 1 or 2, its runner, its results)``."""
    lay = _layout(attrs)
    device = S.device_of(ctx)
    shapes = [a.shape for a in inputs]
    dtypes = [a.dtype for a in inputs]

    def runner(index, grad):
        graph, fed = lay.graphs[index], lay.fed[index]
        return S.runner((index, attrs), lambda: (graph, list(fed)), device, shapes, dtypes,
                        grad)

    pred = runner(0, False)
    try:
        pred.load(inputs)
        verdict = pred.executor.forward(is_train=False)[0].asnumpy()
    finally:
        S.release(pred)
    if verdict.size != 1:
        raise ShapeError(f"operator '_cond': cond must give one value, it gave shape "
                         f"{verdict.shape}")
    branch = 1 if verdict.reshape(-1)[0] else 2
    run = runner(branch, with_grad)
    run.load(inputs)
    return branch, run, run.executor.forward(is_train=is_train)


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    is_train = bool(ctx.is_train)
    with S.inline():
        branch, run, results = _run(attrs, ctx, inputs, is_train, is_train)
        for i, value in enumerate(results):
            S.write(xp, outputs[i], req[i], value)
        run.store_aux(xp, inputs)
    if is_train:
        outputs[-1][...] = S.keep((branch, run))
    else:
        S.release(run)
        outputs[-1][...] = -1


def _backward(attrs, ctx, inputs, req, outputs):
    lay = _layout(attrs)
    xp = ctx.xp
    head = inputs[:attrs.num_outputs]
    data = inputs[attrs.num_outputs:attrs.num_outputs + lay.n_args]
    token = int(S.host(inputs[-1]).reshape(-1)[0])
    with S.inline():
        kept = S.take_kept(token) if token > 0 else None
        if kept is None:  # nothing kept: decide and run the branch again, as the call did
            branch, run, _ = _run(attrs, ctx, data, token != -1, True)
        else:
            branch, run = kept
        S.run_backward(run, head, ctx)
        S.write_gradients(xp, run, lay.n_args, lay.aux_inputs, req, outputs)
    S.release(run)


# -- the conformance suite's example: x * w when the flag is set, else x + w ------------------
def _sample(draw):
    from .._draw import Draw

    d = Draw(draw)
    width = d.int(1, 3, "width")
    flag, x, w = sym.var("flag"), sym.var("x"), sym.var("w")
    pred = sym.identity(flag)
    then_branch = sym.Group([sym.broadcast_mul(x, w), sym.tanh(x)])
    else_branch = sym.Group([sym.broadcast_add(x, w), sym.sin(w)])
    node_inputs = ["flag", "x", "w"]

    def locs(graph):
        return tuple(node_inputs.index(n) for n in graph.list_inputs())

    arrays = [np.full(1, d.int(0, 1, "flag"), np.int32), d.uniform((width,)),
              d.uniform((width,))]
    graphs = json.dumps([json.loads(g.tojson()) for g in (pred, then_branch, else_branch)])
    return Case(arrays, {"subgraphs": graphs, "num_args": 6, "num_outputs": 2,
                         "cond_input_locs": locs(pred), "then_input_locs": locs(then_branch),
                         "else_input_locs": locs(else_branch)})


def _reference(params, flag, x, w):
    return [x * w, np.tanh(x)] if flag[0] else [x + w, np.sin(w)]


OPS = S.control_flow_ops(
    "_cond", 3, CondParam,
    "Run the subgraph ``then_branch`` when the subgraph ``cond`` gives true, else "
    "``else_branch`` (``mx.sym.contrib.cond``); the outputs are those of the branch "
    "that ran.",
    _layout, _infer_shape, _infer_type, _forward, _backward,
    Domain(_sample, reference=_reference, rtol=1e-4, atol=1e-6))
