"""The interpreter's switch interval the threaded engines set (engine/_switch_interval.py):
shortened to config ``engine_switch_interval``, put back when their functions prove quick,
and never overriding a setting made by someone else."""

from __future__ import annotations

import sys

import pytest

import dagnet
from dagnet.engine import _switch_interval


@pytest.fixture(autouse=True)
def python_interval():
    """Python's 5 ms to start from, and the caller's interval back afterwards."""
    before = sys.getswitchinterval()
    _switch_interval.restore()
    sys.setswitchinterval(0.005)
    yield
    _switch_interval.restore()
    sys.setswitchinterval(before)


def test_shorten_then_restore_puts_pythons_interval_back():
    with dagnet.config.set(engine_switch_interval=0.001):
        _switch_interval.shorten()
        assert sys.getswitchinterval() == pytest.approx(0.001)
        _switch_interval.shorten()  # again: no change, and restore still knows Python's
        _switch_interval.restore()
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_a_second_shorter_setting_still_restores_pythons():
    with dagnet.config.set(engine_switch_interval=0.001):
        _switch_interval.shorten()
    with dagnet.config.set(engine_switch_interval=0.0005):
        _switch_interval.shorten()
    assert sys.getswitchinterval() == pytest.approx(0.0005)
    _switch_interval.restore()
    assert sys.getswitchinterval() == pytest.approx(0.005)


@pytest.mark.parametrize("configured", [0.0, 0.01])
def test_shorten_leaves_a_shorter_interval_or_a_zero_setting(configured):
    with dagnet.config.set(engine_switch_interval=configured):
        _switch_interval.shorten()
    assert sys.getswitchinterval() == pytest.approx(0.005)


def test_restore_keeps_an_interval_set_since():
    with dagnet.config.set(engine_switch_interval=0.001):
        _switch_interval.shorten()
    sys.setswitchinterval(0.002)  # the program's own choice
    _switch_interval.restore()
    assert sys.getswitchinterval() == pytest.approx(0.002)


def test_a_negative_interval_is_refused_with_the_rule():
    with pytest.raises(dagnet.ConfigError, match="engine_switch_interval.*0"):
        dagnet.config.set(engine_switch_interval=-1.0)
