"""mx.sym.contrib.foreach (the ``_foreach`` operator) and mx.nd.contrib.foreach / while_loop /
cond: results and gradients as MXNet 1.9.1 gives them (figures from the same calls there),
closures cut into node inputs, hybridized gluon blocks, export and import."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dagnet as mx

ROUND = 6


def _bind_and_run(group, values, head_grads):
    args = {k: mx.nd.array(v) for k, v in values.items()}
    grads = {k: mx.nd.zeros_like(v) for k, v in args.items()}
    ex = group.bind(mx.cpu(), args, args_grad=grads)
    outs = [o.asnumpy() for o in ex.forward(is_train=True)]
    ex.backward([mx.nd.array(h) for h in head_grads])
    return outs, {k: v.asnumpy() for k, v in grads.items()}


def test_foreach_outputs_states_and_gradients_match_mxnet():
    def step(data, states):
        return data * states[0], [states[0] * 2 + data]

    outs, states = mx.sym.contrib.foreach(step, mx.sym.var("data"), [mx.sym.var("state")])
    group = mx.sym.Group([outs] + states)
    assert group.list_arguments() == ["data", "state"]
    assert [name.rsplit("_", 1)[-1] for name in group.list_outputs()] == ["output0", "output1"]
    got, grads = _bind_and_run(group, {"data": np.arange(6.0).reshape(3, 2),
                                       "state": np.ones(2)},
                               [np.ones((3, 2)), np.full(2, 0.5)])
    np.testing.assert_array_equal(got[0], [[0, 1], [4, 9], [24, 45]])
    np.testing.assert_array_equal(got[1], [16, 23])
    np.testing.assert_allclose(grads["data"], [[13, 16], [7, 9], [6.5, 9.5]])
    np.testing.assert_allclose(grads["state"], [24, 31])


def test_foreach_cuts_what_the_body_reads_from_the_enclosing_graph():
    w, b = mx.sym.var("w"), mx.sym.var("b")
    outer = mx.sym.relu(b) * 2  # a value of the enclosing graph, read inside the body

    def step(data, states):
        h = mx.sym.tanh(data * w + states[0] + outer)
        return [h, h * 2], [h]

    outs, states = mx.sym.contrib.foreach(step, mx.sym.var("x"), [mx.sym.var("h0")])
    group = mx.sym.Group(outs + states)
    assert sorted(group.list_arguments()) == ["b", "h0", "w", "x"]
    node = [n for n in json.loads(group.tojson())["nodes"] if n["op"] == "_foreach"][0]
    assert len(node["inputs"]) == 4  # data, state, then w and the cut relu value
    values = {"x": np.arange(6.0).reshape(3, 2) / 6, "w": [0.5, -1.0], "b": [0.3, -0.2],
              "h0": [0.1, 0.2]}
    got, grads = _bind_and_run(group, values, [np.ones((3, 2)), np.full((3, 2), 0.5),
                                               np.ones(2)])
    np.testing.assert_allclose(got[0], [[0.604368, 0.033321], [0.878928, -0.435512],
                                        [0.948061, -0.853484]], rtol=1e-5)
    np.testing.assert_allclose(grads["b"], [4.859322, 0.0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads["w"], [0.377035, 2.532004], rtol=1e-5)
    np.testing.assert_allclose(grads["h0"], [1.602097, 4.276075], rtol=1e-5)
    np.testing.assert_allclose(grads["x"], [[0.801049, -4.276075], [0.262012, -2.280828],
                                            [0.15177, -0.814693]], rtol=1e-5)


def test_foreach_infers_parameter_shapes_through_the_body():
    def step(data, states):
        h = mx.sym.FullyConnected(data, num_hidden=4, name="fc") + states[0]
        return h, [h]

    outs, states = mx.sym.contrib.foreach(step, mx.sym.var("x"), [mx.sym.var("h")])
    group = mx.sym.Group([outs] + states)
    arg_shapes, out_shapes, _ = group.infer_shape(x=(5, 2, 3), h=(2, 4))
    assert dict(zip(group.list_arguments(), arg_shapes))["fc_weight"] == (4, 3)
    assert out_shapes == [(5, 2, 4), (2, 4)]


def test_training_mode_gradient_uses_the_forward_passes_dropout_masks():
    def step(data, states):
        out = mx.sym.Dropout(data * states[0], p=0.5)
        return out, [states[0]]

    outs, _ = mx.sym.contrib.foreach(step, mx.sym.var("x"), [mx.sym.var("w")])
    x = np.random.default_rng(0).uniform(1, 2, (6, 50))
    args = {"x": mx.nd.array(x), "w": mx.nd.full((50,), 3.0)}
    grads = {"x": mx.nd.zeros((6, 50)), "w": mx.nd.zeros(50)}
    ex = outs.bind(mx.cpu(), args, args_grad=grads)
    out = ex.forward(is_train=True)[0].asnumpy()
    ex.backward([mx.nd.ones((6, 50))])
    assert 0 < (out == 0).mean() < 1
    # d out / d x is the mask scaled, which is out / x where the mask kept the value
    np.testing.assert_allclose(grads["x"].asnumpy(), out / x, rtol=1e-5)


def test_foreach_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="never used"):
        mx.sym.contrib.foreach(lambda d, s: (s[0] * 2, s), mx.sym.var("x"), [mx.sym.var("s")])
    with pytest.raises(ValueError, match="states shaped"):
        mx.sym.contrib.foreach(lambda d, s: (d, [s[0], s[0]]), mx.sym.var("x"),
                               [mx.sym.var("s")])
    with pytest.raises(ValueError, match=r"\(outputs, states\)"):
        mx.sym.contrib.foreach(lambda d, s: d, mx.sym.var("x"), [mx.sym.var("s")])


def test_ndarray_foreach_while_loop_and_cond():
    outs, states = mx.nd.contrib.foreach(
        lambda d, s: (d * s[0], [s[0] * 2 + d]), mx.nd.array(np.arange(6.0).reshape(3, 2)),
        [mx.nd.ones(2)])
    np.testing.assert_array_equal(outs.asnumpy(), [[0, 1], [4, 9], [24, 45]])
    np.testing.assert_array_equal(states[0].asnumpy(), [16, 23])
    outs, last = mx.nd.contrib.while_loop(
        lambda i, s: i < 3, lambda i, s: ([i * 10], [i + 1, s + i]),
        [mx.nd.array([0]), mx.nd.array([0])], max_iterations=5)
    np.testing.assert_array_equal(outs[0].asnumpy().ravel(), [0, 10, 20, 0, 0])
    assert [v.asscalar() for v in last] == [3, 3]
    with pytest.raises(ValueError, match="max_iterations"):
        mx.nd.contrib.while_loop(lambda i: i < 3, lambda i: ([], [i + 1]), [mx.nd.array([0])])
    assert mx.nd.contrib.cond(mx.nd.array([0]), lambda: "then", lambda: "else") == "else"


class _Scan(mx.gluon.HybridBlock):
    """A recurrent cell run with F.contrib.foreach, as GluonNLP's BiLMEncoder does."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.cell = mx.gluon.rnn.LSTMCell(5, input_size=3)

    def hybrid_forward(self, F, x, h, c):
        out, states = F.contrib.foreach(self.cell, x, [h, c])
        return out, states[0]


def test_hybridized_foreach_block_trains_and_exports_like_the_imperative_one(tmp_path):
    net = _Scan(prefix="scan_")
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.default_rng(1).uniform(-1, 1, (4, 2, 3)))
    zeros = [mx.nd.zeros((2, 5)), mx.nd.zeros((2, 5))]

    def run():
        with mx.autograd.record():
            out, h = net(x, *zeros)
            loss = (out * out).sum() + h.sum()
        loss.backward()
        return out.asnumpy(), {k: p.grad().asnumpy().copy()
                               for k, p in net.collect_params().items()}

    imperative, imperative_grads = run()
    net.hybridize()
    hybrid, hybrid_grads = run()
    np.testing.assert_allclose(hybrid, imperative, rtol=1e-5, atol=1e-6)
    for name, grad in imperative_grads.items():
        np.testing.assert_allclose(hybrid_grads[name], grad, rtol=1e-4, atol=1e-6)
    net.export(str(tmp_path / "scan"))
    ops = {n["op"] for n in json.load(open(tmp_path / "scan-symbol.json"))["nodes"]}
    assert "_foreach" in ops
    loaded = mx.gluon.SymbolBlock.imports(str(tmp_path / "scan-symbol.json"),
                                          ["data0", "data1", "data2"],
                                          str(tmp_path / "scan-0000.params"))
    np.testing.assert_allclose(loaded(x, *zeros)[0].asnumpy(), imperative, rtol=1e-5,
                               atol=1e-6)


def test_while_loop_outputs_padding_and_gradients_match_mxnet():
    i, x, w = mx.sym.var("i"), mx.sym.var("x"), mx.sym.var("w")
    outs, (last_i, last_x) = mx.sym.contrib.while_loop(
        cond=lambda i, x: i < 3,
        func=lambda i, x: ([x * w, x + 1], [i + 1, mx.sym.tanh(x * w)]),
        loop_vars=[i, x], max_iterations=5)
    group = mx.sym.Group(outs + [last_i, last_x])
    assert group.infer_shape(i=(1,), x=(2,), w=(2,))[1] == [(5, 2), (5, 2), (1,), (2,)]
    args = {"i": mx.nd.array([0]), "x": mx.nd.array([0.5, -0.3]), "w": mx.nd.array([1.5, 0.7])}
    grads = {k: mx.nd.zeros_like(v) for k, v in args.items()}
    ex = group.bind(mx.cpu(), args, args_grad=grads,
                    grad_req={"i": "null", "x": "write", "w": "write"})
    got = [o.asnumpy() for o in ex.forward(is_train=True)]
    np.testing.assert_allclose(got[0], [[0.75, -0.21], [0.952723, -0.144877],
                                        [1.11152, -0.10071], [0, 0], [0, 0]], rtol=1e-5)
    np.testing.assert_allclose(got[1][:3, 0], [1.5, 1.635149, 1.741014], rtol=1e-5)
    assert got[2].tolist() == [3.0]
    np.testing.assert_allclose(got[3], [0.804599, -0.100371], rtol=1e-5)
    ex.backward([mx.nd.ones((5, 2)), mx.nd.full((5, 2), 0.5), mx.nd.zeros(1), mx.nd.ones(2)])
    np.testing.assert_allclose(grads["w"].asnumpy(), [3.968512, -1.894122], rtol=1e-5)
    np.testing.assert_allclose(grads["x"].asnumpy(), [5.320392, 2.873455], rtol=1e-5)


@pytest.mark.parametrize(("a", "outputs", "grad_a", "grad_b"), [
    ([1.0, 2.0], [[0.5, 8.0], [0.5, 4.0]], [0.5, 4.0], [4.0, 5.0]),
    ([-3.0, 1.0], [[-3.5, -3.0], [-6.0, 2.0]], [7.0, 7.0], [-1.0, -1.0]),
])
def test_cond_runs_the_branch_the_value_picks_as_mxnet(a, outputs, grad_a, grad_b):
    x, y = mx.sym.var("a"), mx.sym.var("b")
    out = mx.sym.contrib.cond(mx.sym.sum(x) > 0, lambda: [x * y, y], lambda: [x - y, x * 2])
    args = {"a": mx.nd.array(a), "b": mx.nd.array([0.5, 4.0])}
    grads = {k: mx.nd.zeros_like(v) for k, v in args.items()}
    ex = mx.sym.Group(out).bind(mx.cpu(), args, args_grad=grads)
    assert [o.asnumpy().tolist() for o in ex.forward(is_train=True)] == outputs
    ex.backward([mx.nd.ones(2), mx.nd.full(2, 3.0)])
    assert grads["a"].asnumpy().tolist() == grad_a
    assert grads["b"].asnumpy().tolist() == grad_b


def test_while_loop_and_cond_errors():
    with pytest.raises(ValueError, match="max_iterations"):
        mx.sym.contrib.while_loop(lambda i: i < 3, lambda i: ([], [i + 1]), [mx.sym.var("i")])
    with pytest.raises(ValueError, match="consistent"):
        mx.sym.contrib.while_loop(lambda i: i < 3, lambda i: ([], [i + 1, i]),
                                  [mx.sym.var("i")], max_iterations=2)
    with pytest.raises(ValueError, match="as many"):
        mx.sym.contrib.cond(mx.sym.var("p"), lambda: [mx.sym.var("a")],
                            lambda: [mx.sym.var("a"), mx.sym.var("b")])


class _Decode(mx.gluon.HybridBlock):
    """A greedy decoding loop with while_loop and a final cond, as GluonNLP's
    HybridBeamSearchSampler writes it."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.dense = mx.gluon.nn.Dense(3, in_units=3)

    def hybrid_forward(self, F, x):
        def body(step, state):
            new = F.tanh(self.dense(state))
            return [new], [step + 1, new]

        outs, (steps, last) = F.contrib.while_loop(
            lambda step, state: F.sum(step) < 4, body,
            [F.zeros((1,)), x], max_iterations=6)
        picked = F.contrib.cond(F.sum(last) > 0, lambda: last * 2, lambda: last - 1)
        return outs[0], steps, picked


def test_hybridized_while_loop_and_cond_block_match_the_imperative_one():
    net = _Decode(prefix="decode_")
    net.initialize(mx.init.Xavier())
    x = mx.nd.array([[0.2, -0.5, 0.9]])
    imperative = [o.asnumpy() for o in net(x)]
    net.hybridize()
    hybrid = [o.asnumpy() for o in net(x)]
    for got, want in zip(hybrid, imperative):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert hybrid[0].shape == (6, 1, 3) and hybrid[1].tolist() == [4.0]


def test_control_flow_node_parameters_are_checked():
    body = mx.sym.Group([mx.sym.var("x") * 2, mx.sym.var("h") + 1])
    graph = json.loads(body.tojson())
    x, h = mx.nd.ones(2), mx.nd.ones(2)
    params = {"num_outputs": 2, "num_out_data": 1, "in_data_locs": (0,), "in_state_locs": (1,),
              "remain_locs": ()}
    out = mx.nd._internal._foreach(x.reshape((1, 2)), h, subgraphs=json.dumps([graph]),
                                   num_args=3, **params)
    assert [o.asnumpy().tolist() for o in out] == [[[2.0, 2.0]], [2.0, 2.0]]
    with pytest.raises(mx.ParamError, match="subgraphs holds 2 graph"):
        mx.nd._internal._foreach(x, h, subgraphs=json.dumps([graph, graph]), num_args=3,
                                 **params)
    with pytest.raises(mx.ParamError, match="JSON list"):
        mx.nd._internal._foreach(x, h, subgraphs=json.dumps(graph), num_args=3, **params)
