"""The ``dagnet`` command: ``dagnet plugins`` and ``dagnet config``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import dagnet
from dagnet import cli

CONSOLE_SCRIPT = Path(sys.executable).with_name("dagnet")


def section(report: str, plugin: str) -> str:
    """The block of ``dagnet plugins`` output about ``plugin``, from its title line on."""
    found = [block for block in report.split("\n\n") if block.startswith(f"{plugin}  [")]
    assert len(found) == 1, f"no single section for plugin {plugin!r} in:\n{report}"
    return found[0]


def run_main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``dagnet *argv`` in this interpreter: status, stdout, stderr."""
    try:
        status = cli.main(list(argv))
    except SystemExit as exit:
        status = exit.code
    out, err = capsys.readouterr()
    return status, out, err


# -- dagnet plugins --------------------------------------------------------------


def test_plugins_lists_each_plugin_its_distribution_and_what_it_registered(sandbox):
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "acme")
    argv = [str(CONSOLE_SCRIPT)] if CONSOLE_SCRIPT.exists() else [sys.executable, "-m",
                                                                   "dagnet.cli"]

    result = sandbox.command([*argv, "plugins"])

    assert result.returncode == 0, result.stdout + result.stderr
    report = result.stdout
    assert report.startswith("dagnet 0.1.0: plugins from the 'dagnet' entry points\n")
    assert section(report, "engines").splitlines() == [
        "engines  [dagnet 0.1.0]",
        "  from: entry point dagnet_engines.plugin",
        "  engines: naive, threaded, threaded_per_device",
    ]
    assert "  backends: cpu (cpu; available)" in section(report, "cpu")
    assert "  backends: cuda (gpu; " in section(report, "cuda")
    assert section(report, "acme").splitlines() == [
        "acme  [acme-engines 1.2.0]",
        "  from: entry point acme_engines.plugin",
        "  engines: acme",
    ]
    assert "load errors" not in report and result.stderr == ""


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="cupy is installed here")
def test_plugins_shows_cuda_unavailable_when_cupy_is_not_installed(sandbox):
    found = sandbox.json("""
        import json, sys
        from dagnet import plugins
        cuda = plugins.backends()["cuda"]
        imported_by_registering = "cupy" in sys.modules
        print(json.dumps([imported_by_registering, cuda.unavailable_reason]))
    """)
    result = sandbox.cli("plugins")

    imported_by_registering, reason = found
    assert not imported_by_registering
    assert reason.startswith("cupy is not installed") and "pip install 'dagnet[cuda]'" in reason
    assert f"  backends: cuda (gpu; unavailable: {reason})" in section(result.stdout, "cuda")


def test_plugins_shows_why_a_broken_cupy_cannot_be_used_and_registering_never_imported_it(sandbox):
    marker = sandbox.root / "cupy-was-imported"
    (sandbox.site / "cupy").mkdir()
    (sandbox.site / "cupy" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n"
        "raise ImportError('libcudart.so.12: cannot open shared object file')\n")

    sandbox.json("import dagnet; dagnet.plugins.manager().load_all(); print('null')")
    assert not marker.exists(), "registering the cuda backend imported cupy"
    result = sandbox.cli("plugins")

    assert result.returncode == 0
    assert ("  backends: cuda (gpu; unavailable: cupy failed to import (ImportError: "
            "libcudart.so.12: cannot open shared object file)") in section(result.stdout, "cuda")


def test_plugins_exits_1_and_shows_a_broken_plugins_distribution_and_traceback(sandbox):
    sandbox.install("broken-plugin", "0.3", plugins={"broken": "broken_plugin.plugin"},
                    modules={"broken_plugin.plugin": "import acme_missing_dependency\n"})
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "acme")

    result = sandbox.cli("plugins")

    assert result.returncode == 1
    report = result.stdout
    errors = report[report.index("load errors (1):"):]
    assert errors.splitlines()[1] == (
        "- plugin 'broken' from broken-plugin 0.3 failed while importing broken_plugin.plugin: "
        "ModuleNotFoundError: No module named 'acme_missing_dependency'")
    trace = sandbox.site / "broken_plugin" / "plugin.py"
    assert f'    File "{trace}", line 1, in <module>' in errors
    assert "        import acme_missing_dependency" in errors
    assert "engines: acme" in section(report, "acme")  # the others still load
    assert "engines: naive" in section(report, "engines")
    assert "PluginLoadWarning" in result.stderr and "broken-plugin" in result.stderr


def test_plugins_says_what_was_blocked(fresh_plugins, monkeypatch, capsys):
    monkeypatch.setenv("DAGNET_BLOCK_PLUGINS", "cuda")

    status, report, _ = run_main(capsys, "plugins")

    assert status == 0
    assert "\n\nblocked by DAGNET_BLOCK_PLUGINS: dagnet 0.1.0 (plugin 'cuda')" in report
    assert "cuda  [" not in report


def test_plugins_with_autoload_off(fresh_plugins, monkeypatch, capsys):
    monkeypatch.setenv("DAGNET_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("DAGNET_PLUGINS", "dagnet_cpu.plugin")

    status, report, _ = run_main(capsys, "plugins")

    assert status == 0
    assert report.splitlines()[1] == "(autoload is off: DAGNET_DISABLE_PLUGIN_AUTOLOAD is set)"
    assert section(report, "dagnet_cpu.plugin").splitlines()[1:] == [
        "  from: DAGNET_PLUGINS", "  backends: cpu (cpu; available)"]
    assert "engines  [" not in report


def test_plugins_marks_a_name_another_plugin_overrode(sandbox, fresh_plugins, capsys):
    sandbox.install_engines("acme-engines", "1.2.0", "acme", "naive", override=True)

    status, report, _ = run_main(capsys, "plugins")

    assert status == 0
    assert ("  engines: naive (overridden by acme-engines 1.2.0 (plugin 'acme')), threaded, "
            "threaded_per_device") in section(report, "engines")
    assert "  engines: naive" in section(report, "acme")


def test_plugins_shows_the_subgraph_backends_a_graph_pass_serves(fresh_plugins, capsys):
    status, report, _ = run_main(capsys, "plugins")

    assert status == 0
    assert ("nchw16c_layout (subgraph backends MKLDNN, ONEDNN; every bind)"
            in section(report, "ops"))
    assert "default_subgraph (subgraph backends default, default_v2)" in section(report, "ops")


# -- dagnet config and the rest ----------------------------------------------------


def test_config_prints_every_key_and_its_current_value(fresh_plugins, monkeypatch, capsys):
    monkeypatch.setenv("DAGNET_ENGINE", "naive")
    monkeypatch.setenv("DAGNET_DISABLE_PLUGIN_AUTOLOAD", "1")

    status, out, _ = run_main(capsys, "config")

    assert status == 0
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()}
    assert set(rows) == set(dagnet.config.keys())
    assert rows["engine"] == "'naive'" and rows["autoload_plugins"] == "False"


def test_a_bad_setting_is_an_error_message_not_a_traceback(fresh_plugins, monkeypatch,
                                                           capsys):
    monkeypatch.setenv("DAGNET_AUTOLOAD_PLUGINS", "maybe")

    for command in ("plugins", "config"):
        status, _, err = run_main(capsys, command)
        assert status == 2
        assert err.startswith("dagnet: error: config key 'autoload_plugins' from environment "
                              "variable DAGNET_AUTOLOAD_PLUGINS is 'maybe'")


def test_version_and_usage(capsys):
    assert run_main(capsys, "--version")[:2] == (0, f"dagnet {dagnet.__version__}\n")
    status, _, err = run_main(capsys)
    assert status == 2 and "plugins" in err and "config" in err



def test_plugins_lists_the_graph_passes_and_which_are_off(fresh_plugins, monkeypatch, capsys):
    monkeypatch.setenv("DAGNET_DISABLED_GRAPH_PASSES", "fuse_conv")

    status, report, _ = run_main(capsys, "plugins")

    assert status == 0
    (line,) = [line for line in section(report, "ops").splitlines()
               if line.startswith("  graph_passes: ")]
    roles = "subgraph backends MKLDNN, ONEDNN; every bind"
    for name in ("eliminate_identity", "fold_batch_norm", "fuse_fully_connected",
                 "nchw16c_layout"):
        assert f"{name} ({roles})" in line
    assert f"fuse_conv ({roles}; off: disabled_graph_passes)" in line
