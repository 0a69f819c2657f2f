"""``hide_numba``: makes a family of compiled kernels load as if numba were not installed."""

from __future__ import annotations

import sys

import pytest

from dagnet_ops import _jit


@pytest.fixture
def hide_numba(monkeypatch):
    """``hide_numba(family)``: the next ``_jit.kernels(family)`` imports its module anew and
    finds no numba (so it is None, with the reason); undone after the test."""

    def hide(family: str) -> None:
        loaded = _jit._loaded[family]
        monkeypatch.setattr(loaded, "_value", None)  # not imported yet
        monkeypatch.setattr(loaded, "failure", None)
        monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
        monkeypatch.delitem(sys.modules, f"{_jit.__name__}.{_jit.FAMILIES[family]}",
                            raising=False)

    return hide
