"""mx.rnn's symbolic cells: names, shapes, values and weight packing."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx


def _inputs(n, prefix="rnn_t"):
    return [mx.sym.Variable(f"{prefix}{i}_data") for i in range(n)]


def _shapes(n, shape=(10, 50)):
    return {f"rnn_t{i}_data": shape for i in range(n)}


@pytest.mark.parametrize("make,gates", [
    (lambda: mx.rnn.RNNCell(20, prefix="rnn_"), 1),
    (lambda: mx.rnn.LSTMCell(20, prefix="rnn_"), 4),
    (lambda: mx.rnn.GRUCell(20, prefix="rnn_"), 3),
])
def test_step_cells_unroll(make, gates):
    cell = make()
    outputs, states = cell.unroll(3, _inputs(3))
    group = mx.sym.Group(outputs)
    assert sorted(cell.params._params) == ["rnn_h2h_bias", "rnn_h2h_weight", "rnn_i2h_bias",
                                           "rnn_i2h_weight"]
    assert group.list_outputs() == [f"rnn_t{i}_out_output" for i in range(3)]
    args, outs, _ = group.infer_shape(**_shapes(3))
    assert outs == [(10, 20)] * 3
    assert dict(zip(group.list_arguments(), args))["rnn_i2h_weight"] == (gates * 20, 50)
    assert len(states) == (2 if gates == 4 else 1)


def test_dense_cells_ask_for_their_variables_in_mxnets_order():
    # the order of first lookup is the variables' order in params
    assert list(mx.rnn.LSTMCell(2, prefix="c_").params._params) == [
        "c_i2h_weight", "c_h2h_weight", "c_i2h_bias", "c_h2h_bias"]
    for cell in (mx.rnn.RNNCell(2, prefix="c_"), mx.rnn.GRUCell(2, prefix="c_")):
        assert list(cell.params._params) == ["c_i2h_weight", "c_i2h_bias", "c_h2h_weight",
                                             "c_h2h_bias"]


def test_rnn_cell_computes_tanh_of_affine_maps():
    cell = mx.rnn.RNNCell(3, prefix="r_")
    out, _ = cell.unroll(2, _inputs(2))
    x0, x1 = np.random.rand(2, 4), np.random.rand(2, 4)
    wi, wh = np.random.rand(3, 4), np.random.rand(3, 3)
    bi, bh = np.random.rand(3), np.random.rand(3)
    got = mx.sym.Group(out).eval(rnn_t0_data=mx.nd.array(x0), rnn_t1_data=mx.nd.array(x1),
                                 r_i2h_weight=mx.nd.array(wi), r_h2h_weight=mx.nd.array(wh),
                                 r_i2h_bias=mx.nd.array(bi), r_h2h_bias=mx.nd.array(bh))
    h0 = np.tanh(x0 @ wi.T + bi + bh)
    h1 = np.tanh(x1 @ wi.T + bi + h0 @ wh.T + bh)
    np.testing.assert_allclose(got[1].asnumpy(), h1, rtol=1e-5)


def test_lstm_forget_bias_initializes():
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(5, forget_bias=2.0, prefix="l0_"))
    sym, _ = stack.unroll(1, mx.sym.Variable("data"), merge_outputs=True)
    mod = mx.mod.Module(sym, label_names=None)
    mod.bind(data_shapes=[("data", (4, 1, 3))])
    mod.init_params()
    bias = mod.get_params()[0]["l0_i2h_bias"].asnumpy()
    np.testing.assert_array_equal(bias, np.r_[np.zeros(5), np.full(5, 2.0), np.zeros(10)])


def test_residual_and_bidirectional_values():
    cell = mx.rnn.ResidualCell(mx.rnn.BidirectionalCell(mx.rnn.GRUCell(2, prefix="l_"),
                                                        mx.rnn.GRUCell(2, prefix="r_")))
    out, _ = cell.unroll(2, _inputs(2), merge_outputs=False)
    zeros = {f"{d}_{g}_{k}": mx.nd.zeros((6, 4) if k == "weight" and g == "i2h" else
                                         (6, 2) if k == "weight" else (6,))
             for d in "lr" for g in ("i2h", "h2h") for k in ("weight", "bias")}
    got = mx.sym.Group(out).eval(rnn_t0_data=mx.nd.ones((3, 4)) * 5,
                                 rnn_t1_data=mx.nd.ones((3, 4)), **zeros)
    # zero weights: the GRU state stays 0, so the output is the input itself
    assert (got[0].asnumpy() == 5).all() and (got[1].asnumpy() == 1).all()


def test_stack_and_bidirectional_names():
    bi = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(8, prefix="a_"), mx.rnn.LSTMCell(8, prefix="b_"),
                                  output_prefix="bi_")
    outputs, states = bi.unroll(3, _inputs(3))
    assert mx.sym.Group(outputs).list_outputs() == [f"bi_t{i}_output" for i in range(3)]
    assert mx.sym.Group(outputs).infer_shape(**_shapes(3))[1] == [(10, 16)] * 3
    merged, _ = bi.unroll(3, mx.sym.Variable("x"), merge_outputs=True)
    assert merged.infer_shape(x=(10, 3, 50))[1] == [(10, 3, 16)]


def test_zoneout_and_dropout_cells_keep_shapes():
    cell = mx.rnn.ZoneoutCell(mx.rnn.RNNCell(7, prefix="rnn_"), zoneout_outputs=0.5,
                              zoneout_states=0.5)
    outputs, _ = cell.unroll(3, _inputs(3))
    assert mx.sym.Group(outputs).infer_shape(**_shapes(3))[1] == [(10, 7)] * 3
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.RNNCell(7, prefix="a_"))
    stack.add(mx.rnn.DropoutCell(0.5))
    out, _ = stack.unroll(3, mx.sym.Variable("x"), merge_outputs=True)
    assert out.infer_shape(x=(10, 3, 50))[1] == [(10, 3, 7)]
    with pytest.raises(mx.MXNetError, match="ZoneoutCell cannot wrap"):
        mx.rnn.ZoneoutCell(mx.rnn.FusedRNNCell(4))


def test_a_group_given_params_holds_only_cells_without_their_own():
    stack = mx.rnn.SequentialRNNCell(params=mx.rnn.RNNParams("s_"))
    stack.add(mx.rnn.DropoutCell(0.5))
    with pytest.raises(mx.rnn.RNNCellError, match="give params to the SequentialRNNCell or "
                                                  "to its cells, not both"):
        stack.add(mx.rnn.RNNCell(3, prefix="a_"))  # a dense cell asks for its variables
    mx.rnn.BidirectionalCell(mx.rnn.DropoutCell(0.5), mx.rnn.DropoutCell(0.5),
                             params=mx.rnn.RNNParams("b_"))
    with pytest.raises(mx.rnn.RNNCellError, match="give params to the BidirectionalCell"):
        mx.rnn.BidirectionalCell(mx.rnn.RNNCell(3, prefix="l_"), mx.rnn.DropoutCell(0.5),
                                 params=mx.rnn.RNNParams("b_"))


def test_modified_cell_is_used_through_the_modifier():
    inner = mx.rnn.GRUCell(4)
    mx.rnn.ResidualCell(inner)
    with pytest.raises(mx.MXNetError, match="modifier"):
        inner.begin_state()


def test_unfuse_names_layers():
    cell = mx.rnn.FusedRNNCell(10, num_layers=3, mode="lstm", prefix="test_",
                               bidirectional=True, dropout=0.5).unfuse()
    outputs, _ = cell.unroll(3, _inputs(3))
    group = mx.sym.Group(outputs)
    assert group.list_outputs() == [f"test_bi_l2_t{i}_output" for i in range(3)]
    assert group.infer_shape(**_shapes(3))[1] == [(10, 20)] * 3


@pytest.mark.parametrize("cls,gates", [(mx.rnn.ConvRNNCell, 1), (mx.rnn.ConvLSTMCell, 4),
                                       (mx.rnn.ConvGRUCell, 3)])
def test_conv_cells(cls, gates):
    cell = cls(input_shape=(1, 3, 16, 10), num_hidden=5, prefix="rnn_")
    outputs, _ = cell.unroll(2, _inputs(2))
    group = mx.sym.Group(outputs)
    args, outs, _ = group.infer_shape(**_shapes(2, (1, 3, 16, 10)))
    assert outs == [(1, 5, 16, 10)] * 2
    assert dict(zip(group.list_arguments(), args))["rnn_h2h_weight"] == (5 * gates, 5, 3, 3)
    with pytest.raises(mx.MXNetError, match="odd"):
        cls(input_shape=(1, 3, 8, 8), num_hidden=2, h2h_kernel=(2, 2))


def test_pack_and_unpack_are_inverse():
    cell = mx.rnn.LSTMCell(3, prefix="l_")
    args = {"l_i2h_weight": mx.nd.array(np.random.rand(12, 2)),
            "l_h2h_weight": mx.nd.array(np.random.rand(12, 3)),
            "l_i2h_bias": mx.nd.array(np.random.rand(12)),
            "l_h2h_bias": mx.nd.array(np.random.rand(12))}
    unpacked = cell.unpack_weights(args)
    assert sorted(unpacked)[:2] == ["l_h2h_c_bias", "l_h2h_c_weight"]
    np.testing.assert_array_equal(unpacked["l_i2h_f_weight"].asnumpy(),
                                  args["l_i2h_weight"].asnumpy()[3:6])
    packed = cell.pack_weights(unpacked)
    for name, value in args.items():
        np.testing.assert_array_equal(packed[name].asnumpy(), value.asnumpy())


def test_fused_pack_unpack_round_trip():
    cell = mx.rnn.FusedRNNCell(4, num_layers=2, mode="gru", bidirectional=True, prefix="f_")
    n_in, h, m, b = 3, 4, 3, 2
    total = (n_in + h + 2) * h * m * b + (2 - 1) * m * h * (h + b * h + 2) * b
    flat = mx.nd.array(np.arange(total, dtype=np.float32))
    parts = cell.unpack_weights({"f_parameters": flat})
    assert parts["f_r1_i2h_z_weight"].shape == (4, 8)
    assert parts["f_l0_h2h_r_weight"].shape == (4, 4)
    back = cell.pack_weights(parts)["f_parameters"]
    np.testing.assert_array_equal(back.asnumpy(), flat.asnumpy())
