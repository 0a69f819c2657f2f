"""Fixtures of the symbol tests: fresh automatic-name counters for every test, so the
expected names (``fullyconnected0``, ``_plus0``) do not depend on test order."""

from __future__ import annotations

import pytest

import dagnet as mx


@pytest.fixture(autouse=True)
def fresh_names():
    with mx.name.NameManager():
        yield
