"""``_CachedOp``: a node that runs a whole symbol, the subgraph it holds (MXNet's
``_CachedOp``: what the ``default`` subgraph backends put in place of the nodes they
partition off, and ``mx.sym._internal._CachedOp(*inputs, subgraph=sym.tojson())``).

The node's inputs feed the subgraph's inputs in ``list_inputs`` order; its outputs are the
subgraph's, named ``<node>_<subgraph output>``; the inputs feeding the subgraph's auxiliary
states are mutated, so they stay auxiliary states of the graph around it.  The subgraph
comes as MXNet keeps it: ``subgraphs``, a JSON list of one graph (partitioned graphs, where
symbol files keep it under the node), or ``subgraph``, the graph's JSON text.  MXNet's
CachedOp flags are accepted and change nothing: the subgraph runs through an executor bound
once per signature, as the control-flow operators run theirs (see :mod:`._subgraph`), whose
hidden token output carries that executor to the backward pass.
"""

from __future__ import annotations

import functools
import json

import numpy as np

from dagnet import ParamError
from dagnet import symbol as sym
from dagnet.operator import XP, Case, Domain, Field, Gradient, OpBuilder, Params, Shape

from . import _subgraph as S

__all__ = ["OPS"]

_NAME = "_CachedOp"


class CachedOpParam(Params):
    subgraphs = Field(str, "", "a JSON list of the one symbol graph the node runs (how "
                               "partitioned graphs keep it)")
    subgraph = Field(str, "", "the symbol graph the node runs, as JSON text")
    static_alloc = Field(bool, False, "MXNet's CachedOp flag; accepted, changes nothing")
    static_shape = Field(bool, False, "MXNet's CachedOp flag; accepted, changes nothing")
    is_dynamic = Field(bool, False, "MXNet's CachedOp flag; accepted, changes nothing")
    inline_limit = Field(int, 2, "MXNet's CachedOp flag; accepted, changes nothing")
    forward_bulk_size = Field(int, 15, "MXNet's CachedOp flag; accepted, changes nothing")
    backward_bulk_size = Field(int, 15, "MXNet's CachedOp flag; accepted, changes nothing")
    data_indices = Field(Shape, (), "MXNet's CachedOp flag; accepted, changes nothing")
    param_indices = Field(Shape, (), "MXNet's CachedOp flag; accepted, changes nothing")


class _Layout:
    """A ``_CachedOp`` node's subgraph and what follows from it, read once per parameters."""

    def __init__(self, attrs: CachedOpParam):
        if bool(attrs.subgraphs) == bool(attrs.subgraph):
            raise ParamError(f"operator {_NAME!r}: give the symbol it runs once, as subgraph "
                             f"(JSON text, e.g. subgraph=sym.tojson()) or as subgraphs (a JSON "
                             f"list of one graph); got "
                             f"{'both' if attrs.subgraph else 'neither'}")
        if attrs.subgraphs:
            graphs = S.parse_subgraphs(attrs.subgraphs)
            if len(graphs) != 1:
                raise ParamError(f"operator {_NAME!r}: subgraphs holds {len(graphs)} graphs; "
                                 f"the operator runs one")
            self.graph = graphs[0]
        else:
            self.graph = sym.load_json(attrs.subgraph)
        self.inputs = self.graph.list_inputs()
        self.outputs = self.graph.list_outputs()
        aux = set(self.graph.list_auxiliary_states())
        self.aux_inputs = [j for j, name in enumerate(self.inputs) if name in aux]


@functools.lru_cache(maxsize=256)
def _layout(attrs: CachedOpParam) -> _Layout:
    return _Layout(attrs)


def _infer(attrs, ins, outs, infer, merge, token):
    lay = _layout(attrs)
    inferred, graph_outs = infer(lay.graph, lay.inputs, ins, outs[:len(lay.outputs)])
    new_ins = [merge(value, inferred[name], f"operator {_NAME!r}, input {name!r}")
               if name in inferred else value for name, value in zip(lay.inputs, ins)]
    new_outs = list(outs)
    for i, value in enumerate(graph_outs):
        if value is not None:
            new_outs[i] = merge(new_outs[i], value, f"operator {_NAME!r}, output {i}")
    new_outs[-1] = token
    return new_ins, new_outs


_infer_shape, _infer_type = S.infer_rules(_infer, lambda attrs: len(_layout(attrs).outputs))


def _runner(attrs, ctx, inputs, with_grad):
    lay = _layout(attrs)
    return S.runner((_NAME, attrs), lambda: (lay.graph, list(lay.inputs)), S.device_of(ctx),
                    [a.shape for a in inputs], [a.dtype for a in inputs], with_grad)


def _forward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    is_train = bool(ctx.is_train)
    with S.inline():
        run = _runner(attrs, ctx, inputs, is_train)
        run.load(inputs)
        for i, value in enumerate(run.executor.forward(is_train=is_train)):
            S.write(xp, outputs[i], req[i], value)
        run.store_aux(xp, inputs)
    if is_train:
        outputs[-1][...] = S.keep(run)
    else:
        S.release(run)
        outputs[-1][...] = -1


def _backward(attrs, ctx, inputs, req, outputs):
    lay = _layout(attrs)
    n_out, n_in = len(lay.outputs), len(lay.inputs)
    data = inputs[n_out:n_out + n_in]
    token = int(S.host(inputs[-1]).reshape(-1)[0])
    with S.inline():
        run = S.backward_runner(token, lambda: _runner(attrs, ctx, data, True), data)
        S.run_backward(run, inputs[:n_out], ctx)
        S.write_gradients(ctx.xp, run, n_in, lay.aux_inputs, req, outputs)
    S.release(run)


# -- the conformance suite's example: the subgraph (x * w, sin x) --------------------------
def _sample(draw):
    from .._draw import Draw

    d = Draw(draw)
    shape = (d.int(1, 3, "rows"), d.int(1, 3, "columns"))
    x, w = sym.var("x"), sym.var("w")
    graph = sym.Group([sym.elemwise_mul(x, w), sym.sin(x)])
    return Case([d.uniform(shape), d.uniform(shape)],
                {"subgraphs": json.dumps([json.loads(graph.tojson())])})


def _reference(params, x, w):
    return [x * w, np.sin(x)]


_op = (
    OpBuilder(_NAME)
    .describe("Run the symbol the node holds (``subgraph``: its JSON; ``subgraphs``: a JSON "
              "list of it) on the node's inputs, fed to the symbol's inputs in list_inputs "
              "order; the outputs are the symbol's.  What the ``default`` subgraph backends "
              "put in place of the nodes they partition off.")
    .set_params(CachedOpParam)
    .set_num_inputs(lambda a: len(_layout(a).inputs))
    .set_num_outputs(lambda a: len(_layout(a).outputs) + 1)
    .set_num_visible_outputs(lambda a: len(_layout(a).outputs))
    .set_input_names(lambda a: list(_layout(a).inputs))
    .set_output_names(lambda a: list(_layout(a).outputs) + ["token"])
    .set_mutate_inputs(lambda a: _layout(a).aux_inputs)
    .set_infer_shape(_infer_shape)
    .set_infer_type(_infer_type)
    .set_compute(_forward, device=XP)
    .set_gradient(Gradient(f"_backward{_NAME}", ("out_grad", "in_data", "out_data")))
    .set_domain(Domain(_sample, reference=_reference, rtol=1e-4, atol=1e-6))
    .build()
)

OPS = [_op, OpBuilder.backward_for(_op).set_compute(_backward, device=XP).build()]
