"""Build a real installed distribution in a directory, as pip leaves one after installing a wheel.

A plugin author can check discovery end to end, entry points included,
without building a wheel or touching the environment::

    import subprocess, sys
    from dagnet.testing.distributions import install_distribution, subprocess_env

    def test_dagnet_finds_my_engine(tmp_path):
        install_distribution(
            tmp_path, "acme-engines", "1.2.0",
            modules={"acme_engines.plugin": '''
                import dagnet
                from dagnet_engines.naive import NaiveEngine

                @dagnet.hookimpl
                def dagnet_register_engines(engines):
                    engines.add("acme", NaiveEngine)
            '''},
            plugins={"acme": "acme_engines.plugin"},
        )
        out = subprocess.run([sys.executable, "-m", "dagnet.cli", "plugins"],
                             env=subprocess_env(tmp_path), capture_output=True, text=True)
        assert "acme  [acme-engines 1.2.0]" in out.stdout

``tmp_path`` then holds ``acme_engines/__init__.py``, ``acme_engines/plugin.py``
and ``acme_engines-1.2.0.dist-info/`` with ``METADATA``, ``entry_points.txt``,
``INSTALLER`` and ``RECORD``.  Once the directory is on ``sys.path`` (through
``PYTHONPATH`` in a subprocess, or ``sys.path`` and
:func:`dagnet.plugins.reset` in this one), ``importlib.metadata`` finds the
distribution and its entry points exactly as it finds a pip-installed one.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import os
import re
import shutil
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["InstalledDistribution", "install_distribution", "subprocess_env"]

_ISOLATING_PREFIXES = ("DAGNET_", "MXNET_ENGINE_TYPE")


@dataclass(frozen=True)
class InstalledDistribution:
    """A distribution written by :func:`install_distribution`."""

    name: str
    version: str
    site_dir: Path
    dist_info: Path
    files: tuple[Path, ...]
    """Every file written, the ``dist-info`` ones included, as RECORD lists them."""

    def module_path(self, module: str) -> Path:
        """The file that holds ``module`` (``acme.plugin`` -> ``.../acme/plugin.py``)."""
        relative = module.replace(".", "/")
        package = self.site_dir / relative / "__init__.py"
        return package if package in self.files else self.site_dir / f"{relative}.py"

    def uninstall(self) -> None:
        """Remove what RECORD lists, and the folders that leaves empty, as pip uninstall does."""
        folders = set()
        for path in self.files:
            path.unlink(missing_ok=True)
            folders.update(p for p in path.parents if self.site_dir in p.parents)
        for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
            shutil.rmtree(folder / "__pycache__", ignore_errors=True)
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        importlib.invalidate_caches()


def _normalize(name: str) -> str:
    """The file-name form of a project name (binary distribution format)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode("ascii")


def _module_files(modules: Mapping[str, str]) -> dict[str, str]:
    """Map dotted module names to file paths; a name with submodules becomes a package."""
    for module in modules:
        if not all(part.isidentifier() for part in module.split(".")):
            raise ValueError(f"{module!r} is not a dotted module name such as 'acme.plugin'")
    packages = {m.rsplit(".", i)[0] for m in modules for i in range(1, m.count(".") + 1)}
    files: dict[str, str] = {}
    for package in sorted(packages):
        files[package.replace(".", "/") + "/__init__.py"] = ""
    for module, source in modules.items():
        stem = module.replace(".", "/")
        path = f"{stem}/__init__.py" if module in packages else f"{stem}.py"
        files[path] = textwrap.dedent(source).lstrip("\n")
    return files


def _entry_points_text(groups: Mapping[str, Mapping[str, str]]) -> str:
    sections = []
    for group, entries in groups.items():
        lines = [f"[{group}]"] + [f"{name} = {value}" for name, value in entries.items()]
        sections.append("\n".join(lines) + "\n")
    return "\n".join(sections)


def install_distribution(
    site_dir: str | os.PathLike[str],
    name: str,
    version: str = "1.0",
    *,
    modules: Mapping[str, str] | None = None,
    plugins: Mapping[str, str] | None = None,
    entry_points: Mapping[str, Mapping[str, str]] | None = None,
    requires: Iterable[str] = (),
    metadata: Mapping[str, str] | None = None,
) -> InstalledDistribution:
    """Write the files of an installed distribution into ``site_dir``.

    - ``modules``: dotted module name -> source (dedented).  Parent packages
      get an empty ``__init__.py`` unless given; a name that has submodules
      is written as a package.
    - ``plugins``: entry-point name -> ``module`` or ``module:attribute`` in
      the ``dagnet`` group (a shorthand for ``entry_points={"dagnet": ...}``).
    - ``entry_points``: any other groups, e.g. ``{"pytest11": {...}}``.
    - ``requires``: ``Requires-Dist`` lines; ``metadata``: extra METADATA
      fields (``{"Summary": ...}``), or ``{"Name": ""}`` to leave one out.

    Raises :class:`FileExistsError` if any file is already there: call
    :meth:`InstalledDistribution.uninstall` first, as pip replaces a version.
    """
    site = Path(site_dir)
    site.mkdir(parents=True, exist_ok=True)
    dist_info = f"{_normalize(name)}-{version.replace('-', '_')}.dist-info"

    fields = {"Metadata-Version": "2.1", "Name": name, "Version": version}
    fields.update(metadata or {})
    lines = [f"{key}: {value}" for key, value in fields.items() if value]
    lines += [f"Requires-Dist: {requirement}" for requirement in requires]
    groups = dict(entry_points or {})
    if plugins:
        groups["dagnet"] = {**groups.get("dagnet", {}), **plugins}

    contents = _module_files(modules or {})
    contents[f"{dist_info}/METADATA"] = "\n".join(lines) + "\n"
    contents[f"{dist_info}/INSTALLER"] = "dagnet.testing\n"
    if groups:
        contents[f"{dist_info}/entry_points.txt"] = _entry_points_text(groups)

    existing = [path for path in contents if (site / path).exists()]
    existing += [f"{dist_info}/RECORD"] if (site / dist_info / "RECORD").exists() else []
    if existing:
        raise FileExistsError(
            f"cannot install {name} {version} into {site}: {', '.join(existing)} already "
            f"exist; uninstall the earlier distribution first"
        )

    record = []
    for relative, text in contents.items():
        data = text.encode("utf-8")
        target = site / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        record.append(f"{relative},{_record_hash(data)},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    (site / dist_info / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")

    # A running interpreter caches directory listings; without this it may not
    # see files written after it last looked at ``site_dir``.
    importlib.invalidate_caches()
    files = tuple(site / relative for relative in [*contents, f"{dist_info}/RECORD"])
    return InstalledDistribution(name, version, site, site / dist_info, files)


def subprocess_env(
    *site_dirs: str | os.PathLike[str],
    base: Mapping[str, str] | None = None,
    isolate: bool = True,
    **variables: str | None,
) -> dict[str, str]:
    """An environment for a subprocess that sees the distributions in ``site_dirs``.

    ``site_dirs`` go first on ``PYTHONPATH``.  With ``isolate`` (the default)
    the ``DAGNET_*`` and ``MXNET_ENGINE_TYPE`` variables of ``base`` (default
    ``os.environ``) are dropped, so only ``variables`` set dagnet's switches;
    a variable given as None is removed.
    """
    env = dict(os.environ if base is None else base)
    if isolate:
        env = {k: v for k, v in env.items() if not k.startswith(_ISOLATING_PREFIXES)}
    paths = [os.fspath(d) for d in site_dirs]
    if env.get("PYTHONPATH"):
        paths.append(env["PYTHONPATH"])
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    for key, value in variables.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env
