"""``hide_numba``: makes a family of compiled kernels load as if numba were not installed;
``cpu_flags``: the instruction sets of this CPU."""

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


@pytest.fixture
def cpu_flags() -> set[str]:
    """The CPU's instruction sets (``avx2``, ``avx512f``, ...) from ``/proc/cpuinfo``; the
    test is skipped where that cannot be read (not Linux)."""
    try:
        with open("/proc/cpuinfo") as info:
            line = next(line for line in info if line.startswith("flags"))
    except (OSError, StopIteration):
        pytest.skip("the CPU's instruction sets are read from /proc/cpuinfo (Linux)")
    return set(line.split(":", 1)[1].split())
