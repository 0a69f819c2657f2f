"""The typed registries, and adding plugins by hand with ``dagnet.plugins.register``."""

from __future__ import annotations

import types

import pytest

import dagnet
from dagnet import DagnetError, DuplicateRegistrationError, PluginError, UnknownNameError, plugins
from dagnet.plugins import (
    BackendRegistry,
    EngineRegistry,
    OpRegistry,
    PluginLoadWarning,
    Provider,
)

DAGNET = Provider("engines", "dagnet", "0.1.0")
ACME = Provider("acme", "acme-engines", "1.2.0")


def factory() -> object:
    return object()


def engines(*entries: tuple[Provider, str, tuple[str, ...]]) -> EngineRegistry:
    """A registry filled as the manager fills one: each add attributed to a provider."""
    registry = EngineRegistry()
    for provider, name, aliases in entries:
        with registry._provided_by(provider):
            registry.add(name, factory, aliases=aliases)
    return registry


@pytest.fixture
def builtin() -> EngineRegistry:
    return engines((DAGNET, "naive", ("NaiveEngine",)), (DAGNET, "threaded", ("ThreadedEngine",)),
                   (DAGNET, "threaded_per_device", ()))


# -- lookups and "unknown name" ----------------------------------------------


def test_names_and_aliases_resolve(builtin):
    assert list(builtin) == ["naive", "threaded", "threaded_per_device"] and len(builtin) == 3
    assert builtin.resolve("NaiveEngine") == "naive"
    assert "ThreadedEngine" in builtin and "thread" not in builtin and 3 not in builtin
    assert builtin.registration("ThreadedEngine").name == "threaded"
    assert builtin["naive"] is factory
    assert builtin.aliases() == {"NaiveEngine": "naive", "ThreadedEngine": "threaded"}


def test_an_unknown_name_suggests_close_names_and_says_how_to_choose(builtin):
    with pytest.raises(UnknownNameError) as caught:
        builtin["thread"]

    message = str(caught.value)
    assert message.startswith("unknown engine 'thread' (did you mean threaded")
    assert "expected one of naive, threaded, threaded_per_device (from dagnet 0.1.0)" in message
    assert "DAGNET_ENGINE" in message and "dagnet.config.set(engine=...)" in message
    assert isinstance(caught.value, KeyError) and isinstance(caught.value, DagnetError)


def test_an_unknown_name_lists_the_names_of_each_provider(builtin):
    with builtin._provided_by(ACME):
        builtin.add("acme", factory)

    message = builtin.unknown_message("turbo")

    assert "did you mean" not in message
    assert ("expected one of acme (from acme-engines 1.2.0), "
            "naive, threaded, threaded_per_device (from dagnet 0.1.0);") in message


def test_an_unknown_name_in_an_empty_registry():
    with pytest.raises(UnknownNameError) as caught:
        BackendRegistry().registration("gpu")

    message = str(caught.value)

    assert message.startswith("unknown backend 'gpu'; expected one of none: no plugin registered "
                              "a backend (see `dagnet plugins`)")
    assert "pip install 'dagnet[cuda]'" in message
    assert "an operator" in OpRegistry().unknown_message("FullyConected")


def test_a_name_that_is_not_a_string_is_unknown_not_a_crash(builtin):
    with pytest.raises(UnknownNameError, match=r"unknown engine \['naive'\]"):
        builtin.registration(["naive"])


# -- adding --------------------------------------------------------------------


def test_a_second_add_names_both_providers(builtin):
    with pytest.raises(DuplicateRegistrationError) as caught, builtin._provided_by(ACME):
        builtin.add("naive", factory)

    message = str(caught.value)
    assert message == (
        "engine 'naive' is registered twice: first by dagnet 0.1.0 (plugin 'engines'), again "
        "by acme-engines 1.2.0 (plugin 'acme'); uninstall one of them, or pass override=True "
        "in the later registration to replace the earlier one")
    assert isinstance(caught.value, PluginError) and isinstance(caught.value, ValueError)
    assert builtin.registration("naive").provider == DAGNET


def test_override_replaces_and_keeps_the_aliases(builtin):
    def acme_naive() -> object:
        return "acme"

    with builtin._provided_by(ACME) as added:
        builtin.add("naive", acme_naive, override=True)

    assert added == ["naive"]
    assert builtin.registration("NaiveEngine") == dagnet.plugins.Registration("naive", acme_naive,
                                                                              ACME)


def test_a_registrar_that_raises_leaves_the_registry_as_it_was(builtin):
    before = (builtin.registrations(), builtin.aliases())

    with pytest.raises(RuntimeError), builtin._provided_by(ACME) as added:
        builtin.add("naive", factory, override=True, aliases=("Naive",))
        builtin.add("ThreadedEngine", factory, override=True)  # was an alias of threaded
        builtin.add("acme", factory, aliases=("AcmeEngine",))
        raise RuntimeError("half way")

    assert (builtin.registrations(), builtin.aliases()) == before
    assert added == []


def test_an_alias_may_not_shadow_a_name_even_with_override(builtin):
    with pytest.raises(DuplicateRegistrationError, match="under the name 'naive' with override"):
        builtin.add("fast", factory, aliases=("naive",), override=True)
    assert "fast" not in builtin


@pytest.mark.parametrize("name, value, aliases, match", [
    ("", factory, (), "an engine name must be a non-empty string"),
    ("x", "not callable", (), "factory must be callable"),
    ("x", factory, "X", "aliases must be a tuple"),
])
def test_engine_add_checks_its_arguments(name, value, aliases, match):
    with pytest.raises(TypeError, match=match):
        EngineRegistry().add(name, value, aliases=aliases)


def test_backend_and_op_registries_check_their_records():
    with pytest.raises(TypeError, match="needs a string 'device_type'"):
        BackendRegistry().add(types.SimpleNamespace(name="tpu"))
    with pytest.raises(TypeError, match="needs a string 'name'"):
        OpRegistry().add(object())


def test_a_device_type_finds_the_last_backend_registered_for_it():
    registry = BackendRegistry()
    first, second = (types.SimpleNamespace(name=n, device_type="gpu") for n in ("cuda", "rocm"))
    registry.add(first)
    registry.add(second)
    assert registry.for_device_type("gpu") is second and registry.for_device_type("tpu") is None


# -- dagnet.plugins.register ---------------------------------------------------


def hand_plugin(engine: str) -> types.ModuleType:
    module = types.ModuleType(f"hand_{engine}")

    @dagnet.hookimpl
    def dagnet_register_engines(engines):
        engines.add(engine, factory)

    module.dagnet_register_engines = dagnet_register_engines
    return module


def test_register_by_hand_before_and_after_discovery(fresh_plugins, monkeypatch):
    monkeypatch.setenv("DAGNET_DISABLE_PLUGIN_AUTOLOAD", "1")
    plugins.register(hand_plugin("early"))
    assert list(plugins.engines()) == ["early"]

    plugins.register(hand_plugin("late"), name="late-plugin")  # the registry is filled already

    assert list(plugins.engines()) == ["early", "late"]
    info = plugins.manager().plugins["late-plugin"]
    assert (info.source, info.provider, info.registered) == (
        "dagnet.plugins.register()", Provider("late-plugin"), {"engines": ["late"]})
    assert plugins.engines().registration("early").provider == Provider("hand_early")


def test_register_an_object_and_the_same_plugin_twice(fresh_plugins, monkeypatch):
    monkeypatch.setenv("DAGNET_DISABLE_PLUGIN_AUTOLOAD", "1")

    class Engines:
        @dagnet.hookimpl
        def dagnet_register_engines(self, engines):
            engines.add("from_object", factory)

    plugin = Engines()
    plugins.register(plugin, name="objects")
    plugins.register(plugin, name="objects again")  # the same object: loaded once, no error
    assert list(plugins.engines()) == ["from_object"]
    assert plugins.manager().errors == [] and list(plugins.manager().plugins) == ["objects"]

    with pytest.warns(PluginLoadWarning, match="plugin name 'objects' is taken"):
        plugins.register(hand_plugin("other"), name="objects")
    assert "other" not in plugins.engines()


def test_reset_forgets_plugins_registered_by_hand(fresh_plugins, monkeypatch):
    monkeypatch.setenv("DAGNET_DISABLE_PLUGIN_AUTOLOAD", "1")
    first = plugins.manager()
    plugins.register(hand_plugin("gone"))
    assert "gone" in plugins.engines() and plugins.manager() is first

    plugins.reset()

    assert plugins.manager() is not first and "gone" not in plugins.engines()
