"""``mx.gluon.contrib``: MXNet 1.x's contributed Gluon blocks (``gluon.contrib.nn``,
``gluon.contrib.cnn``, ``gluon.contrib.rnn``), samplers (``gluon.contrib.data``) and the
training loop ``gluon.contrib.estimator``."""

from __future__ import annotations

from . import cnn, data, estimator, nn, rnn

__all__ = ["cnn", "data", "estimator", "nn", "rnn"]
