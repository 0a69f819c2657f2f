"""Discovery through real installed distributions: the built-in plugins, a
third-party one, clashes, failures and the switches.

Each distribution is written by :mod:`dagnet.testing.distributions` exactly as
pip leaves one, so ``importlib.metadata`` finds it for real.
"""

from __future__ import annotations

import re
import sys
import types

import pytest

import dagnet
from dagnet import ConfigError, DuplicateRegistrationError, UnknownNameError, cli, plugins
from dagnet.plugins import PluginLoadWarning, Provider

BUILTIN_ENGINES = ["naive", "threaded", "threaded_per_device"]
DAGNET = ("dagnet", "0.1.0")

# Printed by the scripts below: every registration with its provider, the load errors.
REPORT = """
import json, dagnet
from dagnet import plugins

def report(**extra):
    manager = plugins.manager()
    manager.load_all()
    registries = {"engines": manager.engines, "backends": manager.backends}
    print(json.dumps({
        **{kind: {r.name: [r.provider.distribution, r.provider.version, r.provider.plugin]
                  for r in registry.registrations()} for kind, registry in registries.items()},
        "plugins": {name: info.source for name, info in manager.plugins.items()},
        "errors": [[e.plugin, e.provider.distribution, type(e.error).__name__, str(e.error),
                    e.traceback] for e in manager.errors],
        "blocked": manager.blocked,
        **extra,
    }))
"""


# -- the built-in plugins are ordinary entry points -------------------------


def test_builtin_engines_and_backends_come_from_dagnets_entry_points(sandbox):
    found = sandbox.json(REPORT + "report()")

    for name in BUILTIN_ENGINES:
        assert found["engines"][name] == [*DAGNET, "engines"]
    assert found["backends"]["cpu"] == [*DAGNET, "cpu"]
    assert found["backends"]["cuda"] == [*DAGNET, "cuda"]
    assert found["plugins"]["engines"] == "entry point dagnet_engines.plugin"
    assert found["errors"] == [] and found["blocked"] == []


def test_with_autoload_off_nothing_is_registered_and_the_error_says_how_to_choose(sandbox):
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "acme")

    found = sandbox.json(REPORT + """
import sys
try:
    dagnet.engine.create()
except dagnet.UnknownNameError as error:
    message = str(error)
report(message=message, acme_imported="acme_engines" in sys.modules)
""", DAGNET_DISABLE_PLUGIN_AUTOLOAD="1")

    assert found["engines"] == {} and found["backends"] == {} and found["plugins"] == {}
    assert found["acme_imported"] is False
    message = found["message"]
    assert message.startswith("unknown engine 'threaded_per_device'; expected one of none")
    assert "plugin autoload is off" in message
    assert "dagnet.config.set(engine=...)" in message and "DAGNET_ENGINE" in message


def test_DAGNET_PLUGINS_brings_the_builtin_engines_back_with_autoload_off(sandbox):
    found = sandbox.json(REPORT + """
engine = dagnet.engine.create("naive")
engine.shutdown()
report(engine=type(engine).__name__)
""", DAGNET_DISABLE_PLUGIN_AUTOLOAD="1", DAGNET_PLUGINS="dagnet_engines.plugin")

    assert sorted(found["engines"]) == BUILTIN_ENGINES
    assert found["backends"] == {}  # only what was named
    assert found["plugins"] == {"dagnet_engines.plugin": "DAGNET_PLUGINS"}
    assert found["engine"] == "NaiveEngine"


def test_the_config_key_turns_autoload_off_too(fresh_plugins):
    with dagnet.config.set(autoload_plugins=False):
        assert len(plugins.engines()) == 0
        assert plugins.manager().plugins == {}


# -- a third-party distribution ---------------------------------------------


def test_a_third_party_engine_is_discovered_and_runs(sandbox):
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "acme", aliases=("AcmeEngine",))

    found = sandbox.json(REPORT + """
engine = dagnet.engine.create("AcmeEngine")
ran = []
var = engine.new_var()
engine.push_sync(lambda rctx: ran.append(1), dagnet.cpu(), mutate_vars=[var])
engine.wait_for_var(var)
engine.shutdown()
report(kind=type(engine).__name__, ran=ran)
""")

    assert found["engines"]["acme"] == ["acme-engines", "1.2.0", "acme"]
    assert found["plugins"]["acme"] == "entry point acme_engines.plugin"
    assert (found["kind"], found["ran"]) == ("AcmeEngine", [1])
    assert sorted(found["engines"]) == sorted([*BUILTIN_ENGINES, "acme"])


def test_reset_picks_up_a_distribution_installed_into_the_running_interpreter(
        sandbox, fresh_plugins):
    assert "acme" not in plugins.engines()
    dist = sandbox.install_engines("acme-engines", "1.2.0", "acme", "acme")
    assert "acme" not in plugins.engines()  # discovery happens once per manager

    plugins.reset()
    assert plugins.engines().registration("acme").provider == \
        Provider("acme", "acme-engines", "1.2.0")

    dist.uninstall()
    assert not dist.dist_info.exists()
    plugins.reset()
    assert "acme" not in plugins.engines()


# -- the same name twice -----------------------------------------------------


def test_a_duplicate_engine_name_is_an_error_naming_both_distributions(sandbox):
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "acme", "naive")
    sandbox.install_engines("beta-engines", "0.4", "beta", "beta")

    found = sandbox.json(REPORT + """
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    plugins.engines()
engine = dagnet.engine.create("naive")
engine.shutdown()
report(warnings=[(w.category.__name__, str(w.message)) for w in caught],
       naive=type(engine).__module__)
""")

    assert found["engines"]["naive"] == [*DAGNET, "engines"]
    assert found["naive"] == "dagnet_engines.naive"
    assert "acme" not in found["engines"]  # the failed registrar is undone as a whole
    assert found["engines"]["beta"] == ["beta-engines", "0.4", "beta"]
    [(plugin, dist, kind, message, _)] = found["errors"]
    assert (plugin, dist, kind) == ("acme", "acme-engines", "DuplicateRegistrationError")
    assert "engine 'naive' is registered twice" in message
    assert "dagnet 0.1.0 (plugin 'engines')" in message
    assert "acme-engines 1.2.0 (plugin 'acme')" in message
    assert "override=True" in message
    [(category, warning)] = found["warnings"]
    assert category == "PluginLoadWarning"
    assert "acme-engines" in warning and "dagnet plugins" in warning


def test_override_replaces_the_earlier_registration(sandbox, fresh_plugins):
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "naive", override=True)

    registry = plugins.engines()

    assert registry.registration("naive").provider.distribution == "acme-engines"
    assert registry.registration("NaiveEngine").provider.distribution == "acme-engines"
    assert plugins.manager().errors == []
    assert plugins.manager().plugins["acme"].registered == {"engines": ["naive"]}


def test_a_failed_override_leaves_the_original_in_place(sandbox, fresh_plugins):
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "naive", "acme",
                            override=True, then_raise="RuntimeError('half way')")

    with pytest.warns(PluginLoadWarning, match="half way"):
        registry = plugins.engines()

    assert registry.registration("naive").provider.distribution == "dagnet"
    assert registry.resolve("NaiveEngine") == "naive"
    assert "acme" not in registry
    assert "acme" not in plugins.manager().plugins["acme"].registered.get("engines", [])


@pytest.mark.parametrize("alias", ["naive", "ThreadedEngine"], ids=["a-name", "an-alias"])
def test_an_alias_cannot_take_a_name_already_registered(sandbox, fresh_plugins, alias):
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "fast", aliases=(alias,))

    with pytest.warns(PluginLoadWarning):
        registry = plugins.engines()

    assert registry.registration(alias).provider.distribution == "dagnet"
    assert "fast" not in registry
    [error] = plugins.manager().errors
    assert isinstance(error.error, DuplicateRegistrationError)
    assert f"engine {alias!r} is registered twice" in str(error.error)
    assert "acme-engines 1.2.0" in str(error.error) and "dagnet 0.1.0" in str(error.error)


def test_two_distributions_with_the_same_entry_point_name(sandbox, fresh_plugins):
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "acme")
    sandbox.install_engines("acme-fork", "2.0", "acme", "fork")

    with pytest.warns(PluginLoadWarning, match="plugin name 'acme' is taken"):
        registry = plugins.engines()

    assert "acme" in registry and "fork" not in registry
    [error] = plugins.manager().errors
    assert error.provider == Provider("acme", "acme-fork", "2.0")
    assert "acme-engines 1.2.0" in str(error.error)


# -- plugins that break --------------------------------------------------------


@pytest.mark.parametrize("body, error", [
    ("import acme_missing_dependency", "ModuleNotFoundError"),
    ("raise RuntimeError('no licence key found')", "RuntimeError"),
])
def test_a_plugin_that_fails_to_import_is_reported_and_the_rest_work(sandbox, body, error):
    sandbox.install("broken-plugin", "0.3", modules={"broken_plugin.plugin": body},
                    plugins={"broken": "broken_plugin.plugin"})
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "acme")

    found = sandbox.json(REPORT + """
import warnings
warnings.simplefilter("ignore", plugins.PluginLoadWarning)
engine = dagnet.engine.create("acme")
engine.shutdown()
report()
""")

    [(plugin, dist, kind, _, trace)] = found["errors"]
    assert (plugin, dist, kind) == ("broken", "broken-plugin", error)
    assert "broken_plugin/plugin.py" in trace and body in trace  # its own traceback
    assert "acme" in found["engines"] and "naive" in found["engines"]
    assert {"cpu", "cuda"} <= set(found["backends"])


def test_a_registrar_that_raises_is_rolled_back_and_the_plugins_other_registrars_stay(
        sandbox, fresh_plugins, capsys):
    plugin = sandbox.engines_plugin("half", then_raise="ValueError('config file missing')") + """

@dagnet.hookimpl
def dagnet_register_backends(backends):
    import types
    backends.add(types.SimpleNamespace(name="acme_tpu", device_type="tpu",
                                       unavailable_reason="no TPU here"))
"""
    sandbox.install("acme-engines", "1.2.0", modules={"acme_engines.plugin": plugin},
                    plugins={"acme": "acme_engines.plugin"})

    with pytest.warns(PluginLoadWarning, match="config file missing"):
        plugins.manager().load_all()

    assert "half" not in plugins.engines()
    assert plugins.backends().registration("acme_tpu").provider.distribution == "acme-engines"
    assert plugins.manager().plugins["acme"].registered == {"backends": ["acme_tpu"]}
    [error] = plugins.manager().errors
    assert error.stage == "running dagnet_register_engines"
    assert "acme_engines/plugin.py" in error.traceback
    assert "raise ValueError('config file missing')" in error.traceback

    assert cli.main(["plugins"]) == 1
    report = capsys.readouterr().out
    assert ("- plugin 'acme' from acme-engines 1.2.0 failed while running "
            "dagnet_register_engines: ValueError: config file missing") in report
    assert "        raise ValueError('config file missing')" in report


@pytest.mark.parametrize("hook, match", [
    ("def dagnet_register_engines(registry):", "registry"),  # not the spec's argument name
    ("def dagnet_register_engine(engines):", "unknown hook.*dagnet_register_engine\\b"),
])
def test_a_malformed_hook_is_reported_not_ignored(sandbox, fresh_plugins, hook, match):
    sandbox.install("acme-engines", "1.2.0", plugins={"acme": "acme_engines.plugin"},
                    modules={"acme_engines.plugin": f"import dagnet\n@dagnet.hookimpl\n{hook}\n"
                                                    f"    raise AssertionError('called')\n"})

    with pytest.warns(PluginLoadWarning):
        plugins.manager().load_all()

    assert "acme" not in plugins.manager().plugins
    [error] = plugins.manager().errors
    assert error.stage == "registering its hooks"
    assert error.provider.distribution == "acme-engines"
    assert re.search(match, str(error.error))


def test_an_entry_point_naming_a_missing_attribute(sandbox, fresh_plugins):
    sandbox.install("acme-engines", "1.2.0", modules={"acme_engines.plugin": "x = 1"},
                    plugins={"acme": "acme_engines.plugin:hooks"})

    with pytest.warns(PluginLoadWarning, match="importing acme_engines.plugin:hooks"):
        assert "naive" in plugins.engines()
    assert type(plugins.manager().errors[0].error) is AttributeError


def test_a_distribution_without_name_metadata_breaks_nothing(sandbox, fresh_plugins):
    sandbox.install("nameless", "1.0", metadata={"Name": ""},
                    modules={"nameless_plugin": sandbox.engines_plugin("nameless")},
                    plugins={"nameless": "nameless_plugin"})

    registry = plugins.engines()

    assert "naive" in registry
    assert registry.registration("nameless").provider.distribution == "nameless"  # folder name
    assert plugins.manager().errors == []


# -- switches ------------------------------------------------------------------


def test_block_by_entry_point_name(sandbox):
    found = sandbox.json(REPORT + """
import sys
report(cuda_imported="dagnet_cuda" in sys.modules)
""", DAGNET_BLOCK_PLUGINS="cuda")

    assert "cuda" not in found["backends"] and "cpu" in found["backends"]
    assert found["blocked"] == ["dagnet 0.1.0 (plugin 'cuda')"]
    assert found["cuda_imported"] is False


@pytest.mark.parametrize("spelling", ["acme-engines", "Acme_Engines"])
def test_block_by_distribution_name(sandbox, fresh_plugins, monkeypatch, spelling):
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "acme")
    monkeypatch.setenv("DAGNET_BLOCK_PLUGINS", f"nothing-such, {spelling}")

    assert "acme" not in plugins.engines()
    assert plugins.manager().blocked == ["acme-engines 1.2.0 (plugin 'acme')"]
    assert "naive" in plugins.engines()
    assert "acme_engines" not in sys.modules


def test_DAGNET_PLUGINS_adds_a_module_that_belongs_to_no_distribution(
        sandbox, fresh_plugins, monkeypatch):
    (sandbox.site / "loose_plugin.py").write_text(sandbox.engines_plugin("loose"))
    monkeypatch.setenv("DAGNET_PLUGINS", "loose_plugin")

    registration = plugins.engines().registration("loose")

    assert registration.provider == Provider("loose_plugin")
    assert plugins.manager().plugins["loose_plugin"].source == "DAGNET_PLUGINS"


def test_DAGNET_PLUGINS_naming_an_entry_point_module_loads_it_once(fresh_plugins, monkeypatch):
    monkeypatch.setenv("DAGNET_PLUGINS", "dagnet_engines.plugin")

    registry = plugins.engines()

    assert plugins.manager().errors == []
    assert registry.registration("naive").provider.plugin == "engines"


def test_DAGNET_PLUGINS_failures_and_blocks(fresh_plugins, monkeypatch):
    monkeypatch.setenv("DAGNET_PLUGINS", "no_such_plugin_module, dagnet_engines.plugin")
    monkeypatch.setenv("DAGNET_BLOCK_PLUGINS", "dagnet_engines.plugin,engines")

    with pytest.warns(PluginLoadWarning, match="no_such_plugin_module"):
        registry = plugins.engines()

    assert len(registry) == 0
    assert plugins.manager().blocked == ["dagnet 0.1.0 (plugin 'engines')",
                                         "plugin 'dagnet_engines.plugin'"]
    [error] = plugins.manager().errors
    assert isinstance(error.error, ModuleNotFoundError)
    with pytest.raises(UnknownNameError, match="1 plugin\\(s\\) failed to load"):
        registry["naive"]


def test_a_plugin_asking_for_a_registry_while_it_imports_does_not_recurse(
        sandbox, fresh_plugins):
    sandbox.install("eager", "1.0", plugins={"eager": "eager_plugin"}, modules={
        "eager_plugin": "import dagnet\nSEEN = sorted(dagnet.plugins.engines())\n"
                        + sandbox.engines_plugin("eager").replace("import dagnet\n", "", 1)})

    assert "eager" in plugins.engines()
    assert isinstance(plugins.manager().plugins["eager"].plugin, types.ModuleType)
    assert not plugins.manager().errors


def test_a_bad_switch_value_raises_every_time_and_leaves_nothing_half_done(
        fresh_plugins, monkeypatch):
    monkeypatch.setenv("DAGNET_AUTOLOAD_PLUGINS", "maybe")
    for _ in range(2):
        with pytest.raises(ConfigError, match="DAGNET_AUTOLOAD_PLUGINS"):
            plugins.engines()
    monkeypatch.delenv("DAGNET_AUTOLOAD_PLUGINS")
    assert "naive" in plugins.engines()


def test_ctrl_c_while_plugins_load_leaves_them_to_load_again(fresh_plugins):
    """A KeyboardInterrupt in the middle of filling a registry (Ctrl-C while the
    operator modules import) starts discovery over at the next use, keeping the
    plugins added by hand: nothing is left half registered."""
    calls = []

    class Interrupted:
        @dagnet.hookimpl
        def dagnet_register_ops(self, ops):
            calls.append(len(calls))
            if len(calls) == 1:
                raise KeyboardInterrupt
            ops.add(dagnet.operator.Op(name="_ctrl_c_plugin_op", num_inputs=1))

    plugins.register(Interrupted(), name="interrupted")
    with pytest.raises(KeyboardInterrupt):
        plugins.ops()
    registry = plugins.ops()
    assert calls == [0, 1]
    assert "_ctrl_c_plugin_op" in registry and "FullyConnected" in registry
    assert "naive" in plugins.engines()
