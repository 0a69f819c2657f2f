"""The optimizers beyond SGD and Adam: two updates of each against a numpy transcription
of its published rule, and their parameter checks."""

import numpy as np
import pytest

import dagnet as mx

RNG = np.random.default_rng(3)
W0 = RNG.uniform(-1, 1, (3, 4))
GRADS = [RNG.uniform(-1, 1, (3, 4)) for _ in range(2)]
COMMON = {"rescale_grad": 0.5, "wd": 0.01, "clip_gradient": 0.3}


def _clip(g, opts):
    return np.clip(g, -opts["clip_gradient"], opts["clip_gradient"])


def _signum(w, grads, lr=0.05, momentum=0.9, wd_lh=0.02, **o):
    mom = np.zeros_like(w)
    for g in grads:
        mom = momentum * mom - (1 - momentum) * (_clip(o["rescale_grad"] * g, o) + o["wd"] * w)
        w = (1 - lr * wd_lh) * w + lr * np.sign(mom)
    return w


def _nag(w, grads, lr=0.1, momentum=0.9, **o):
    mom = np.zeros_like(w)
    for g in grads:
        step = lr * (_clip(o["rescale_grad"] * g, o) + o["wd"] * w)
        mom = momentum * mom - step
        w = w + momentum * mom - step
    return w


def _adamax(w, grads, lr=0.002, beta1=0.9, beta2=0.999, **o):
    m, u = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = _clip(o["rescale_grad"] * g + o["wd"] * w, o)
        m = beta1 * m + (1 - beta1) * g
        u = np.maximum(beta2 * u, np.abs(g))
        w = w - lr / (1 - beta1 ** t) * m / u
    return w


def _nadam(w, grads, lr=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, decay=0.004, **o):
    m, v, schedule = np.zeros_like(w), np.zeros_like(w), 1.0
    for t, g in enumerate(grads, 1):
        g = _clip(o["rescale_grad"] * g + o["wd"] * w, o)
        mu, mu_next = (beta1 * (1 - 0.5 * 0.96 ** (k * decay)) for k in (t, t + 1))
        schedule *= mu
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_bar = (1 - mu) * g / (1 - schedule) + mu_next * m / (1 - schedule * mu_next)
        w = w - lr * m_bar / (np.sqrt(v / (1 - beta2 ** t)) + epsilon)
    return w


def _adagrad(w, grads, lr=0.01, eps=1e-7, **o):
    history = np.zeros_like(w)
    for g in grads:
        g = _clip(o["rescale_grad"] * g, o)
        history += g * g
        w = w - lr * (g / np.sqrt(history + eps) + o["wd"] * w)
    return w


def _adadelta(w, grads, rho=0.9, epsilon=1e-5, **o):
    acc_g, acc_d = np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        g = _clip(o["rescale_grad"] * g, o)
        acc_g = rho * acc_g + (1 - rho) * g * g
        delta = np.sqrt(acc_d + epsilon) / np.sqrt(acc_g + epsilon) * g
        acc_d = rho * acc_d + (1 - rho) * delta * delta
        w = w - (delta + o["wd"] * w)
    return w


def _rmsprop(w, grads, lr=0.001, gamma1=0.9, epsilon=1e-8, **o):
    n = np.zeros_like(w)
    for g in grads:
        g = _clip(o["rescale_grad"] * g + o["wd"] * w, o)
        n = (1 - gamma1) * g * g + gamma1 * n
        w = w - lr * g / np.sqrt(n + epsilon)
    return w


def _ftml(w, grads, lr=0.01, beta1=0.6, beta2=0.999, epsilon=1e-8, **o):
    d, v, z = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = _clip(o["rescale_grad"] * g + o["wd"] * w, o)
        v = beta2 * v + (1 - beta2) * g * g
        d_t = (1 - beta1 ** t) / lr * (np.sqrt(v / (1 - beta2 ** t)) + epsilon)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * w
        d, w = d_t, -z / d_t
    return w


def _ftrl(w, grads, lr=0.1, lamda1=0.01, beta=1.0, **o):
    z, n = np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        g = _clip(o["rescale_grad"] * g, o)
        z = z + g - (np.sqrt(n + g * g) - np.sqrt(n)) * w / lr
        n = n + g * g
        w = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + o["wd"]) * (np.abs(z) > lamda1)
    return w


def _lamb(w, grads, lr=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6, **o):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = _clip(o["rescale_grad"] * g, o)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        direction = (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)) + epsilon) \
            + o["wd"] * w
        w = w - lr * np.linalg.norm(w) / np.linalg.norm(direction) * direction
    return w


CASES = [("signum", {"learning_rate": 0.05, "wd_lh": 0.02}, _signum),
         ("nag", {"learning_rate": 0.1, "momentum": 0.9}, _nag),
         ("adamax", {}, _adamax), ("nadam", {}, _nadam), ("adagrad", {}, _adagrad),
         ("adadelta", {}, _adadelta), ("rmsprop", {}, _rmsprop),
         ("ftml", {}, _ftml), ("ftrl", {}, _ftrl), ("lamb", {}, _lamb)]


@pytest.mark.parametrize("name, kwargs, reference", CASES, ids=[c[0] for c in CASES])
def test_two_updates_follow_the_published_rule(name, kwargs, reference):
    opt = mx.optimizer.create(name, **COMMON, **kwargs)
    updater = mx.optimizer.get_updater(opt)
    weight = mx.nd.array(W0, dtype="float64")
    for g in GRADS:
        updater(0, mx.nd.array(g, dtype="float64"), weight)
    want = reference(W0, GRADS, **COMMON)
    np.testing.assert_allclose(weight.asnumpy(), want, rtol=1e-6, atol=1e-9)


def test_centred_rmsprop_and_clip_weights():
    opt = mx.optimizer.RMSProp(learning_rate=0.01, centered=True, clip_weights=0.5, **COMMON)
    weight = mx.nd.array(W0)
    state = opt.create_state(0, weight)
    assert len(state) == 3
    opt.update(0, weight, mx.nd.array(GRADS[0]), state)
    assert np.abs(weight.asnumpy()).max() <= 0.5 + 1e-7


def test_sgld_adds_noise_of_variance_lr():
    mx.random.seed(0)
    opt = mx.optimizer.SGLD(learning_rate=0.04)
    weight = mx.nd.zeros((200, 200))
    opt.update(0, weight, mx.nd.zeros((200, 200)), None)
    assert abs(weight.asnumpy().std() - 0.2) < 0.01
    assert abs(weight.asnumpy().mean()) < 0.01


@pytest.mark.parametrize("name, bad", [("nadam", {"beta1": 1.0}), ("adadelta", {"rho": 1.5}),
                                       ("ftrl", {"lamda1": -1.0})])
def test_bad_parameters_are_refused(name, bad):
    with pytest.raises(ValueError):
        mx.optimizer.create(name, **bad)
