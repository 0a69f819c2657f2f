"""gluon.contrib.data: MXNet keeps IntervalSampler under contrib too."""

from __future__ import annotations

from dagnet import gluon


def test_contrib_interval_sampler_is_gluon_data_s():
    sampler = gluon.contrib.data.IntervalSampler(10, 3)
    assert isinstance(sampler, gluon.data.IntervalSampler)
    assert list(sampler) == [0, 3, 6, 9, 1, 4, 7, 2, 5, 8]
    assert list(gluon.contrib.data.IntervalSampler(10, 3, rollover=False)) == [0, 3, 6, 9]
