"""gluon.rnn: the fused layers against their unfused cells, states, layouts,
deferred shapes, and the cells' unroll with valid lengths."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet import gluon


@pytest.mark.parametrize("make", [
    lambda: gluon.rnn.LSTM(5, num_layers=2, bidirectional=True, input_size=3),
    lambda: gluon.rnn.GRU(4, num_layers=2, input_size=3),
    lambda: gluon.rnn.RNN(4, activation="tanh", bidirectional=True, input_size=3),
])
def test_layer_matches_its_unfused_cells(make):
    layer = make()
    layer.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.uniform(shape=(4, 2, 3))
    fused = layer(x).asnumpy()
    stack = layer._unfuse()
    unfused, _ = stack.unroll(4, x, layout="TNC", merge_outputs=True)
    np.testing.assert_allclose(fused, unfused.asnumpy(), rtol=1e-5, atol=1e-6)


def test_layer_states_layout_and_errors():
    layer = gluon.rnn.LSTM(6, num_layers=2, layout="NTC")
    layer.initialize()
    x = mx.nd.ones((3, 5, 4))
    out, states = layer(x, layer.begin_state(batch_size=3))
    assert out.shape == (3, 5, 6) and [s.shape for s in states] == [(2, 3, 6)] * 2
    assert layer.l0_i2h_weight.shape == (24, 4)
    with pytest.raises(mx.MXNetError, match="Invalid recurrent state shape"):
        layer(x, [mx.nd.zeros((2, 4, 6))] * 2)
    with pytest.raises(mx.MXNetError, match="layout"):
        gluon.rnn.GRU(3, layout="CTN")
    assert "bidirectional" in repr(gluon.rnn.GRU(3, bidirectional=True))


def test_layer_inside_a_hybridized_network_infers_its_input_size():
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.rnn.LSTM(4, num_layers=2, bidirectional=True))
        net.add(gluon.nn.Dense(2, flatten=False))
    net.initialize()
    net.hybridize()
    x = mx.nd.random.uniform(shape=(3, 2, 5))
    with mx.autograd.record():
        y = net(x)
    y.backward()
    assert y.shape == (3, 2, 2)
    assert net[0].l0_i2h_weight.shape == (16, 5) and net[0].r0_i2h_weight.shape == (16, 5)
    assert np.abs(net[0].l0_i2h_weight.grad().asnumpy()).sum() > 0


def test_layer_parameters_save_under_mxnet_names(tmp_path):
    layer = gluon.rnn.GRU(3, bidirectional=True, input_size=2)
    layer.initialize()
    names = sorted(layer._collect_params_with_prefix())
    assert names[0] == "_unfused.0.l_cell.h2h_bias"
    path = str(tmp_path / "gru.params")
    layer.save_parameters(path)
    again = gluon.rnn.GRU(3, bidirectional=True, input_size=2)
    again.load_parameters(path)
    np.testing.assert_array_equal(again.r0_i2h_weight.data().asnumpy(),
                                  layer.r0_i2h_weight.data().asnumpy())


@pytest.mark.parametrize("cell_type", [gluon.rnn.RNNCell, gluon.rnn.LSTMCell,
                                       gluon.rnn.GRUCell])
def test_cells_unroll_on_arrays(cell_type):
    cell = cell_type(4)
    cell.initialize()
    x = mx.nd.random.uniform(shape=(2, 3, 5))
    outputs, states = cell.unroll(3, x, merge_outputs=True)
    assert outputs.shape == (2, 3, 4) and cell.i2h_weight.shape[1] == 5
    steps, _ = cell.unroll(3, x, merge_outputs=False)
    np.testing.assert_allclose(steps[2].asnumpy(), outputs.asnumpy()[:, 2], rtol=1e-6)
    np.testing.assert_allclose(states[0].asnumpy(), outputs.asnumpy()[:, 2], rtol=1e-6)


def test_valid_length_masks_outputs_and_picks_last_states():
    cell = gluon.rnn.GRUCell(3)
    cell.initialize()
    x = mx.nd.random.uniform(shape=(2, 4, 2))
    valid = mx.nd.array([2, 4])
    outputs, states = cell.unroll(4, x, merge_outputs=True, valid_length=valid)
    full, _ = cell.unroll(4, x, merge_outputs=True)
    out, ref = outputs.asnumpy(), full.asnumpy()
    assert (out[0, 2:] == 0).all()
    np.testing.assert_allclose(out[0, :2], ref[0, :2], rtol=1e-6)
    np.testing.assert_allclose(states[0].asnumpy(), [ref[0, 1], ref[1, 3]], rtol=1e-6)


def test_bidirectional_with_valid_length_reverses_each_sequence_in_place():
    left, right = gluon.rnn.RNNCell(2, prefix="l_"), gluon.rnn.RNNCell(2, prefix="r_")
    cell = gluon.rnn.BidirectionalCell(left, right)
    cell.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.uniform(shape=(2, 3, 4))
    out, _ = cell.unroll(3, x, merge_outputs=True, valid_length=mx.nd.array([2, 3]))
    # the backward half of sequence 0 sees only its first two steps, last one first
    short, _ = right.unroll(2, mx.nd.array(x.asnumpy()[0:1, 1::-1]), merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy()[0, :2, 2:], short.asnumpy()[0, ::-1], rtol=1e-5)
    assert (out.asnumpy()[0, 2] == 0).all()


def test_modifier_and_stack_cells():
    stack = gluon.rnn.HybridSequentialRNNCell()
    with stack.name_scope():
        stack.add(gluon.rnn.ResidualCell(gluon.rnn.LSTMCell(3, input_size=3)))
        stack.add(gluon.rnn.DropoutCell(0.5))
        stack.add(gluon.rnn.ZoneoutCell(gluon.rnn.GRUCell(3), 0.5, 0.5))
    stack.initialize()
    out, states = stack.unroll(4, mx.nd.ones((2, 4, 3)), merge_outputs=True)
    assert out.shape == (2, 4, 3) and len(states) == 3
    inner = gluon.rnn.GRUCell(2)
    gluon.rnn.ResidualCell(inner)
    with pytest.raises(mx.MXNetError, match="modifier"):
        inner.begin_state(batch_size=1)
    with pytest.raises(mx.MXNetError, match="already wrapped"):
        gluon.rnn.ZoneoutCell(inner)


def test_projected_lstm_layer():
    layer = gluon.rnn.LSTM(6, projection_size=3, num_layers=2, bidirectional=True,
                           layout="NTC")
    net = gluon.nn.HybridSequential()
    net.add(layer)
    net.initialize(mx.init.Uniform(0.3))
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 4, 5))
    with mx.autograd.record():
        y = net(x)
    y.backward()
    assert y.shape == (2, 4, 6)
    assert layer.l0_i2h_weight.shape == (24, 5) and layer.l1_i2h_weight.shape == (24, 6)
    assert layer.l0_h2h_weight.shape == (24, 3) and layer.r1_h2r_weight.shape == (3, 6)
    assert np.abs(layer.r1_h2r_weight.grad().asnumpy()).sum() > 0
    assert "_unfused.1.r_cell.h2r_weight" in layer._collect_params_with_prefix()
    out, states = layer(x, layer.begin_state(batch_size=2))
    assert [s.shape for s in states] == [(4, 2, 3), (4, 2, 6)]
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy(), rtol=1e-5)
    with pytest.raises(mx.MXNetError, match="no unfused form"):
        layer._unfuse()
