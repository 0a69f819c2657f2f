"""gluon.contrib.rnn: LSTMPCell against numpy and the fused projected LSTM layer, and
VariationalDropoutCell's one-mask-per-sequence dropout."""

from __future__ import annotations

import numpy as np

import dagnet as mx
from dagnet import gluon


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def test_lstmp_cell_step_matches_numpy():
    cell = gluon.contrib.rnn.LSTMPCell(4, projection_size=3, input_size=2)
    cell.initialize(mx.init.Uniform(0.5))
    x = np.random.uniform(-1, 1, (5, 2)).astype(np.float32)
    r0, c0 = (np.random.uniform(-1, 1, s).astype(np.float32) for s in ((5, 3), (5, 4)))
    out, (r, c) = cell(mx.nd.array(x), [mx.nd.array(r0), mx.nd.array(c0)])
    p = {k.split("_", 1)[1]: v.data().asnumpy() for k, v in cell.collect_params().items()}
    gates = x @ p["i2h_weight"].T + p["i2h_bias"] + r0 @ p["h2h_weight"].T + p["h2h_bias"]
    i, f, g, o = np.split(gates, 4, axis=1)
    want_c = _sigmoid(f) * c0 + _sigmoid(i) * np.tanh(g)
    want_r = (_sigmoid(o) * np.tanh(want_c)) @ p["h2r_weight"].T
    np.testing.assert_allclose(c.asnumpy(), want_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out.asnumpy(), want_r, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r.asnumpy(), want_r, rtol=1e-5, atol=1e-6)
    assert repr(cell) == "LSTMPCell(2 -> 16 -> 3)"


def test_lstmp_cells_unroll_as_the_fused_projected_lstm():
    fused = gluon.rnn.LSTM(6, projection_size=3, num_layers=2, layout="TNC", prefix="l_")
    stack = gluon.rnn.HybridSequentialRNNCell(prefix="l_")
    with stack.name_scope():
        for i in range(2):
            stack.add(gluon.contrib.rnn.LSTMPCell(6, projection_size=3, prefix=f"l{i}_"))
    x = mx.nd.random.uniform(shape=(4, 2, 5))
    fused.initialize()
    stack.initialize()
    fused_state = fused.begin_state(2)
    fused.infer_shape(x, fused_state)
    stack.unroll(4, x, layout="TNC", merge_outputs=True)  # settles the deferred shapes
    for name, param in fused.collect_params().items():
        value = mx.nd.random.uniform(-0.5, 0.5, shape=param.shape)
        param.set_data(value)
        stack.collect_params()[name].set_data(value)
    want, _ = fused(x, fused_state)
    got, _ = stack.unroll(4, x, layout="TNC", merge_outputs=True)
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-4, atol=1e-5)


def test_variational_dropout_keeps_one_mask_per_sequence():
    cell = gluon.contrib.rnn.VariationalDropoutCell(gluon.rnn.RNNCell(8, input_size=3),
                                                   drop_outputs=0.5, drop_states=0.5)
    cell.initialize(mx.init.Uniform(1.0))
    x = mx.nd.ones((2, 6, 3))
    with mx.autograd.train_mode():
        outs, _ = cell.unroll(6, x, merge_outputs=True)
    dropped = outs.asnumpy() == 0
    assert dropped[:, 0].any() and not dropped[:, 0].all()
    for t in range(1, 6):  # the same units are dropped at every step
        np.testing.assert_array_equal(dropped[:, t], dropped[:, 0])
    plain, _ = cell.unroll(6, x, merge_outputs=True)  # inference: no dropout
    base = gluon.rnn.RNNCell(8, input_size=3, params=cell.base_cell.collect_params())
    want, _ = base.unroll(6, x, merge_outputs=True)
    np.testing.assert_allclose(plain.asnumpy(), want.asnumpy(), rtol=1e-6)


def test_conv_rnn_cell_step_is_two_convolutions():
    cell = gluon.contrib.rnn.Conv2DRNNCell((0, 6, 5), 4, (3, 3), (3, 3), activation="tanh")
    x = mx.nd.random.uniform(-1, 1, shape=(2, 3, 6, 5))
    h = mx.nd.random.uniform(-1, 1, shape=(2, 4, 4, 3))
    cell.initialize(mx.init.Uniform(0.5))
    out, (state,) = cell(x, [h])
    assert cell.i2h_weight.shape == (4, 3, 3, 3)  # the input channels, inferred
    p = {k[len(cell.prefix):]: v.data() for k, v in cell.collect_params().items()}
    want = mx.nd.tanh(
        mx.nd.Convolution(x, p["i2h_weight"], p["i2h_bias"], kernel=(3, 3), num_filter=4)
        + mx.nd.Convolution(h, p["h2h_weight"], p["h2h_bias"], kernel=(3, 3), pad=(1, 1),
                            num_filter=4))
    np.testing.assert_allclose(out.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)


def test_conv_lstm_and_gru_cells_channel_last_match_channel_first():
    x = mx.nd.random.uniform(-1, 1, shape=(2, 3, 3, 5, 4))  # (N, T, C, H, W)
    for kind in ("Conv2DLSTMCell", "Conv2DGRUCell"):
        first = getattr(gluon.contrib.rnn, kind)((3, 5, 4), 2, (3, 1), 3)
        last = getattr(gluon.contrib.rnn, kind)((5, 4, 3), 2, (3, 1), 3, conv_layout="NHWC")
        first.initialize(mx.init.Uniform(0.5))
        last.initialize()
        for pa, pb in zip(first.collect_params().values(), last.collect_params().values()):
            value = pa.data().asnumpy()
            pb.set_data(mx.nd.array(np.moveaxis(value, 1, -1) if value.ndim > 1 else value))
        want, _ = first.unroll(3, x, layout="NTC", merge_outputs=True)
        moved = mx.nd.array(np.moveaxis(x.asnumpy(), 2, -1))
        got, states = last.unroll(3, moved, layout="NTC", merge_outputs=True)
        assert got.shape == (2, 3, 3, 4, 2) and states[0].shape == (2, 3, 4, 2)
        np.testing.assert_allclose(got.asnumpy(), np.moveaxis(want.asnumpy(), 2, -1),
                                   rtol=1e-5, atol=1e-6)
