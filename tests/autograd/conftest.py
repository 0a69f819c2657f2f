"""Fixtures for the autograd tests: ``engine`` is the shared ``engine_name`` (each
registered engine, configured as users configure it) under a shorter name."""

from __future__ import annotations

import pytest

import dagnet


@pytest.fixture
def engine(engine_name):
    """The name of the engine this run of the test uses (set through dagnet.config)."""
    return engine_name


@pytest.fixture(autouse=True)
def _modes_restored():
    """Every test starts and ends outside recording, in prediction mode."""
    assert not dagnet.autograd.is_recording() and not dagnet.autograd.is_training()
    yield
    dagnet.autograd.set_recording(False)
    dagnet.autograd.set_training(False)
