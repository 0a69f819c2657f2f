"""Hypothesis profiles (a fast default and a thorough ``ci`` profile, chosen when CI is
set) and ``engine_name``, which runs a test under each registered engine."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

import dagnet

settings.register_profile(
    "default", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default")
)


@pytest.fixture
def engine_name(dagnet_engine_name):
    """Run the test once per registered engine, with that engine configured through
    ``dagnet.config`` as users configure it; pending work is waited for afterwards."""
    with dagnet.config.set(engine=dagnet_engine_name):
        yield dagnet_engine_name
        dagnet.ndarray.waitall()
