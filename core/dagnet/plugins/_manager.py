"""Discovery and loading: entry points, switches, and the per-plugin bookkeeping."""

from __future__ import annotations

import importlib
import os
import re
import sys
import threading
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any

import pluggy

from .._errors import PluginError
from . import _hookspec
from ._registry import (
    BackendRegistry,
    EngineRegistry,
    GraphPassRegistry,
    OpRegistry,
    Provider,
    Registry,
)

__all__ = [
    "PluginManager", "PluginInfo", "PluginLoadError", "PluginLoadWarning", "ENTRY_POINT_GROUP",
]

ENTRY_POINT_GROUP = "dagnet"
_SELF_DISTRIBUTION = "dagnet"

# registry attribute -> the hook that fills it
_HOOKS = {
    "engines": "dagnet_register_engines",
    "backends": "dagnet_register_backends",
    "ops": "dagnet_register_ops",
    "graph_passes": "dagnet_register_graph_passes",
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
        origin = self.provider.label if self.provider.distribution else "no distribution"
        return (
            f"plugin {self.plugin!r} from {origin} failed while {self.stage}: "
            f"{type(self.error).__name__}: {self.error}"
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


def _normalize(distribution: str) -> str:
    """PEP 503 normalization, so ``Acme_Engines`` blocks ``acme-engines``."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


def _importlib_metadata() -> Any:
    # Imported here, not at module level: it costs about a quarter of
    # ``import dagnet`` and only discovery needs it.
    if sys.version_info >= (3, 12):
        from importlib import metadata
    else:  # the stdlib version before 3.12 lacks EntryPoint.dist and the select() API we rely on
        import importlib_metadata as metadata
    return metadata


def _provider_of(ep: Any) -> Provider:
    """The entry point's distribution and version, tolerating metadata without them."""
    dist = getattr(ep, "dist", None)
    name = version = None
    if dist is not None:
        try:
            name = dist.name
        except Exception:  # METADATA without Name: fall back on the .dist-info folder's name
            name = getattr(dist, "_normalized_name", None)
        try:
            version = dist.version
        except Exception:
            version = None
    return Provider(ep.name, name, version)


class PluginManager:
    """Finds plugins, calls their registrars one at a time and records the outcome.

    Plugins are imported when a registry is first needed, never at
    ``import dagnet``.  Switches (read at that moment):

    - ``DAGNET_DISABLE_PLUGIN_AUTOLOAD=1`` (or config ``autoload_plugins``):
      skip the entry points; only explicitly added plugins load.
    - ``DAGNET_BLOCK_PLUGINS=a,b``: skip the plugins with these entry-point
      or distribution names (distribution names compare normalized, so
      ``acme_engines`` blocks ``acme-engines``), or, for ``DAGNET_PLUGINS``,
      module names.
    - ``DAGNET_PLUGINS=pkg.mod,other.mod``: import and register these modules
      too, as pytest does with ``PYTEST_PLUGINS``.
    """

    def __init__(self) -> None:
        self._pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
        self._pm.add_hookspecs(_hookspec)
        self._lock = threading.RLock()
        self._discovered = False
        self._autoload: bool | None = None
        self._pending_direct: list[tuple[Any, str]] = []
        self._direct: list[tuple[Any, str]] = []  # every plugin added by hand
        self.plugins: dict[str, PluginInfo] = {}
        self.errors: list[PluginLoadError] = []
        self.blocked: list[str] = []
        self.engines = EngineRegistry()
        self.backends = BackendRegistry()
        self.ops = OpRegistry()
        self.graph_passes = GraphPassRegistry()
        for registry in (self.engines, self.backends, self.ops, self.graph_passes):
            registry.notes = self._notes
        self._filled: set[str] = set()

    # -- discovery ---------------------------------------------------------
    def _discover(self) -> None:
        blocked = set(_env_list("DAGNET_BLOCK_PLUGINS"))
        blocked_dists = {_normalize(name) for name in blocked}
        if self._autoload:
            for ep, provider in self._entry_points():
                dist = provider.distribution
                if ep.name in blocked or (dist and _normalize(dist) in blocked_dists):
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

    def _entry_points(self) -> list[tuple[Any, Provider]]:
        try:
            eps = list(_importlib_metadata().entry_points(group=ENTRY_POINT_GROUP))
        except Exception as error:  # a broken environment must not break `import dagnet` users
            self._record_error("<entry points>", Provider("<entry points>"),
                               f"listing the {ENTRY_POINT_GROUP!r} entry points", error)
            return []
        found = [(ep, _provider_of(ep)) for ep in eps]

        # dagnet's own plugins first, then the rest by distribution, so that
        # "the later one overrides" has one meaning on every machine.
        def order(item: tuple[Any, Provider]) -> tuple[int, str, str]:
            dist = _normalize(item[1].distribution or "")
            return (0 if dist == _SELF_DISTRIBUTION else 1, dist, item[0].name)

        # One entry point seen twice (its distribution twice on sys.path) loads once.
        unique = {}
        for ep, provider in sorted(found, key=order):
            key = (_normalize(provider.distribution or ""), ep.name, ep.value)
            unique.setdefault(key, (ep, provider))
        return list(unique.values())

    def _add_plugin(self, name: str, plugin: Any, provider: Provider, source: str) -> None:
        if self._pm.is_registered(plugin):
            return  # the same module named twice (an entry point and DAGNET_PLUGINS): load it once
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
        unknown = sorted(
            caller.name for caller in self._pm.get_hookcallers(plugin) or []
            if caller.spec is None and not any(
                impl.optionalhook for impl in caller.get_hookimpls() if impl.plugin is plugin)
        )
        if unknown:  # most likely a misspelt hook, which would otherwise never be called
            self._pm.unregister(plugin)
            self._record_error(
                name, provider, "registering its hooks",
                PluginError(f"unknown hook(s) {', '.join(unknown)}; dagnet's hooks are "
                            f"{', '.join(_HOOKS.values())} (mark a hook of another plugin "
                            f"with @dagnet.hookimpl(optionalhook=True))"),
            )
            return
        info = PluginInfo(name, plugin, provider, source)
        self.plugins[name] = info
        for attribute in self._filled:  # registries already filled get this plugin now
            self._call_registrar(info, attribute)

    def _record_error(self, name: str, provider: Provider, stage: str,
                      error: BaseException) -> None:
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        record = PluginLoadError(name, provider, stage, error, text)
        self.errors.append(record)
        warnings.warn(
            f"dagnet: {record.summary()}; other plugins keep working "
            f"(run `dagnet plugins` for the traceback)",
            PluginLoadWarning,
            stacklevel=4,
        )

    def _notes(self) -> list[str]:
        """Why a registry may lack a name: shown in its "unknown name" errors."""
        notes = []
        if self._autoload is False:
            notes.append("plugin autoload is off (DAGNET_DISABLE_PLUGIN_AUTOLOAD or config "
                         "autoload_plugins), so only DAGNET_PLUGINS and dagnet.plugins.register() "
                         "add plugins")
        if self.errors:
            notes.append(f"{len(self.errors)} plugin(s) failed to load; `dagnet plugins` shows why")
        return notes

    # -- registrars --------------------------------------------------------
    def _call_registrar(self, info: PluginInfo, attribute: str) -> None:
        hook_name = _HOOKS[attribute]
        registry: Registry[Any] = getattr(self, attribute)
        impls = [impl for impl in getattr(self._pm.hook, hook_name).get_hookimpls()
                 if impl.plugin is info.plugin]
        for impl in impls:
            try:
                # Keeps the registry as it was if the registrar raises; the plugin's
                # other registrars (engines, backends, ops) are independent and stay.
                with registry._provided_by(info.provider) as added:
                    impl.function(**{arg: registry for arg in impl.argnames})
            except Exception as error:
                self._record_error(info.name, info.provider, f"running {hook_name}", error)
            else:
                if added:
                    info.registered.setdefault(attribute, []).extend(added)

    def _fill(self, attribute: str) -> Registry[Any]:
        from .. import config

        with self._lock:
            try:
                if not self._discovered:
                    # Read first: a bad setting raises here, each time, and leaves
                    # nothing half done.  The flag is set before discovery so a
                    # plugin that asks for a registry while importing gets this one.
                    self._autoload = bool(config.get("autoload_plugins"))
                    self._discovered = True
                    self._discover()
                if attribute not in self._filled:
                    self._filled.add(attribute)
                    for info in list(self.plugins.values()):
                        self._call_registrar(info, attribute)
            except BaseException:  # Ctrl-C while plugins load: the next use starts over
                self._start_over()
                raise
            return getattr(self, attribute)

    def _start_over(self) -> None:
        """Forget a discovery or a registry fill that was interrupted half done, keeping
        the plugins added by hand: the next use loads everything again."""
        direct = self._direct
        self.__init__()  # type: ignore[misc]
        self._pending_direct = list(direct)
        self._direct = list(direct)

    # -- public ------------------------------------------------------------
    def engine_registry(self) -> EngineRegistry:
        return self._fill("engines")  # type: ignore[return-value]

    def backend_registry(self) -> BackendRegistry:
        return self._fill("backends")  # type: ignore[return-value]

    def op_registry(self) -> OpRegistry:
        return self._fill("ops")  # type: ignore[return-value]

    def graph_pass_registry(self) -> GraphPassRegistry:
        return self._fill("graph_passes")  # type: ignore[return-value]

    def load_all(self) -> None:
        """Discover every plugin and fill every registry (what ``dagnet plugins`` shows)."""
        for attribute in _HOOKS:
            self._fill(attribute)

    def register(self, plugin: Any, name: str | None = None) -> None:
        """Add a plugin object or module by hand (tests, notebooks, embedded use)."""
        name = name or getattr(plugin, "__name__", None) or repr(plugin)
        with self._lock:
            self._direct.append((plugin, name))
            if self._discovered:
                self._add_plugin(name, plugin, Provider(name), "dagnet.plugins.register()")
            else:
                self._pending_direct.append((plugin, name))
