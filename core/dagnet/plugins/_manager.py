"""Discovery and loading: entry points, switches, and the per-plugin bookkeeping."""

from __future__ import annotations

import importlib
import os
import sys
import threading
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any

import pluggy

from .._errors import PluginError
from . import _hookspec
from ._registry import BackendRegistry, EngineRegistry, OpRegistry, Provider, Registry

if sys.version_info >= (3, 12):
    from importlib import metadata as importlib_metadata
else:  # the stdlib version lacks EntryPoint.dist before 3.10 and select() semantics vary
    import importlib_metadata

__all__ = ["PluginManager", "PluginInfo", "PluginLoadError", "PluginLoadWarning", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "dagnet"
_SELF_DISTRIBUTION = "dagnet"

# registry attribute -> the hook that fills it
_HOOKS = {
    "engines": "dagnet_register_engines",
    "backends": "dagnet_register_backends",
    "ops": "dagnet_register_ops",
}


class PluginLoadWarning(UserWarning):
    """Emitted once per plugin that failed; ``dagnet plugins`` shows its traceback."""


@dataclass
class PluginLoadError:
    """A plugin that failed to import or to register, with its full traceback."""

    plugin: str
    provider: Provider
    stage: str
    error: BaseException
    traceback: str

    def summary(self) -> str:
        return (
            f"plugin {self.plugin!r} from {self.provider.distribution or 'no distribution'} "
            f"failed while {self.stage}: {type(self.error).__name__}: {self.error}"
        )


@dataclass
class PluginInfo:
    """One loaded plugin: where it came from and what it registered."""

    name: str
    plugin: Any
    provider: Provider
    source: str
    registered: dict[str, list[str]] = field(default_factory=dict)


def _env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


class PluginManager:
    """Finds plugins, calls their registrars one at a time and records the outcome.

    Plugins are imported when a registry is first needed, never at
    ``import dagnet``.  Switches (read at that moment):

    - ``DAGNET_DISABLE_PLUGIN_AUTOLOAD=1`` (or config ``autoload_plugins``):
      skip the entry points; only explicitly added plugins load.
    - ``DAGNET_BLOCK_PLUGINS=a,b``: skip the plugins with these entry-point
      or distribution names.
    - ``DAGNET_PLUGINS=pkg.mod,other.mod``: import and register these modules
      too, as pytest does with ``PYTEST_PLUGINS``.
    """

    def __init__(self) -> None:
        self._pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
        self._pm.add_hookspecs(_hookspec)
        self._lock = threading.RLock()
        self._discovered = False
        self._pending_direct: list[tuple[Any, str]] = []
        self.plugins: dict[str, PluginInfo] = {}
        self.errors: list[PluginLoadError] = []
        self.blocked: list[str] = []
        self.engines = EngineRegistry()
        self.backends = BackendRegistry()
        self.ops = OpRegistry()
        self._filled: set[str] = set()

    # -- discovery ---------------------------------------------------------
    def _discover(self) -> None:
        from .. import config

        blocked = set(_env_list("DAGNET_BLOCK_PLUGINS"))
        if config.get("autoload_plugins"):
            for ep in self._entry_points():
                dist = getattr(ep, "dist", None)
                dist_name = dist.metadata["Name"] if dist is not None else None
                provider = Provider(ep.name, dist_name, dist.version if dist is not None else None)
                if ep.name in blocked or (dist_name and dist_name in blocked):
                    self.blocked.append(str(provider))
                    continue
                try:
                    plugin = ep.load()
                except Exception as error:
                    self._record_error(ep.name, provider, "importing " + ep.value, error)
                    continue
                self._add_plugin(ep.name, plugin, provider, "entry point " + ep.value)
        for module_name in _env_list("DAGNET_PLUGINS"):
            provider = Provider(module_name)
            if module_name in blocked:
                self.blocked.append(str(provider))
                continue
            try:
                module = importlib.import_module(module_name)
            except Exception as error:
                self._record_error(module_name, provider, "importing it from DAGNET_PLUGINS", error)
                continue
            self._add_plugin(module_name, module, provider, "DAGNET_PLUGINS")
        for plugin, name in self._pending_direct:
            self._add_plugin(name, plugin, Provider(name), "dagnet.plugins.register()")
        self._pending_direct.clear()

    @staticmethod
    def _entry_points() -> list[Any]:
        eps = list(importlib_metadata.entry_points(group=ENTRY_POINT_GROUP))

        # dagnet's own plugins first, then the rest by distribution, so that
        # "the later one overrides" has one meaning on every machine.
        def order(ep: Any) -> tuple[int, str, str]:
            dist = getattr(ep, "dist", None)
            name = dist.metadata["Name"] if dist is not None else ""
            return (0 if name == _SELF_DISTRIBUTION else 1, name.lower(), ep.name)

        unique = {}
        for ep in sorted(eps, key=order):  # a dist on sys.path twice lists its eps twice
            unique.setdefault((ep.name, ep.value), ep)
        return list(unique.values())

    def _add_plugin(self, name: str, plugin: Any, provider: Provider, source: str) -> None:
        if name in self.plugins:
            first = self.plugins[name]
            self._record_error(
                name, provider, "registering",
                PluginError(f"plugin name {name!r} is taken by {first.provider}; "
                            f"rename one entry point"),
            )
            return
        try:
            self._pm.register(plugin, name=name)
        except Exception as error:  # pluggy validates hookimpl names and signatures
            self._record_error(name, provider, "registering its hooks", error)
            return
        info = PluginInfo(name, plugin, provider, source)
        self.plugins[name] = info
        for attribute in self._filled:  # registries already filled get this plugin now
            self._call_registrar(info, attribute)

    def _record_error(self, name: str, provider: Provider, stage: str, error: BaseException) -> None:
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        record = PluginLoadError(name, provider, stage, error, text)
        self.errors.append(record)
        warnings.warn(
            f"dagnet: {record.summary()}; other plugins keep working "
            f"(run `dagnet plugins` for the traceback)",
            PluginLoadWarning,
            stacklevel=4,
        )

    # -- registrars --------------------------------------------------------
    def _call_registrar(self, info: PluginInfo, attribute: str) -> None:
        hook_name = _HOOKS[attribute]
        registry: Registry[Any] = getattr(self, attribute)
        impls = [i for i in getattr(self._pm.hook, hook_name).get_hookimpls() if i.plugin is info.plugin]
        for impl in impls:
            registry.provider, registry._added_in_call = info.provider, []
            try:
                impl.function(**{arg: registry for arg in impl.argnames})
            except Exception as error:
                # Keep the registry as it was before this call; the plugin's other
                # registrars (engines, backends, ops) are independent and stay.
                registry._rollback(registry._added_in_call)
                registry._added_in_call = []
                self._record_error(info.name, info.provider, f"running {hook_name}", error)
            finally:
                added, registry._added_in_call = registry._added_in_call, []
                registry.provider = Provider("<registered directly>")
            if added:
                info.registered.setdefault(attribute, []).extend(added)

    def _fill(self, attribute: str) -> Registry[Any]:
        with self._lock:
            if not self._discovered:
                self._discovered = True
                self._discover()
            if attribute not in self._filled:
                self._filled.add(attribute)
                for info in list(self.plugins.values()):
                    self._call_registrar(info, attribute)
            return getattr(self, attribute)

    # -- public ------------------------------------------------------------
    def engine_registry(self) -> EngineRegistry:
        return self._fill("engines")  # type: ignore[return-value]

    def backend_registry(self) -> BackendRegistry:
        return self._fill("backends")  # type: ignore[return-value]

    def op_registry(self) -> OpRegistry:
        return self._fill("ops")  # type: ignore[return-value]

    def load_all(self) -> None:
        """Discover every plugin and fill every registry (what ``dagnet plugins`` shows)."""
        for attribute in _HOOKS:
            self._fill(attribute)

    def register(self, plugin: Any, name: str | None = None) -> None:
        """Add a plugin object or module by hand (tests, notebooks, embedded use)."""
        name = name or getattr(plugin, "__name__", None) or repr(plugin)
        with self._lock:
            if self._discovered:
                self._add_plugin(name, plugin, Provider(name), "dagnet.plugins.register()")
            else:
                self._pending_direct.append((plugin, name))
