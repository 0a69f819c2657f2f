"""Every test here starts and ends with NumPy semantics off (MXNet's default)."""

from __future__ import annotations

import pytest

from dagnet import util


@pytest.fixture(autouse=True)
def _np_off():
    util.reset_np()
    yield
    util.reset_np()
