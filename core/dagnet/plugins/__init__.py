"""The plugin mechanism: one pluggy project and one entry-point group, both ``dagnet``.

A plugin author writes a module of registrar hooks::

    import dagnet

    @dagnet.hookimpl
    def dagnet_register_ops(ops):
        ops.add(my_op)

and names it in ``pyproject.toml``::

    [project.entry-points.dagnet]
    myplugin = "my_package.plugin"

Nothing is imported until a registry is first needed.  ``dagnet plugins``
lists what was found, what each plugin registered, and load errors.
"""

from __future__ import annotations

import threading

from ._hookspec import hookimpl, hookspec
from ._manager import (
    ENTRY_POINT_GROUP,
    PluginInfo,
    PluginLoadError,
    PluginLoadWarning,
    PluginManager,
)
from ._registry import (
    BackendRegistry,
    EngineRegistry,
    GraphPassRegistry,
    OpRegistry,
    Provider,
    Registration,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "BackendRegistry",
    "EngineRegistry",
    "GraphPassRegistry",
    "OpRegistry",
    "PluginInfo",
    "PluginLoadError",
    "PluginLoadWarning",
    "PluginManager",
    "Provider",
    "Registration",
    "hookimpl",
    "hookspec",
    "manager",
    "engines",
    "backends",
    "ops",
    "graph_passes",
    "register",
    "reset",
]

_lock = threading.Lock()
_manager: PluginManager | None = None


def manager() -> PluginManager:
    """The process's plugin manager (created on first use; discovery is lazier still)."""
    global _manager
    if _manager is None:
        with _lock:
            if _manager is None:
                _manager = PluginManager()
    return _manager


def engines() -> EngineRegistry:
    """The engine registry, loading plugins on first call."""
    return manager().engine_registry()


def backends() -> BackendRegistry:
    """The backend registry, loading plugins on first call."""
    return manager().backend_registry()


def ops() -> OpRegistry:
    """The operator registry, loading plugins on first call."""
    return manager().op_registry()


def graph_passes() -> GraphPassRegistry:
    """The graph pass registry, loading plugins on first call."""
    return manager().graph_pass_registry()


def register(plugin: object, name: str | None = None) -> None:
    """Add a plugin module or object by hand; its registrars run like an entry point's."""
    manager().register(plugin, name)


def reset() -> None:
    """Forget every plugin and registration; the next use discovers them again.

    Meant for tests and for picking up packages installed into a running
    interpreter.  Engines already created keep running.
    """
    global _manager
    with _lock:
        _manager = None
