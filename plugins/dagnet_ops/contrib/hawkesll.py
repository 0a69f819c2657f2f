"""``_contrib_hawkesll`` (MXNet's ``hawkes_ll.cc``): the log-likelihood of N sequences of
marked events under a K-mark Hawkes process with exponential decay.

Inputs: ``lda`` (N, K) background intensities mu, ``alpha`` (K,) branching ratios,
``beta`` (K,) decay rates, ``state`` (N, K) each mark's excitation carried over from
before, ``lags`` (N, T) inter-arrival times, ``marks`` (N, T) int32 marks,
``valid_length`` (N,) how many events of each row count, ``max_time`` (N,) the end of
the observation window.  For each counted event at time t with mark c, after the last
event of mark c at time t_c (0 at the start), with ``d = t - t_c`` and
``e = exp(-beta_c d)``, the intensity is ``mu_c + alpha_c beta_c s_c e``, the compensator
``mu_c d + alpha_c s_c (1 - e)``, and the state becomes ``1 + s_c e``.  The log-likelihood
adds ``log intensity - compensator`` per event and subtracts each mark's compensator up to
``max_time``.  Outputs: the (N,) log-likelihoods and the (N, K) states decayed to
``max_time``.

Gradient: exact, for mu, alpha, beta and the input state, from both outputs (MXNet's
own backward reads only the log-likelihood's head gradient and leaves the state's
gradient unset).  ``lags``, ``marks``, ``valid_length`` and ``max_time`` are data, not
parameters: their gradient is zero (MXNet refuses to compute one).
"""

from __future__ import annotations

import numpy as np

from dagnet.operator import XP, Case, Domain, Gradient, Op, OpReqType

from .._draw import Draw
from ._common import contrib_error, put

__all__ = ["OPS"]

_NAME = "_contrib_hawkesll"
_INPUTS = ["lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time"]
_RANKS = [2, 1, 1, 2, 2, 2, 1, 1]


def _infer_shape(attrs, ins, outs):
    for name, rank, shape in zip(_INPUTS, _RANKS, ins):
        if shape is not None and len(shape) != rank:
            raise contrib_error(_NAME, f"{name} must be {rank}-D, got shape {tuple(shape)}")
    lda, lags = ins[0], ins[4]
    if lda is None or lags is None:
        return ins, outs
    n, k = lda
    t = lags[1]
    want = [(n, k), (k,), (k,), (n, k), (n, t), (n, t), (n,), (n,)]
    for name, shape, expected in zip(_INPUTS, ins, want):
        if shape is not None and tuple(shape) != expected:
            raise contrib_error(
                _NAME, f"{name} has shape {tuple(shape)}, expected {expected} for N={n} "
                       f"sequences of T={t} events and K={k} marks (N and K from lda, T from "
                       f"lags)")
    return want, [(n,), (n, k)]


def _infer_type(attrs, ins, outs):
    dtype = next((t for i, t in enumerate(ins) if i != 5 and t is not None), None)
    if dtype is None:
        dtype = next((t for t in outs if t is not None), None)
    if ins[5] is not None and np.dtype(ins[5]) != np.int32:
        raise contrib_error(_NAME, f"marks must be int32, got {np.dtype(ins[5])}; cast them "
                                   f"with .astype('int32')")
    types = [dtype] * 8
    types[5] = np.dtype(np.int32)
    return types, [dtype, dtype]


def _scan(xp, mu, alpha, beta, state, lags, marks, valid, max_time, grads: bool):
    """Walk the events of every row at once.  Returns the log-likelihood, the final state
    and, with ``grads``, the per-row derivatives of the log-likelihood (d mu (N, K),
    d alpha (N, K), d beta (N, K), d state0 (N, K)) and of the final state (d beta, d
    state0, both (N, K), the state of mark k depending only on beta_k and state0_k)."""
    n, k = mu.shape
    rows = xp.arange(n)
    s = state.copy()
    last = xp.zeros((n, k), dtype=mu.dtype)
    now = xp.zeros(n, dtype=mu.dtype)
    ll = xp.zeros(n, dtype=mu.dtype)
    if grads:
        ds_db = xp.zeros((n, k), dtype=mu.dtype)   # d state / d beta
        ds_ds0 = xp.ones((n, k), dtype=mu.dtype)   # d state / d state0
        g_mu, g_alpha, g_beta, g_s0 = (xp.zeros((n, k), dtype=mu.dtype) for _ in range(4))
    for j in range(lags.shape[1]):
        live = j < valid
        if not bool(live.any()):
            break
        c = marks[:, j].astype(np.int64)
        now = now + xp.where(live, lags[:, j], 0)
        a, b, sc, m = alpha[c], beta[c], s[rows, c], mu[rows, c]
        d = now - last[rows, c]
        e = xp.exp(-b * d)
        lam = m + a * b * sc * e
        comp = m * d + a * sc * (1 - e)
        ll = ll + xp.where(live, xp.log(xp.where(live, lam, 1)) - comp, 0)
        if grads:
            db, ds0 = ds_db[rows, c], ds_ds0[rows, c]
            one = xp.where(live, 1.0, 0.0).astype(mu.dtype)
            g_mu[rows, c] += one * (1 / lam - d)
            g_alpha[rows, c] += one * (b * sc * e / lam - sc * (1 - e))
            g_beta[rows, c] += one * (a * e * (sc * (1 - b * d) + b * db) / lam
                                      - a * (db * (1 - e) + sc * d * e))
            g_s0[rows, c] += one * (a * b * e * ds0 / lam - a * (1 - e) * ds0)
            ds_db[rows, c] = xp.where(live, e * (db - d * sc), db)
            ds_ds0[rows, c] = xp.where(live, e * ds0, ds0)
        s[rows, c] = xp.where(live, 1 + sc * e, sc)
        last[rows, c] = xp.where(live, now, last[rows, c])
    d = max_time[:, None] - last
    e = xp.exp(-beta[None, :] * d)
    ll = ll - (mu * d + alpha[None, :] * s * (1 - e)).sum(axis=1)
    out_state = e * s
    if not grads:
        return ll, out_state
    g_mu -= d
    g_alpha -= s * (1 - e)
    g_beta -= alpha[None, :] * (ds_db * (1 - e) + s * d * e)
    g_s0 -= alpha[None, :] * (1 - e) * ds_ds0
    final_db = e * (ds_db - d * s)
    final_ds0 = e * ds_ds0
    return ll, out_state, (g_mu, g_alpha, g_beta, g_s0), (final_db, final_ds0)


def _forward(attrs, ctx, inputs, req, outputs):
    ll, out_state = _scan(ctx.xp, *inputs, grads=False)
    put(outputs[0], req[0], ll)
    put(outputs[1], req[1], out_state)


def _backward(attrs, ctx, inputs, req, outputs):
    xp = ctx.xp
    dll, dstate = inputs[0], inputs[1]
    _, _, (g_mu, g_alpha, g_beta, g_s0), (f_db, f_ds0) = _scan(xp, *inputs[2:10], grads=True)
    w = dll[:, None]
    put(outputs[0], req[0], w * g_mu)
    put(outputs[1], req[1], (w * g_alpha).sum(axis=0))
    put(outputs[2], req[2], (w * g_beta + dstate * f_db).sum(axis=0))
    put(outputs[3], req[3], w * g_s0 + dstate * f_ds0)
    for i in range(4, 8):
        if req[i] is not OpReqType.NULL:
            put(outputs[i], req[i], xp.zeros(outputs[i].shape, dtype=outputs[i].dtype))


def _sample(draw):
    d = Draw(draw)
    n, k, t = d.int(1, 3, "N"), d.int(1, 3, "K"), d.int(1, 5, "T")
    mu = d.uniform((n, k), 0.5, 2.0)
    alpha = d.uniform((k,), 0.1, 0.9)
    beta = d.uniform((k,), 0.5, 2.0)
    state = d.uniform((n, k), 0.0, 1.0)
    lags = d.uniform((n, t), 0.1, 2.0)
    marks = np.array([[d.int(0, k - 1, "mark") for _ in range(t)] for _ in range(n)],
                     dtype=np.int32)
    valid = np.array([d.int(0, t, "valid") for _ in range(n)], dtype=np.float64)
    max_time = lags.sum(axis=1) + d.uniform((n,), 0.1, 2.0)
    return Case([mu, alpha, beta, state, lags, marks, valid, max_time])


def _reference(raw, mu, alpha, beta, state, lags, marks, valid, max_time):
    """Event by event, one row at a time."""
    n, k = mu.shape
    ll = np.zeros(n, dtype=np.float64)
    out_state = np.array(state, dtype=np.float64)
    for i in range(n):
        s, last, t = out_state[i], np.zeros(k), 0.0
        for j in range(int(valid[i])):
            c = int(marks[i, j])
            t += lags[i, j]
            e = np.exp(-beta[c] * (t - last[c]))
            ll[i] += np.log(mu[i, c] + alpha[c] * beta[c] * s[c] * e)
            ll[i] -= mu[i, c] * (t - last[c]) + alpha[c] * s[c] * (1 - e)
            s[c] = 1 + s[c] * e
            last[c] = t
        e = np.exp(-beta * (max_time[i] - last))
        ll[i] -= (mu[i] * (max_time[i] - last) + alpha * s * (1 - e)).sum()
        out_state[i] = s * e
    return [ll.astype(mu.dtype), out_state.astype(mu.dtype)]


OPS = [
    Op(_NAME, num_inputs=8, num_outputs=2, input_names=_INPUTS,
       output_names=["output", "out_state"],
       infer_shape=_infer_shape, infer_type=_infer_type, compute={XP: _forward},
       gradient=Gradient("_contrib_backward_hawkesll", ("out_grad", "in_data")),
       domain=Domain(_sample, reference=_reference, differentiable=(0, 1, 2, 3),
                     grad_rtol=1e-3, grad_atol=1e-5),
       description="Log-likelihood of marked event sequences under a Hawkes process with "
                   "exponential decay (see the module text): outputs the (N,) "
                   "log-likelihoods and the (N, K) states at max_time.  Gradient for lda, "
                   "alpha, beta and state; zero for the data inputs."),
    Op("_contrib_backward_hawkesll", num_inputs=10, num_outputs=8, compute={XP: _backward},
       is_backward=True, forward_op=_NAME,
       description=f"Gradient of {_NAME}."),
]
