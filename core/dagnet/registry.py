"""Registries of classes by name (MXNet's ``mx.registry``), for libraries that build
their own factories on it (GluonNLP's datasets, GluonCV's): one registry per base
class, names compared lower-case.

>>> class Shape: ...
>>> register = get_register_func(Shape, "shape")
>>> create = get_create_func(Shape, "shape")
>>> @register
... class Square(Shape):
...     def __init__(self, side=1):
...         self.side = side
>>> create("square", side=2).side
2
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any

from ._errors import DagnetError, UnknownNameError

__all__ = ["get_alias_func", "get_create_func", "get_register_func", "get_registry"]

_REGISTRY: dict[type, dict[str, type]] = {}


class RegistryError(DagnetError, TypeError):
    """A class registered under a base class it does not derive from, or a name that is
    not a string."""


def get_registry(base_class: type) -> dict[str, type]:
    """A copy of the classes registered under ``base_class``, by name."""
    return dict(_REGISTRY.setdefault(base_class, {}))


def get_register_func(base_class: type, nickname: str) -> Callable[..., type]:
    """``register(klass, name=None)``: register a subclass of ``base_class`` under
    ``name`` (default: the class name), lower-cased; a name taken already is replaced,
    with a warning naming both classes."""
    registry = _REGISTRY.setdefault(base_class, {})

    def register(klass: type, name: str | None = None) -> type:
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise RegistryError(
                f"can only register subclasses of {base_class.__name__} as a {nickname}, "
                f"got {klass!r}")
        key = (klass.__name__ if name is None else name).lower()
        previous = registry.get(key)
        if previous is not None and previous is not klass:
            warnings.warn(
                f"new {nickname} {klass.__module__}.{klass.__name__} registered with name "
                f"{key} is overriding existing {nickname} "
                f"{previous.__module__}.{previous.__name__}", UserWarning, stacklevel=2)
        registry[key] = klass
        return klass

    register.__doc__ = f"Register a {nickname} class (a {base_class.__name__}) by name."
    return register


def get_alias_func(base_class: type, nickname: str) -> Callable[..., Callable[[type], type]]:
    """``alias(*names)``: a class decorator registering the class under every name."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases: str) -> Callable[[type], type]:
        def registering(klass: type) -> type:
            for name in aliases:
                register(klass, name)
            return klass

        return registering

    return alias


def get_create_func(base_class: type, nickname: str) -> Callable[..., Any]:
    """``create(name, *args, **kwargs)``: an instance of the class registered as ``name``.

    ``name`` may be an instance already (returned as is), a dict of keyword arguments
    holding ``nickname``, or a JSON string: ``'["name", {kwargs}]'`` or ``'{kwargs}'``;
    it may also be given as the keyword ``nickname``.
    """
    registry = _REGISTRY.setdefault(base_class, {})

    def create(*args: Any, **kwargs: Any) -> Any:
        if args:
            name, args = args[0], args[1:]
        elif nickname in kwargs:
            name = kwargs.pop(nickname)
        else:
            raise RegistryError(f"create: say which {nickname} to create, by name or as "
                                f"the keyword {nickname}=")
        if isinstance(name, base_class):
            if args or kwargs:
                raise RegistryError(f"{nickname} is already an instance; additional "
                                    f"arguments are invalid")
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, str):
            raise RegistryError(f"{nickname} must be a name (a string), got {name!r}")
        if name.startswith("["):
            name, kwargs = json.loads(name)
            return create(name, **kwargs)
        if name.startswith("{"):
            return create(**json.loads(name))
        klass = registry.get(name.lower())
        if klass is None:
            raise UnknownNameError(
                f"{name!r} is not a registered {nickname}; expected one of "
                f"{', '.join(sorted(registry)) or '(none registered)'} (register it with "
                f"the {nickname} registry's register function first)")
        return klass(*args, **kwargs)

    create.__doc__ = f"Create a {nickname} (a {base_class.__name__}) from its name or config."
    return create
