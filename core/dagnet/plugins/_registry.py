"""Typed registries that the registrar hooks fill, remembering who provided what."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .._errors import DuplicateRegistrationError, UnknownNameError

__all__ = ["Provider", "Registration", "Registry", "EngineRegistry", "BackendRegistry", "OpRegistry"]

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


UNKNOWN_PROVIDER = Provider("<registered directly>")


@dataclass(frozen=True)
class Registration(Generic[T]):
    """One registered name, its value and its provider."""

    name: str
    value: T
    provider: Provider


class Registry(Generic[T]):
    """Names to values of one kind (engines, backends or operators).

    While a plugin's registrar runs, the plugin manager sets ``provider`` so
    every ``add`` is attributed.  A second ``add`` of a name is an error that
    names both providers, unless it passes ``override=True``.
    """

    kind = "entry"
    how_to_choose = ""

    def __init__(self) -> None:
        self._entries: dict[str, Registration[T]] = {}
        self._aliases: dict[str, str] = {}
        self.provider: Provider = UNKNOWN_PROVIDER
        self._added_in_call: list[str] = []

    def _add(self, name: str, value: T, *, override: bool = False, aliases: tuple[str, ...] = ()) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"a {self.kind} name must be a non-empty string, got {name!r}")
        existing = self._entries.get(name)
        if existing is not None and not override:
            raise DuplicateRegistrationError(
                f"{self.kind} {name!r} is registered twice: first by {existing.provider}, "
                f"again by {self.provider}; uninstall one of them, or pass override=True "
                f"in the later registration to replace the earlier one"
            )
        self._entries[name] = Registration(name, value, self.provider)
        self._added_in_call.append(name)
        for alias in aliases:
            self._aliases[alias] = name

    def _rollback(self, names: list[str]) -> None:
        """Undo a failed registrar's additions (the manager calls this)."""
        for name in names:
            self._entries.pop(name, None)
            for alias in [a for a, target in self._aliases.items() if target == name]:
                del self._aliases[alias]

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
        names = sorted(self._entries)
        close = difflib.get_close_matches(str(name), names, n=3) if isinstance(name, str) else []
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        listing = ", ".join(names) if names else f"none (no plugin registered a {self.kind}; see `dagnet plugins`)"
        message = f"unknown {self.kind} {name!r}{hint}; expected one of {listing}"
        return f"{message} ({self.how_to_choose})" if self.how_to_choose else message

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


class EngineRegistry(Registry[Callable[[], Any]]):
    """Engine factories by name; ``aliases`` lets MXNet's names find them."""

    kind = "engine"
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
                raise TypeError(f"a backend needs a string {attribute!r} attribute, got {backend!r}")
        self._add(backend.name, backend, override=override)

    def for_device_type(self, device_type: str) -> Any | None:
        """The backend serving ``device_type`` (the last registered wins), or None."""
        found = [r.value for r in self._entries.values() if r.value.device_type == device_type]
        return found[-1] if found else None


class OpRegistry(Registry[Any]):
    """Operator records by their MXNet name (``FullyConnected``, ``_plus_scalar``)."""

    kind = "operator"
    how_to_choose = "install the package that provides it and check `dagnet ops`"

    def add(self, op: Any, *, override: bool = False, aliases: tuple[str, ...] = ()) -> None:
        """Register an operator record under ``op.name``."""
        name = getattr(op, "name", None)
        if not isinstance(name, str):
            raise TypeError(f"an operator needs a string 'name' attribute, got {op!r}")
        self._add(name, op, override=override, aliases=aliases)
