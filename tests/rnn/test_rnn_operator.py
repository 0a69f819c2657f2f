"""The fused RNN operator against the step cells, its dropout and its errors (its
forward and gradient are also checked by the operator conformance suite)."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
def test_fused_cell_matches_its_unfused_cells(mode):
    fused = mx.rnn.FusedRNNCell(4, num_layers=2, mode=mode, bidirectional=True, prefix="f_",
                                get_next_state=True)
    steps, batch, features = 3, 2, 5
    data = mx.sym.Variable("data")
    out, states = fused.unroll(steps, data, layout="TNC", merge_outputs=True)
    args = out.list_arguments()
    shapes = dict(zip(args, out.infer_shape(data=(steps, batch, features))[0]))
    rng = np.random.RandomState(1)
    values = {name: mx.nd.array(rng.uniform(-0.5, 0.5, shape)) for name, shape in shapes.items()
              if not name.startswith("f_begin_state")}
    values.update({name: mx.nd.zeros(shape) for name, shape in shapes.items()
                   if name.startswith("f_begin_state")})
    got = out.eval(**values)[0].asnumpy()
    assert got.shape == (steps, batch, 8)

    unfused = fused.unfuse()
    u_out, _ = unfused.unroll(steps, data, layout="TNC", merge_outputs=True)
    weights = fused.unpack_weights({"f_parameters": values["f_parameters"]})
    weights = unfused.pack_weights(weights)
    feed = {"data": values["data"], **weights}
    feed.update({name: mx.nd.zeros((batch, 4)) for name in u_out.list_arguments()
                 if "begin_state" in name})
    want = u_out.eval(**feed)[0].asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert len(states) == (2 if mode == "lstm" else 1)


def test_dropout_between_layers_only_in_training():
    x = mx.nd.array(np.random.rand(3, 2, 4))
    size = 4 * 3 * (4 + 3 + 2) + 4 * 3 * (3 + 3 + 2)
    params = mx.nd.array(np.random.uniform(-1, 1, size))
    h0 = mx.nd.zeros((2, 2, 3))
    kwargs = {"state_size": 3, "num_layers": 2, "mode": "lstm", "p": 0.9}
    plain = mx.nd.RNN(x, params, h0, h0, **kwargs).asnumpy()
    again = mx.nd.RNN(x, params, h0, h0, **{**kwargs, "p": 0.0}).asnumpy()
    np.testing.assert_array_equal(plain, again)
    with mx.autograd.train_mode():
        dropped = mx.nd.RNN(x, params, h0, h0, **kwargs).asnumpy()
    assert not np.allclose(dropped, plain)


def test_rnn_shapes_and_errors():
    data = mx.sym.Variable("data")
    rnn = mx.sym.RNN(data=data, state_size=6, num_layers=2, mode="gru", bidirectional=True,
                     state_outputs=True, name="rnn")
    assert rnn.list_arguments() == ["data", "rnn_parameters", "rnn_state"]
    assert rnn.list_outputs() == ["rnn_output", "rnn_state_output"]  # MXNet's names
    args, outs, _ = rnn.infer_shape(data=(5, 3, 4))
    assert outs == [(5, 3, 12), (4, 3, 6)]
    assert args[1] == (3 * 6 * (4 + 6 + 2) * 2 + 3 * 6 * (12 + 6 + 2) * 2,)
    with pytest.raises(mx.MXNetError, match="use_sequence_length"):
        mx.sym.RNN(data=data, state_size=2, num_layers=1, mode="lstm", use_sequence_length=True)
    with pytest.raises(mx.MXNetError, match="mode"):
        mx.sym.RNN(data=data, state_size=2, num_layers=1, mode="elman")


@pytest.mark.filterwarnings("ignore:Parameters already initialized")  # fit after init_params
def test_fused_cell_initializes_gate_by_gate_and_trains():
    mx.random.seed(0)  # the initial weights (Xavier) too: six epochs train most draws
    cell = mx.rnn.FusedRNNCell(4, num_layers=1, mode="lstm", prefix="f_", forget_bias=3.0)
    out, _ = cell.unroll(3, mx.sym.Variable("data"), layout="NTC", merge_outputs=True)
    pred = mx.sym.FullyConnected(mx.sym.Reshape(out, shape=(-1, 4)), num_hidden=2)
    label = mx.sym.Reshape(mx.sym.Variable("softmax_label"), shape=(-1,))
    net = mx.sym.SoftmaxOutput(pred, label, name="softmax")
    rng = np.random.RandomState(0)
    x = rng.rand(32, 3, 2).astype("float32")
    y = (x.sum(axis=2) > 1).astype("float32")
    train = mx.io.NDArrayIter(x, y, batch_size=8)
    mod = mx.mod.Module(net)
    mod.bind(train.provide_data, train.provide_label)
    mod.init_params(mx.init.Xavier())
    parts = cell.unpack_weights(mod.get_params()[0])
    np.testing.assert_array_equal(parts["f_l0_i2h_f_bias"].asnumpy(), 3.0)
    np.testing.assert_array_equal(parts["f_l0_h2h_i_bias"].asnumpy(), 0.0)
    assert np.abs(parts["f_l0_i2h_c_weight"].asnumpy()).sum() > 0
    mod.fit(train, num_epoch=6, optimizer="adam", optimizer_params={"learning_rate": 0.05})
    assert mod.score(train, "acc")[0][1] > 0.8


def test_lstm_projection_shapes_and_errors():
    data = mx.sym.Variable("data")
    rnn = mx.sym.RNN(data=data, state_size=6, num_layers=2, mode="lstm", bidirectional=True,
                     projection_size=2, state_outputs=True, name="p")
    args, outs, _ = rnn.infer_shape(data=(5, 3, 4))
    shapes = dict(zip(rnn.list_arguments(), args))
    assert outs == [(5, 3, 4), (4, 3, 2), (4, 3, 6)]
    assert shapes["p_state"] == (4, 3, 2) and shapes["p_state_cell"] == (4, 3, 6)
    per_direction = [4 * 6 * (4 + 2 + 2) + 2 * 6, 4 * 6 * (4 + 2 + 2) + 2 * 6]
    assert shapes["p_parameters"] == (2 * sum(per_direction),)
    with pytest.raises(mx.MXNetError, match="mode='lstm' only"):
        mx.sym.RNN(data=data, state_size=2, num_layers=1, mode="gru", projection_size=1)
