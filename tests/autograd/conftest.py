"""Fixtures for the autograd tests: every test that asks for ``engine`` runs once per
registered engine, with that engine configured as users configure it."""

from __future__ import annotations

import pytest

import dagnet


@pytest.fixture
def engine(dagnet_engine_name):
    """The name of the engine this run of the test uses (set through dagnet.config)."""
    with dagnet.config.set(engine=dagnet_engine_name):
        yield dagnet_engine_name
        dagnet.nd.waitall()


@pytest.fixture(autouse=True)
def _modes_restored():
    """Every test starts and ends outside recording, in prediction mode."""
    assert not dagnet.autograd.is_recording() and not dagnet.autograd.is_training()
    yield
    dagnet.autograd.set_recording(False)
    dagnet.autograd.set_training(False)
