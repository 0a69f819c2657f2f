"""gluon.loss: each loss against its formula in numpy, with weight and sample_weight, and
the same value hybridized."""

from __future__ import annotations

import numpy as np
import pytest

import dagnet as mx
from dagnet.gluon import loss as gloss

_rng = np.random.default_rng(0)
PRED = _rng.uniform(-2, 2, (4, 3)).astype(np.float32)
LABEL = _rng.uniform(-1, 1, (4, 3)).astype(np.float32)


def _value(loss, *arrays):
    inputs = [mx.nd.array(a) for a in arrays]
    first = loss(*inputs).asnumpy()
    loss.hybridize()
    np.testing.assert_allclose(loss(*inputs).asnumpy(), first, rtol=1e-5, atol=1e-6)
    return first


def test_l1_l2_with_weights():
    np.testing.assert_allclose(_value(gloss.L2Loss(), PRED, LABEL),
                               (0.5 * (PRED - LABEL) ** 2).mean(axis=1), rtol=1e-5)
    sample = np.array([[1], [0], [2], [1]], np.float32)
    np.testing.assert_allclose(_value(gloss.L1Loss(weight=3), PRED, LABEL, sample),
                               (3 * np.abs(PRED - LABEL) * sample).mean(axis=1), rtol=1e-5)
    with pytest.raises(AssertionError, match="weight must be a number"):
        gloss.L1Loss(weight="2")(mx.nd.array(PRED), mx.nd.array(LABEL))


def test_softmax_cross_entropy_sparse_and_dense():
    label = np.array([0, 2, 1, 1], np.float32)
    logp = PRED - np.log(np.exp(PRED).sum(axis=1, keepdims=True))
    expected = -logp[np.arange(4), label.astype(int)]
    np.testing.assert_allclose(_value(gloss.SoftmaxCrossEntropyLoss(), PRED, label),
                               expected, rtol=1e-5)
    onehot = np.eye(3, dtype=np.float32)[label.astype(int)]
    np.testing.assert_allclose(
        _value(gloss.SoftmaxCELoss(sparse_label=False), PRED, onehot), expected, rtol=1e-5)


def test_sigmoid_bce_logistic_hinge_huber():
    binary = (LABEL > 0).astype(np.float32)
    prob = 1 / (1 + np.exp(-PRED))
    bce = -(binary * np.log(prob) + (1 - binary) * np.log(1 - prob))
    np.testing.assert_allclose(_value(gloss.SigmoidBCELoss(), PRED, binary), bce.mean(axis=1),
                               rtol=1e-5)
    np.testing.assert_allclose(
        _value(gloss.SigmoidBCELoss(from_sigmoid=True), prob, binary), bce.mean(axis=1),
        rtol=1e-4)
    signed = np.sign(LABEL)
    np.testing.assert_allclose(_value(gloss.LogisticLoss(), PRED, signed),
                               np.log1p(np.exp(-PRED * signed)).mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(_value(gloss.HingeLoss(), PRED, signed),
                               np.maximum(0, 1 - PRED * signed).mean(axis=1), rtol=1e-5)
    np.testing.assert_allclose(_value(gloss.SquaredHingeLoss(), PRED, signed),
                               (np.maximum(0, 1 - PRED * signed) ** 2).mean(axis=1), rtol=1e-5)
    err = np.abs(PRED - LABEL)
    huber = np.where(err > 1, err - 0.5, 0.5 * err ** 2)
    np.testing.assert_allclose(_value(gloss.HuberLoss(), PRED, LABEL), huber.mean(axis=1),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="signed or binary"):
        gloss.LogisticLoss(label_format="other")


def test_kl_triplet_poisson_cosine():
    logp = PRED - np.log(np.exp(PRED).sum(axis=1, keepdims=True))
    target = np.exp(LABEL) / np.exp(LABEL).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(_value(gloss.KLDivLoss(), logp, target),
                               (target * (np.log(target + 1e-12) - logp)).sum(axis=1),
                               rtol=1e-5)
    neg = LABEL[::-1].copy()
    trip = np.maximum(0, ((LABEL - PRED) ** 2 - (neg - PRED) ** 2).sum(axis=1) + 1)
    np.testing.assert_allclose(_value(gloss.TripletLoss(), PRED, LABEL, neg), trip, rtol=1e-5)
    counts = np.abs(LABEL) * 3
    np.testing.assert_allclose(_value(gloss.PoissonNLLLoss(), PRED, counts),
                               (np.exp(PRED) - counts * PRED).mean(), rtol=1e-5)
    label = np.array([1, -1, 1, -1], np.float32)
    cos = (PRED * LABEL).sum(1) / np.linalg.norm(PRED, axis=1) / np.linalg.norm(LABEL, axis=1)
    expected = np.where(label == 1, 1 - cos, np.maximum(0, cos))
    np.testing.assert_allclose(_value(gloss.CosineEmbeddingLoss(), PRED, LABEL, label)[:, 0],
                               expected, rtol=1e-5, atol=1e-6)


def test_sdml_loss_prefers_matching_pairs():
    x = mx.nd.array(np.eye(4, dtype=np.float32) * 5)
    matched = gloss.SDMLLoss()(x, x).asnumpy()
    shuffled = gloss.SDMLLoss()(x, x[::-1]).asnumpy()
    assert matched.shape == (4,) and matched.mean() < shuffled.mean()


def test_loss_trains_a_model_with_autograd():
    net = mx.gluon.nn.Dense(1, in_units=3)
    net.initialize(mx.init.Zero())
    x = mx.nd.array(_rng.normal(size=(32, 3)).astype(np.float32))
    y = mx.nd.dot(x, mx.nd.array([[1.0], [-2.0], [0.5]]))
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
    l2 = gloss.L2Loss()
    for _ in range(60):
        with mx.autograd.record():
            loss = l2(net(x), y)
        loss.backward()
        trainer.step(32)
    np.testing.assert_allclose(net.weight.data().asnumpy(), [[1.0, -2.0, 0.5]], atol=1e-2)
