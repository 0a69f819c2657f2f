"""``mx.gluon.contrib``: MXNet 1.x's contributed Gluon blocks (``gluon.contrib.nn``,
``gluon.contrib.cnn``, ``gluon.contrib.rnn``) and samplers (``gluon.contrib.data``)."""

from __future__ import annotations

from . import cnn, data, nn, rnn

__all__ = ["cnn", "data", "nn", "rnn"]
