"""Optimizer updates with row_sparse gradients: lazy updates change only the gradient's
rows (weight decay and states included), standard updates equal the dense update, and
other sparse storage falls back to dense copies with the states written back."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx

SHAPE = (5, 3)
ROWS = [1, 3]


def grad_rsp(rng):
    values = rng.uniform(-1, 1, (len(ROWS), SHAPE[1])).astype(np.float32)
    dense = np.zeros(SHAPE, np.float32)
    dense[ROWS] = values
    return mx.nd.sparse.row_sparse_array((values, ROWS), shape=SHAPE), dense


def weight(rng, stype):
    host = rng.uniform(-1, 1, SHAPE).astype(np.float32)
    return mx.nd.array(host).tostype(stype), host


def lazy_reference(step, w, g, states):
    """Apply the dense numpy ``step`` to the gradient's rows only."""
    w, states = w.copy(), [s.copy() for s in states]
    new_w, new_states = step(w[ROWS], g[ROWS], [s[ROWS] for s in states])
    w[ROWS] = new_w
    for s, n in zip(states, new_states):
        s[ROWS] = n
    return w, states


def sgd_mom_step(lr, wd, mom):
    def step(w, g, states):
        (m,) = states
        m = mom * m - lr * (g + wd * w)
        return w + m, [m]
    return step


def adam_step(lr, wd, b1, b2, eps):
    def step(w, g, states):
        m, v = states
        g = g + wd * w
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        return w - lr * m / (np.sqrt(v) + eps), [m, v]
    return step


@pytest.mark.parametrize("w_stype", ["default", "row_sparse"])
def test_lazy_sgd_with_momentum_touches_only_the_gradient_rows(w_stype):
    rng = np.random.default_rng(0)
    w, w_host = weight(rng, w_stype)
    g, g_host = grad_rsp(rng)
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.05)
    state = opt.create_state(0, w)
    assert state.stype == w_stype
    expected_w, (expected_m,) = w_host, [np.zeros(SHAPE, np.float32)]
    for _ in range(2):
        opt.update(0, w, g, state)
        expected_w, (expected_m,) = lazy_reference(sgd_mom_step(0.1, 0.05, 0.9), expected_w,
                                                   g_host, [expected_m])
    assert w.stype == w_stype
    np.testing.assert_allclose(w.asnumpy(), expected_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state.asnumpy(), expected_m, rtol=1e-5, atol=1e-6)
    untouched = [r for r in range(SHAPE[0]) if r not in ROWS]
    np.testing.assert_array_equal(w.asnumpy()[untouched], w_host[untouched])


@pytest.mark.parametrize("w_stype", ["default", "row_sparse"])
def test_standard_sgd_equals_the_dense_update(w_stype):
    rng = np.random.default_rng(1)
    w, w_host = weight(rng, w_stype)
    g, g_host = grad_rsp(rng)
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.05, lazy_update=False)
    state = opt.create_state(0, w)
    assert state.stype == "default"
    opt.update(0, w, g, state)
    m = -0.1 * (g_host + 0.05 * w_host)
    np.testing.assert_allclose(w.asnumpy(), w_host + m, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(state.asnumpy(), m, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lazy", [True, False])
def test_adam_lazy_and_standard(lazy):
    rng = np.random.default_rng(2)
    w, w_host = weight(rng, "row_sparse")
    g, g_host = grad_rsp(rng)
    opt = mx.optimizer.Adam(learning_rate=0.01, wd=0.1, lazy_update=lazy)
    state = opt.create_state(0, w)
    opt.update(0, w, g, state)
    lr = 0.01 * np.sqrt(1 - 0.999) / (1 - 0.9)
    zeros = [np.zeros(SHAPE, np.float32)] * 2
    step = adam_step(lr, 0.1, 0.9, 0.999, 1e-8)
    if lazy:
        expected_w, expected_states = lazy_reference(step, w_host, g_host, zeros)
    else:
        expected_w, expected_states = step(w_host, g_host, zeros)
    np.testing.assert_allclose(w.asnumpy(), expected_w, rtol=1e-4, atol=1e-6)
    for s, e in zip(state, expected_states):
        np.testing.assert_allclose(s.asnumpy(), e, rtol=1e-4, atol=1e-6)


def test_sparse_adagrad_updates_rows_and_refuses_weight_decay():
    rng = np.random.default_rng(3)
    w, w_host = weight(rng, "default")
    g, g_host = grad_rsp(rng)
    opt = mx.optimizer.AdaGrad(learning_rate=0.1, eps=1e-7)
    history = opt.create_state(0, w)
    opt.update(0, w, g, history)
    expected_h = g_host ** 2
    expected_w = w_host.copy()
    expected_w[ROWS] -= 0.1 * g_host[ROWS] / np.sqrt(expected_h[ROWS] + 1e-7)
    np.testing.assert_allclose(w.asnumpy(), expected_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(history.asnumpy(), expected_h, rtol=1e-5)
    with pytest.raises(mx.base.MXNetError, match="wd=0"):
        mx.nd.sparse.adagrad_update(w, g, history, out=w, lr=0.1, wd=0.1)


def test_ftrl_on_row_sparse_weights_is_lazy():
    rng = np.random.default_rng(4)
    w, w_host = weight(rng, "row_sparse")
    g, g_host = grad_rsp(rng)
    opt = mx.optimizer.Ftrl(learning_rate=0.1, lamda1=0.01, beta=1.0)
    z, n = opt.create_state(0, w)
    opt.update(0, w, g, (z, n))
    out = w.asnumpy()
    untouched = [r for r in range(SHAPE[0]) if r not in ROWS]
    np.testing.assert_array_equal(out[untouched], w_host[untouched])
    gr = g_host[ROWS]
    z_rows = gr - (np.sqrt(gr * gr) - 0) * w_host[ROWS] / 0.1
    n_rows = gr * gr
    expected = (np.sign(z_rows) * 0.01 - z_rows) / ((1.0 + np.sqrt(n_rows)) / 0.1) \
        * (np.abs(z_rows) > 0.01)
    np.testing.assert_allclose(out[ROWS], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(n.asnumpy()[ROWS], n_rows, rtol=1e-5)


def test_csr_weights_fall_back_to_dense_with_states_written_back():
    rng = np.random.default_rng(5)
    host = rng.uniform(0, 1, SHAPE).astype(np.float32)
    w, g = mx.nd.array(host).tostype("csr"), mx.nd.array(host * 2).tostype("csr")
    mom = mx.nd.zeros(SHAPE, stype="csr")
    mx.nd.sgd_mom_update(w, g, mom, out=w, lr=0.1, momentum=0.9)
    assert w.stype == "csr" and mom.stype == "csr"
    np.testing.assert_allclose(mom.asnumpy(), -0.1 * host * 2, rtol=1e-6)
    np.testing.assert_allclose(w.asnumpy(), host - 0.2 * host, rtol=1e-6)


@pytest.mark.parametrize("g_stype", ["default", "row_sparse"])
def test_group_adagrad_keeps_one_rate_per_row(g_stype):
    rng = np.random.default_rng(6)
    w, w_host = weight(rng, "default")
    g, g_host = grad_rsp(rng)
    if g_stype == "default":
        g = g.tostype("default")
    opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.1, eps=1e-5)
    history = opt.create_state(0, w)
    assert history.shape == (SHAPE[0], 1)
    opt.update(0, w, g, history)
    expected_h = (g_host ** 2).mean(axis=1, keepdims=True)
    expected_w = w_host - 0.1 * g_host / np.sqrt(expected_h + 1e-5)
    np.testing.assert_allclose(history.asnumpy(), expected_h, rtol=1e-5)
    np.testing.assert_allclose(w.asnumpy(), expected_w, rtol=1e-5, atol=1e-6)
    with pytest.raises(mx.base.MXNetError, match="weight decay"):
        mx.optimizer.contrib.GroupAdaGrad(wd=0.1).update(0, w, g, history)
