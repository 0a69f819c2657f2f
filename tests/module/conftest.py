"""Fixtures for the module tests: ``engine_name`` runs a test under each
registered engine."""

from __future__ import annotations

import pytest

import dagnet


@pytest.fixture
def engine_name(dagnet_engine_name):
    """Run the test under each registered engine (the configured one, as users do)."""
    with dagnet.config.set(engine=dagnet_engine_name):
        yield dagnet_engine_name
        dagnet.ndarray.waitall()
