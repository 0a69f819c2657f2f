"""Registers the built-in engines (entry point ``engines`` of the ``dagnet`` distribution)."""

from __future__ import annotations

import dagnet


@dagnet.hookimpl
def dagnet_register_engines(engines):
    from .naive import NaiveEngine
    from .threaded import ThreadedEngine
    from .threaded_per_device import ThreadedPerDeviceEngine

    engines.add("naive", NaiveEngine, aliases=("NaiveEngine",))
    engines.add("threaded", ThreadedEngine, aliases=("ThreadedEngine", "ThreadedEnginePooled"))
    engines.add("threaded_per_device", ThreadedPerDeviceEngine,
                aliases=("ThreadedEnginePerDevice",))
