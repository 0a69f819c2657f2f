"""Learning-rate schedules (dagnet.lr_scheduler).

The expected sequences are MXNet 1.9.1's, from calling each scheduler at
update counts 0, 1, ..., 13 in turn.
"""

from __future__ import annotations

import math

import pytest

import dagnet as mx
from dagnet import lr_scheduler


def rates(scheduler, upto=14):
    return [scheduler(n) for n in range(upto)]


def test_factor_scheduler_drops_after_each_step_and_warms_up_linearly():
    s = lr_scheduler.FactorScheduler(3, 0.5, base_lr=1.0, warmup_steps=2, warmup_begin_lr=0.1)
    assert rates(s) == pytest.approx(
        [0.1, 0.55, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125, 0.125, 0.125, 0.0625])


def test_factor_scheduler_stops_at_stop_factor_lr():
    s = lr_scheduler.FactorScheduler(1, 0.1, stop_factor_lr=1e-3, base_lr=1.0)
    assert rates(s, 8)[-1] == pytest.approx(1e-3)


def test_multi_factor_scheduler():
    s = lr_scheduler.MultiFactorScheduler([2, 5], 0.1, base_lr=1.0)
    assert rates(s) == pytest.approx([1.0] * 3 + [0.1] * 3 + [0.01] * 8)


def test_poly_scheduler_with_linear_warmup():
    s = lr_scheduler.PolyScheduler(10, base_lr=1.0, pwr=2, final_lr=0.1, warmup_steps=3,
                                   warmup_begin_lr=0.2)
    assert rates(s) == pytest.approx(
        [0.2, 0.466667, 0.733333, 1.0, 0.761224, 0.559184, 0.393878, 0.265306, 0.173469,
         0.118367, 0.1, 0.1, 0.1, 0.1], abs=1e-6)


def test_cosine_scheduler_with_constant_warmup():
    s = lr_scheduler.CosineScheduler(10, base_lr=1.0, final_lr=0.1, warmup_steps=3,
                                     warmup_mode="constant", warmup_begin_lr=0.5)
    assert rates(s) == pytest.approx(
        [0.5, 0.5, 0.5, 1.0, 0.955436, 0.83057, 0.650134, 0.449866, 0.26943, 0.144564, 0.1,
         0.1, 0.1, 0.1], abs=1e-6)


def test_cosine_formula_at_half_way():
    s = lr_scheduler.CosineScheduler(100, base_lr=2.0)
    assert s(50) == pytest.approx(2.0 * (1 + math.cos(math.pi / 2)) / 2)


def test_reachable_as_dagnet_attribute():
    assert mx.lr_scheduler is lr_scheduler
    assert "lr_scheduler" in mx.__all__


@pytest.mark.parametrize("make, error, words", [
    (lambda: lr_scheduler.FactorScheduler(0), ValueError, "step must be >= 1"),
    (lambda: lr_scheduler.FactorScheduler(2, factor=2), ValueError, "factor must be <= 1"),
    (lambda: lr_scheduler.FactorScheduler(2.5), TypeError, "step must be an integer"),
    (lambda: lr_scheduler.MultiFactorScheduler([5, 2]), ValueError, "strictly increasing"),
    (lambda: lr_scheduler.MultiFactorScheduler(5), TypeError, "non-empty list"),
    (lambda: lr_scheduler.PolyScheduler(0), ValueError, "max_update must be >= 1"),
    (lambda: lr_scheduler.PolyScheduler(5, warmup_steps=5), ValueError, "must be above"),
    (lambda: lr_scheduler.CosineScheduler(10, warmup_mode="cubic"), ValueError,
     "expected one of 'linear', 'constant'"),
    (lambda: lr_scheduler.CosineScheduler(10, base_lr=0.1, warmup_begin_lr=0.5), ValueError,
     "pass a smaller warmup_begin_lr"),
    (lambda: lr_scheduler.FactorScheduler(2, warmup_steps=-1), ValueError,
     "warmup_steps must be >= 0"),
    (lambda: lr_scheduler.FactorScheduler(2, base_lr="0.1"), TypeError, "real number"),
])
def test_bad_arguments_say_what_to_pass(make, error, words):
    with pytest.raises(error, match=words) as info:
        make()
    assert isinstance(info.value, mx.DagnetError)
