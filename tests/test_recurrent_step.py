"""The step arithmetic shared by mx.rnn's and gluon.rnn's cells: the LSTM and GRU
gates against numpy in every spelling, the nodes each spelling names, and zoneout."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import dagnet as mx
from dagnet._recurrent_step import (
    ElemwiseSpelling,
    NamedElemwiseSpelling,
    OperatorSpelling,
    gru_step,
    lstm_step,
    zoneout,
)

SPELLINGS = {"operator": lambda F: OperatorSpelling(), "elemwise": ElemwiseSpelling,
             "named": lambda F: NamedElemwiseSpelling(F, "t0_")}


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def _arrays(*shapes):
    rng = np.random.default_rng(0)
    return [rng.uniform(-1, 1, shape).astype(np.float32) for shape in shapes]


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_lstm_step_matches_numpy(spelling):
    F = mx.nd
    i2h, h2h, c = _arrays((2, 12), (2, 12), (2, 3))
    sigmoid = functools.partial(F.Activation, act_type="sigmoid")
    tanh = functools.partial(F.Activation, act_type="tanh")
    h_out, c_out = lstm_step(F, SPELLINGS[spelling](F), F.array(i2h), F.array(h2h),
                             F.array(c), "t0_", sigmoid, tanh)
    i, f, g, o = np.split(i2h + h2h, 4, axis=1)
    want_c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    np.testing.assert_allclose(c_out.asnumpy(), want_c, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h_out.asnumpy(), _sigmoid(o) * np.tanh(want_c), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_gru_step_matches_numpy(spelling):
    F = mx.nd
    i2h, h2h, h = _arrays((2, 9), (2, 9), (2, 3))
    out = gru_step(F, SPELLINGS[spelling](F), F.array(i2h), F.array(h2h), F.array(h), "t0_",
                   functools.partial(F.Activation, act_type="tanh"))
    i_r, i_z, i_n = np.split(i2h, 3, axis=1)
    h_r, h_z, h_n = np.split(h2h, 3, axis=1)
    r, z = _sigmoid(i_r + h_r), _sigmoid(i_z + h_z)
    want = (1 - z) * np.tanh(i_n + r * h_n) + z * h
    np.testing.assert_allclose(out.asnumpy(), want, rtol=1e-5, atol=1e-6)


def _internals(symbol):
    return set(symbol.get_internals().list_outputs())


def test_each_spelling_writes_its_families_nodes():
    F = mx.sym
    i2h, h2h, h = F.var("i2h"), F.var("h2h"), F.var("h")
    tanh = functools.partial(F.Activation, act_type="tanh")
    named = _internals(gru_step(F, NamedElemwiseSpelling(F, "t0_"), i2h, h2h, h, "t0_", tanh))
    assert {"t0_plus0_output", "t0_mul0_output", "t0_ones_like0_output", "t0_minus0_output",
            "t0_mul20_output", "t0_r_act_output", "t0_h_act_output", "t0_out_output"} <= named
    with mx.name.NameManager():
        auto = _internals(gru_step(F, OperatorSpelling(), i2h, h2h, h, "t0__", tanh,
                                   out_name="t0_out", axis=1))
    assert {"_plus0_output", "_mul0_output", "_rminusscalar0_output",
            "t0__i2h_slice_output0", "t0_out_output"} <= auto
    with mx.name.NameManager():
        hidden, _ = lstm_step(F, ElemwiseSpelling(F), i2h, h2h, h, "t0_", tanh, tanh,
                              out_name="t0_hidden")
    assert {"elemwise_add0_output", "elemwise_mul0_output", "t0_state_output",
            "t0_hidden_output"} <= _internals(hidden)


def test_zoneout_keeps_each_element_new_or_previous_in_training():
    F = mx.nd
    new, prev, new_state, old_state = (F.array(a) for a in _arrays(*[(4, 50)] * 4))
    out, (state,) = zoneout(F, new, [new_state], prev, [old_state], 0.5, 0.5)
    np.testing.assert_array_equal(out.asnumpy(), new.asnumpy())  # not training: no mask
    np.testing.assert_array_equal(state.asnumpy(), new_state.asnumpy())
    with mx.autograd.train_mode():
        out, (state,) = zoneout(F, new, [new_state], prev, [old_state], 0.5, 0.5)
    for got, fresh, old in ((out, new, prev), (state, new_state, old_state)):
        kept_new = got.asnumpy() == fresh.asnumpy()
        assert (kept_new | (got.asnumpy() == old.asnumpy())).all()
        assert 0 < kept_new.mean() < 1
