"""``mx.gluon.contrib.data``: the samplers MXNet 1.x keeps under contrib (``IntervalSampler``,
the same class as ``gluon.data.IntervalSampler``).  The WikiText datasets of
``contrib.data.text`` download their corpora and are not provided."""

from __future__ import annotations

from ...data.sampler import IntervalSampler

__all__ = ["IntervalSampler"]
