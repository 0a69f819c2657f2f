"""Typed registries that the registrar hooks fill, remembering who provided what."""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .._errors import DuplicateRegistrationError, UnknownNameError

__all__ = [
    "Provider", "Registration", "Registry", "EngineRegistry", "BackendRegistry", "OpRegistry",
    "GraphPassRegistry",
]

T = TypeVar("T")


@dataclass(frozen=True)
class Provider:
    """Where a registration came from: the plugin and the distribution that ships it."""

    plugin: str
    distribution: str | None = None
    version: str | None = None

    def __str__(self) -> str:
        if self.distribution:
            return f"{self.distribution} {self.version or '?'} (plugin {self.plugin!r})"
        return f"plugin {self.plugin!r}"

    @property
    def label(self) -> str:
        """The distribution and version, or the plugin where there is no distribution."""
        if self.distribution:
            return f"{self.distribution} {self.version or '?'}"
        return f"plugin {self.plugin!r}"


UNKNOWN_PROVIDER = Provider("<registered directly>")


@dataclass(frozen=True)
class Registration(Generic[T]):
    """One registered name, its value and its provider."""

    name: str
    value: T
    provider: Provider


def _no_notes() -> list[str]:
    return []


class Registry(Generic[T]):
    """Names to values of one kind (engines, backends or operators).

    While a plugin's registrar runs, the plugin manager sets ``provider`` so
    every ``add`` is attributed.  A second ``add`` of a name, or an alias that
    is already a name or another entry's alias, is an error that names both
    providers, unless it passes ``override=True``.
    """

    kind = "entry"
    article = "a"
    how_to_choose = ""

    def __init__(self) -> None:
        self._entries: dict[str, Registration[T]] = {}
        self._aliases: dict[str, str] = {}
        self.provider: Provider = UNKNOWN_PROVIDER
        # While a registrar runs: the names it added, and how to undo each change.
        self._added_in_call: list[str] = []
        self._undo: list[tuple[dict[str, Any], str, Any]] | None = None
        # Set by the plugin manager: why a registry may be missing names
        # (autoload off, plugins that failed), shown in "unknown name" errors.
        self.notes: Callable[[], list[str]] = _no_notes

    def _owner(self, name: str) -> Provider:
        """Who provided ``name`` (a name or an alias)."""
        return self._entries[self.resolve(name)].provider

    def _set(self, table: dict[str, Any], key: str, value: Any) -> None:
        """``table[key] = value`` (``_MISSING`` deletes), undoable while a registrar runs."""
        if self._undo is not None:
            self._undo.append((table, key, table.get(key, _MISSING)))
        if value is _MISSING:
            table.pop(key, None)
        else:
            table[key] = value

    def _duplicate(self, what: str, detail: str = "", fix: str = "") -> DuplicateRegistrationError:
        return DuplicateRegistrationError(
            f"{self.kind} {what!r} is registered twice: first by {self._owner(what)}, "
            f"again by {self.provider}{detail}; uninstall one of them, or "
            + (fix or "pass override=True in the later registration to replace the earlier one")
        )

    def _add(self, name: str, value: T, *, override: bool = False,
             aliases: tuple[str, ...] = ()) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(
                f"{self.article} {self.kind} name must be a non-empty string, got {name!r}")
        if isinstance(aliases, str) or not all(isinstance(a, str) and a for a in aliases):
            raise TypeError(f"{self.kind} {name!r}: aliases must be a tuple of non-empty strings, "
                            f"got {aliases!r}")
        aliases = tuple(a for a in dict.fromkeys(aliases) if a != name)
        if not override and (name in self._entries or name in self._aliases):
            raise self._duplicate(name)
        for alias in aliases:
            if alias in self._entries:  # shadowing a name would hide it from resolve()
                raise self._duplicate(
                    alias, f" (as an alias of {name!r})",
                    f"register {name!r} under the name {alias!r} with override=True")
            if not override and alias in self._aliases and self._aliases[alias] != name:
                raise self._duplicate(alias, f" (as an alias of {name!r})")
        if name in self._aliases:  # an overridden alias gives way to the name itself
            self._set(self._aliases, name, _MISSING)
        self._set(self._entries, name, Registration(name, value, self.provider))
        for alias in aliases:
            self._set(self._aliases, alias, name)
        if self._undo is not None:
            self._added_in_call.append(name)

    @contextlib.contextmanager
    def _provided_by(self, provider: Provider) -> Iterator[list[str]]:
        """Attribute every ``add`` in the block to ``provider`` (the plugin manager uses this).

        Yields the list of names added.  If the block raises, the registry is
        put back exactly as it was, overridden entries and aliases included,
        and the exception propagates.
        """
        self.provider, self._added_in_call, self._undo = provider, [], []
        try:
            yield self._added_in_call
        except BaseException:
            for table, key, previous in reversed(self._undo):
                if previous is _MISSING:
                    table.pop(key, None)
                else:
                    table[key] = previous
            self._added_in_call.clear()
            raise
        finally:
            self.provider, self._undo = UNKNOWN_PROVIDER, None
            self._added_in_call = []

    def resolve(self, name: str) -> str:
        """The canonical name for ``name`` or one of its aliases."""
        return self._aliases.get(name, name)

    def registration(self, name: str) -> Registration[T]:
        """The registration for ``name``; an :class:`UnknownNameError` lists what exists."""
        try:
            return self._entries[self.resolve(name)]
        except (KeyError, TypeError):
            raise UnknownNameError(self.unknown_message(name)) from None

    def unknown_message(self, name: object) -> str:
        """What was asked, close names, what exists and who provided it, how to choose."""
        message = f"unknown {self.kind} {name!r}"
        if isinstance(name, str):
            close = difflib.get_close_matches(name, sorted({*self._entries, *self._aliases}), n=3)
            if close:
                message += f" (did you mean {', '.join(close)}?)"
        if self._entries:
            by_provider: dict[str, list[str]] = {}
            for registration in self.registrations():
                by_provider.setdefault(registration.provider.label, []).append(registration.name)
            listing = ", ".join(f"{', '.join(names)} (from {label})"
                                for label, names in by_provider.items())
            message += f"; expected one of {listing}"
        else:
            message += (f"; expected one of none: no plugin registered {self.article} {self.kind} "
                        f"(see `dagnet plugins`)")
        for part in [*self.notes(), self.how_to_choose]:
            message += f"; {part}" if part else ""
        return message

    def __getitem__(self, name: str) -> T:
        return self.registration(name).value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.resolve(name) in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def registrations(self) -> list[Registration[T]]:
        """Every registration, sorted by name."""
        return [self._entries[name] for name in sorted(self._entries)]

    def aliases(self) -> dict[str, str]:
        """Every alias and the name it stands for."""
        return dict(self._aliases)


_MISSING = object()


class EngineRegistry(Registry[Callable[[], Any]]):
    """Engine factories by name; ``aliases`` lets MXNet's names find them."""

    kind = "engine"
    article = "an"
    how_to_choose = (
        "choose with dagnet.engine.create(name), dagnet.config.set(engine=...), "
        "DAGNET_ENGINE or MXNET_ENGINE_TYPE"
    )

    def add(self, name: str, factory: Callable[[], Any], *, aliases: tuple[str, ...] = (),
            override: bool = False) -> None:
        """Register ``factory`` (returns a new engine) under ``name``."""
        if not callable(factory):
            raise TypeError(f"engine {name!r}: factory must be callable, got {factory!r}")
        self._add(name, factory, override=override, aliases=aliases)


class BackendRegistry(Registry[Any]):
    """Device backends by name (``cpu``, ``cuda``), each serving one device type."""

    kind = "backend"
    how_to_choose = "install a backend package, e.g. pip install 'dagnet[cuda]'"

    def add(self, backend: Any, *, override: bool = False) -> None:
        """Register a :class:`dagnet.backend.Backend` under its ``name``."""
        for attribute in ("name", "device_type"):
            if not isinstance(getattr(backend, attribute, None), str):
                raise TypeError(
                    f"a backend needs a string {attribute!r} attribute, got {backend!r}")
        self._add(backend.name, backend, override=override)

    def for_device_type(self, device_type: str) -> Any | None:
        """The backend serving ``device_type`` (the last registered wins), or None."""
        found = [r.value for r in self._entries.values() if r.value.device_type == device_type]
        if not found:  # a device type another backend's memory serves (cpu_shared)
            found = [r.value for r in self._entries.values()
                     if device_type in getattr(r.value, "also_serves", ())]
        return found[-1] if found else None


class OpRegistry(Registry[Any]):
    """Operator records by their MXNet name (``FullyConnected``, ``_plus_scalar``)."""

    kind = "operator"
    article = "an"
    how_to_choose = "install the package that provides it and check `dagnet ops`"

    def add(self, op: Any, *, override: bool = False, aliases: tuple[str, ...] = ()) -> None:
        """Register an operator record under ``op.name``."""
        name = getattr(op, "name", None)
        if not isinstance(name, str):
            raise TypeError(f"an operator needs a string 'name' attribute, got {op!r}")
        self._add(name, op, override=override, aliases=aliases)


class GraphPassRegistry(Registry[Callable[[Any], Any]]):
    """Graph passes by name: rewrites of a graph (MXNet's subgraph backends).

    A pass runs in name order on every executor bound while config ``graph_passes`` is
    on, and, when it names ``backends``, whenever one of them is asked for: by
    ``Symbol.optimize_for(backend)``, ``HybridBlock.hybridize(backend=...)``, or at bind
    through config ``subgraph_backend`` (MXNet's ``MXNET_SUBGRAPH_BACKEND``), which then
    runs that backend's passes instead of the every-bind ones.  A backend is only a name
    its passes share: several passes, from several plugins, may serve one.
    """

    kind = "graph pass"
    how_to_choose = "install the package that provides it and check `dagnet plugins`"

    def __init__(self) -> None:
        super().__init__()
        self._roles: dict[str, tuple[tuple[str, ...], bool]] = {}  # name -> (backends, on_bind)

    def add(self, name: str, rewrite: Callable[[Any], Any], *, backends: tuple[str, ...] = (),
            on_bind: bool | None = None, override: bool = False) -> None:
        """Register ``rewrite(graph) -> JSON dict | None`` under ``name``, serving the
        subgraph ``backends`` (names as MXNet users pass them to ``optimize_for``); it also
        runs at every bind when ``on_bind`` is true, which it is by default only for a pass
        that serves no backend."""
        if not callable(rewrite):
            raise TypeError(f"graph pass {name!r}: rewrite must be callable, got {rewrite!r}")
        if isinstance(backends, str) or not all(isinstance(b, str) and b for b in backends):
            raise TypeError(f"graph pass {name!r}: backends must be a tuple of non-empty "
                            f"strings, got {backends!r}")
        if on_bind is None:
            on_bind = not backends
        if not backends and not on_bind:
            raise TypeError(f"graph pass {name!r} would never run: name the backends it "
                            f"serves (backends=(...)) or let it run at every bind")
        self._add(name, rewrite, override=override)
        self._set(self._roles, name, (tuple(dict.fromkeys(backends)), bool(on_bind)))

    def backends_of(self, name: str) -> tuple[str, ...]:
        """The subgraph backends the pass ``name`` serves."""
        return self._roles[self.registration(name).name][0]

    def runs_on_bind(self, name: str) -> bool:
        """Whether the pass ``name`` runs at every bind."""
        return self._roles[self.registration(name).name][1]

    def on_bind(self) -> list[Registration[Callable[[Any], Any]]]:
        """The passes run at every bind, in name order."""
        return [r for r in self.registrations() if self._roles[r.name][1]]

    def backends(self) -> list[str]:
        """Every subgraph backend some pass serves, sorted."""
        return sorted({b for backends, _ in self._roles.values() for b in backends})

    def for_backend(self, backend: str) -> list[Registration[Callable[[Any], Any]]]:
        """The passes serving ``backend``, in name order; an :class:`UnknownNameError`
        lists the backends there are."""
        found = [r for r in self.registrations() if backend in self._roles[r.name][0]]
        if not found:
            raise UnknownNameError(self._unknown_backend(backend))
        return found

    def _unknown_backend(self, backend: object) -> str:
        message = f"unknown subgraph backend {backend!r}"
        known = self.backends()
        if isinstance(backend, str):
            close = difflib.get_close_matches(backend, known, n=3)
            if close:
                message += f" (did you mean {', '.join(close)}?)"
        if known:
            listing = ", ".join(
                f"{b} (from {', '.join(sorted({r.provider.label for r in self.for_backend(b)}))})"
                for b in known)
            message += f"; expected one of {listing}"
        else:
            message += "; no plugin registered a graph pass for a backend"
        message += ("; a plugin serves a backend with passes.add(name, rewrite, "
                    "backends=(...)) in its dagnet_register_graph_passes hook")
        for part in [*self.notes(), self.how_to_choose]:
            message += f"; {part}" if part else ""
        return message
