"""``import dagnet`` is cheap: it imports no plugin, no array library and does not
scan entry points; plugins are imported when a registry is first needed.

"Cheap" is checked by *which* modules a fresh interpreter imports, never by
timing (timings live in ``benchmarks/``).  A third-party distribution is
installed next to dagnet so "no plugin" covers outside plugins too.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dagnet
from dagnet.testing.distributions import install_distribution, subprocess_env

if sys.version_info >= (3, 12):
    from importlib import metadata as importlib_metadata
else:
    import importlib_metadata

# Modules `import dagnet` may bring beyond the standard library.
ALLOWED_THIRD_PARTY = {"dagnet", "pluggy"}
# Standard-library modules that only discovery needs.
DISCOVERY_ONLY = {"importlib.metadata", "importlib_metadata"}
# Subsystems the facade loads on first attribute access.
LAZY_SUBMODULES = {"dagnet.engine", "dagnet.backend", "dagnet.storage", "dagnet.resource",
                   "dagnet.random", "dagnet.testing", "dagnet.cli", "dagnet.kv",
                   "dagnet.kvstore", "dagnet.mod", "dagnet.module", "dagnet.model",
                   "dagnet.callback"}


def builtin_plugin_packages() -> set[str]:
    """Top-level packages named by dagnet's own ``dagnet`` entry points."""
    eps = importlib_metadata.distribution("dagnet").entry_points.select(group="dagnet")
    packages = {ep.value.split(":")[0].split(".")[0] for ep in eps}
    assert {"dagnet_engines", "dagnet_cpu", "dagnet_cuda"} <= packages
    return packages


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site-packages"
    install_distribution(
        site, "acme-engines", "1.2.0",
        modules={"acme_engines.plugin": """
            import dagnet
            from dagnet_engines.naive import NaiveEngine

            @dagnet.hookimpl
            def dagnet_register_engines(engines):
                engines.add("acme", NaiveEngine)
        """},
        plugins={"acme": "acme_engines.plugin"},
    )
    return site


def modules_after(site: Path, steps: list[str], **variables: str) -> list[set[str]]:
    """In a fresh interpreter, the modules each step of code added to ``sys.modules``."""
    script = textwrap.dedent("""
        import json, sys
        seen, added = set(sys.modules), []
        for step in json.loads(sys.argv[1]):
            exec(step)
            added.append(sorted(set(sys.modules) - seen))
            seen = set(sys.modules)
        print(json.dumps(added))
    """)
    result = subprocess.run(
        [sys.executable, "-c", script, json.dumps(steps)], cwd=site.parent,
        env=subprocess_env(site, **variables), capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [set(step) for step in json.loads(result.stdout.splitlines()[-1])]


def top_level(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


@pytest.mark.parametrize("variables", [{}, {"DAGNET_DISABLE_PLUGIN_AUTOLOAD": "1"}],
                         ids=["autoload", "autoload-off"])
def test_import_dagnet_imports_only_its_core(site, variables):
    (imported,) = modules_after(site, ["import dagnet"], **variables)

    assert "dagnet" in imported
    plugin_modules = top_level(imported) & (builtin_plugin_packages() | {"acme_engines"})
    assert not plugin_modules, f"import dagnet imported plugin packages {plugin_modules}"
    assert not top_level(imported) & {"numpy", "cupy"}
    assert not imported & DISCOVERY_ONLY, "import dagnet scanned the entry points"
    assert not imported & LAZY_SUBMODULES
    outside = top_level(imported) - set(sys.stdlib_module_names) - ALLOWED_THIRD_PARTY
    assert not outside, f"import dagnet imported third-party packages {outside}"


def test_plugins_load_when_a_registry_is_first_needed_and_never_import_cupy(site):
    core, engines, backends = modules_after(site, [
        # Touching the light core, the lazy subsystems and the manager loads no plugin.
        "import dagnet, dagnet.engine, dagnet.backend, dagnet.storage\n"
        "dagnet.cpu(); dagnet.config.get('engine'); dagnet.plugins.manager()",
        "dagnet.plugins.engines()",
        "assert 'cuda' in dagnet.plugins.backends()",
    ])

    packages = builtin_plugin_packages() | {"acme_engines"}
    assert not top_level(core) & (packages | {"cupy"})
    assert not core & DISCOVERY_ONLY
    assert {"dagnet_engines.plugin", "acme_engines.plugin"} <= engines
    assert "cupy" not in top_level(engines | backends)  # the cuda backend registered without it


def test_the_pytest_plugin_loads_no_plugin(site):
    (imported,) = modules_after(site, ["import dagnet.testing.pytest_plugin"])

    assert not top_level(imported) & (builtin_plugin_packages() | {"acme_engines", "cupy"})


def test_pytest_rewrites_the_test_helpers_and_not_the_rest_of_dagnet(tmp_path):
    # pytest rewrites every module of the package owning a plugin's entry point; the
    # entry point is a package of its own so that a session does not compile all of dagnet
    (entry_point,) = importlib_metadata.distribution("dagnet").entry_points.select(
        group="pytest11")
    assert entry_point.value == "dagnet_pytest"
    (tmp_path / "test_loaders.py").write_text(textwrap.dedent("""
        import sys

        import dagnet.ndarray
        import dagnet.testing.op_suite

        def test_loaders(dagnet_engine_name):  # a fixture of dagnet's plugin
            loader = lambda name: type(sys.modules[name].__loader__).__name__
            assert loader("dagnet.ndarray") != "AssertionRewritingHook"
            assert loader("dagnet.testing.op_suite") == "AssertionRewritingHook"
    """))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             str(tmp_path / "test_loaders.py")], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_public_name_of_the_facade_resolves():
    for name in dagnet.__all__:
        assert getattr(dagnet, name) is not None, name
    assert set(dagnet.__all__) <= set(dir(dagnet))
    with pytest.raises(AttributeError, match="no attribute 'enigne'"):
        dagnet.enigne  # noqa: B018
