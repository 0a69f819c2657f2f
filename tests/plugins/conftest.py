"""Fixtures for the plugin tests: a private site-packages holding real installed
distributions, fresh interpreters that see it, and a fresh in-process manager.

Discovery is only real in a new interpreter (entry points are read from the
files on ``sys.path``), so most checks run one through :class:`Sandbox`; cheap
ones use ``fresh_plugins``, which points this interpreter at the sandbox and
resets :mod:`dagnet.plugins`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dagnet import plugins
from dagnet.testing.distributions import (
    InstalledDistribution,
    install_distribution,
    subprocess_env,
)


def engines_plugin(*names: str, override: bool = False, aliases: tuple[str, ...] = (),
                   then_raise: str | None = None) -> str:
    """Source of a plugin module that registers a naive-engine subclass under each name.

    ``aliases`` go with the first name; ``then_raise`` is an expression raised
    after the adds (a registrar that breaks half way).
    """
    adds = [
        f"    engines.add({name!r}, _engine({name!r}), override={override!r}"
        + (f", aliases={aliases!r})" if i == 0 and aliases else ")")
        for i, name in enumerate(names)
    ]
    tail = [f"    raise {then_raise}"] if then_raise else []
    return "\n".join([
        "import dagnet",
        "from dagnet_engines.naive import NaiveEngine",
        "",
        "",
        "def _engine(name):",
        "    return type(name.title() + 'Engine', (NaiveEngine,), {'name': name})",
        "",
        "",
        "@dagnet.hookimpl",
        "def dagnet_register_engines(engines):",
        *adds,
        *tail,
        "",
    ])


class Sandbox:
    """A site-packages folder of test distributions and interpreters that see it."""

    engines_plugin = staticmethod(engines_plugin)

    def __init__(self, root: Path):
        self.root = root
        self.site = root / "site-packages"
        self.site.mkdir()

    def install(self, name: str, version: str = "1.0", **kwargs: Any) -> InstalledDistribution:
        """:func:`install_distribution` into this sandbox."""
        return install_distribution(self.site, name, version, **kwargs)

    def install_engines(self, name: str, version: str, plugin: str, *engines: str,
                        **options: Any) -> InstalledDistribution:
        """A distribution whose entry point ``plugin`` registers ``engines``."""
        module = name.replace("-", "_") + ".plugin"
        return self.install(name, version, modules={module: engines_plugin(*engines, **options)},
                            plugins={plugin: module})

    def command(self, argv: list[str], **variables: str | None) -> subprocess.CompletedProcess[str]:
        """Run ``argv`` seeing the sandbox; ``DAGNET_*`` comes from ``variables`` only."""
        return subprocess.run(
            argv, cwd=self.root, env=subprocess_env(self.site, **variables),
            capture_output=True, text=True, timeout=120,
        )

    def run(self, *args: str, **variables: str | None) -> subprocess.CompletedProcess[str]:
        """``python *args`` in a fresh interpreter."""
        return self.command([sys.executable, *args], **variables)

    def cli(self, *args: str, **variables: str | None) -> subprocess.CompletedProcess[str]:
        """The ``dagnet`` command (as ``python -m dagnet.cli``)."""
        return self.run("-m", "dagnet.cli", *args, **variables)

    def json(self, code: str, **variables: str | None) -> Any:
        """Run ``code``, which prints one JSON value last, and return that value."""
        result = self.run("-c", textwrap.dedent(code), **variables)
        assert result.returncode == 0, f"the script failed:\n{result.stdout}\n{result.stderr}"
        return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox(tmp_path)


@pytest.fixture
def fresh_plugins(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch):
    """``dagnet.plugins`` rediscovering from scratch, with the sandbox on ``sys.path``.

    Every ``DAGNET_*`` switch is cleared first; the sandbox's modules are
    forgotten and the manager reset again afterwards.
    """
    for key in list(os.environ):
        if key.startswith("DAGNET_") or key == "MXNET_ENGINE_TYPE":
            monkeypatch.delenv(key)
    monkeypatch.syspath_prepend(str(sandbox.site))
    plugins.reset()
    yield plugins
    plugins.reset()
    for name, module in list(sys.modules.items()):
        location = getattr(module, "__file__", None) or ""
        if location.startswith(str(sandbox.site)):
            del sys.modules[name]
