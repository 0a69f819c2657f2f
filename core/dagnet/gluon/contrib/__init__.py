"""``mx.gluon.contrib``: MXNet 1.x's contributed Gluon blocks (``gluon.contrib.nn``,
``gluon.contrib.rnn``)."""

from __future__ import annotations

from . import nn, rnn

__all__ = ["nn", "rnn"]
