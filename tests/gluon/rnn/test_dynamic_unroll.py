"""gluon.contrib.rnn.dynamic_unroll: a cell run as one foreach loop gives what the cell's
own step-by-step unroll gives, with and without valid lengths, in both layouts,
imperatively and hybridized."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dagnet as mx
from dagnet import gluon
from dagnet.gluon.contrib.rnn import dynamic_unroll


class _Unrolled(gluon.HybridBlock):
    def __init__(self, cell, layout, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell
        self.layout = layout

    def hybrid_forward(self, F, inputs, states, valid_length):
        return dynamic_unroll(self.cell, inputs, states, valid_length=valid_length,
                              layout=self.layout)


@pytest.mark.parametrize("layout", ["TNC", "NTC"])
@pytest.mark.parametrize("cell_type,num_states", [(gluon.rnn.LSTMCell, 2),
                                                  (gluon.rnn.GRUCell, 1)])
def test_dynamic_unroll_matches_the_cells_unroll(layout, cell_type, num_states):
    rng = np.random.RandomState(0)
    steps, batch, width, hidden = 4, 3, 5, 6
    shape = (steps, batch, width) if layout == "TNC" else (batch, steps, width)
    data = mx.nd.array(rng.uniform(-1, 1, shape))
    states = [mx.nd.array(rng.uniform(-1, 1, (batch, hidden))) for _ in range(num_states)]
    valid = mx.nd.array([4, 1, 2])
    cell = cell_type(hidden, prefix="rnn_")
    cell.initialize(mx.init.Uniform(0.5))
    for lengths in (None, valid):
        want, want_states = cell.unroll(steps, data, states, layout=layout,
                                        merge_outputs=True, valid_length=lengths)
        got, got_states = dynamic_unroll(cell, data, states, layout=layout,
                                         valid_length=lengths)
        np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)
        assert len(got_states) == num_states
        for g, w in zip(got_states, want_states):
            np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), rtol=1e-5, atol=1e-6)

    # hybridized: one _foreach node, the same results and parameter gradients
    block = _Unrolled(cell_type(hidden, prefix="rnn_"), layout)
    block.initialize()
    block.cell.collect_params().load_dict(
        {k: v.data() for k, v in cell.collect_params().items()})
    results = []
    for hybridize in (False, True):
        if hybridize:
            block.hybridize()
        with mx.autograd.record():
            out, new_states = block(data, states, valid)
        out.backward()
        weight = block.cell.collect_params()["rnn_i2h_weight"]
        results.append((out.asnumpy(), [s.asnumpy() for s in new_states],
                        weight.grad().asnumpy().copy()))
    (out1, states1, grad1), (out2, states2, grad2) = results
    np.testing.assert_allclose(out2, out1, rtol=1e-5, atol=1e-6)
    for a, b in zip(states2, states1):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad2, grad1, rtol=1e-4, atol=1e-5)
    graph = block(mx.sym.var("data"), [mx.sym.var(f"s{i}") for i in range(num_states)],
                  mx.sym.var("valid"))[0]
    ops = [n["op"] for n in json.loads(graph.tojson())["nodes"]]
    assert ops.count("_foreach") == 1 and "FullyConnected" not in ops  # the cell is inside


def test_dynamic_unroll_dropout_keeps_one_mask_per_sequence():
    cell = gluon.rnn.RNNCell(3, prefix="rnn_", activation="relu")
    cell.initialize(mx.init.One())
    data = mx.nd.ones((4, 2, 3))  # TNC: every step the same, so every step's output too
    with mx.autograd.train_mode():
        out, _ = dynamic_unroll(cell, data, [mx.nd.zeros((2, 3))], drop_outputs=0.5)
    kept = out.asnumpy() != 0
    assert (kept == kept[:1]).all()
