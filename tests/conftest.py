"""Hypothesis profiles (a fast default, a derandomized ``ci`` profile chosen when CI is
set, and ``thorough`` through ``HYPOTHESIS_PROFILE``), ``engine_name``, which runs a
test under each registered engine, ``naive_pushes``, which records what the array front
end pushes, and ``register``, which adds operators for one test."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

import dagnet

settings.register_profile(
    "default", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# 40 examples: the CI machine has two cores and the suite must stay well under 15 minutes
# with every operator on every engine; HYPOTHESIS_PROFILE=thorough runs 200 of each
settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "thorough",
    max_examples=200,
    deadline=None,
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


@pytest.fixture
def naive_pushes(monkeypatch):
    """Every ``push_sync`` made while the test runs on the naive engine (where work runs
    at once), as ``(name, reads, writes)``; clear it to count from a point on."""
    made = []
    with dagnet.config.set(engine="naive"):
        engine = dagnet.runtime.current_engine()
        real = engine.push_sync

        def spy(fn, ctx=None, const_vars=(), mutate_vars=(), prop=None, priority=0, name=None,
                **hints):
            made.append((name, list(const_vars), list(mutate_vars)))
            return real(fn, ctx, const_vars, mutate_vars,
                        prop or dagnet.engine.FnProperty.NORMAL, priority, name, **hints)

        monkeypatch.setattr(engine, "push_sync", spy)
        yield made


@pytest.fixture
def register():
    """``register(*ops)`` adds operators through a hand-registered plugin, as an outside
    package's entry point would; pending work is finished and the registry rediscovered
    after the test."""

    def add(*ops):
        class TestOps:
            @dagnet.hookimpl
            def dagnet_register_ops(self, ops):
                for op in added:
                    ops.add(op)

        added = list(ops)
        dagnet.plugins.register(TestOps(), name=f"test-ops-{id(added)}")

    yield add
    dagnet.ndarray.waitall()
    dagnet.plugins.reset()
