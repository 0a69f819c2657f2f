"""The ``dagnet`` command: ``dagnet plugins``, ``dagnet config``."""

from __future__ import annotations

import argparse
import sys
import textwrap

from . import __version__, config, plugins

__all__ = ["main"]


def _plugins_report() -> tuple[str, bool]:
    manager = plugins.manager()
    manager.load_all()
    lines = [f"dagnet {__version__}: plugins from the {plugins.ENTRY_POINT_GROUP!r} entry points"]
    if not config.get("autoload_plugins"):
        lines.append("(autoload is off: DAGNET_DISABLE_PLUGIN_AUTOLOAD is set)")
    for info in sorted(manager.plugins.values(), key=lambda i: i.name):
        lines.append("")
        lines.append(f"{info.name}  [{info.provider.distribution or 'no distribution'} "
                     f"{info.provider.version or ''}]".replace(" ]", "]"))
        lines.append(f"  from: {info.source}")
        if not info.registered:
            lines.append("  registered: nothing")
        for kind, names in sorted(info.registered.items()):
            if kind == "backends":
                described = []
                for name in names:
                    backend = manager.backends[name]
                    reason = backend.unavailable_reason
                    state = "available" if reason is None else f"unavailable: {reason}"
                    described.append(f"{name} ({backend.device_type}; {state})")
                lines.append(f"  backends: {', '.join(described)}")
            else:
                shown = ", ".join(names[:40]) + (f", ... ({len(names)} in all)" if len(names) > 40 else "")
                lines.append(f"  {kind}: {shown}")
    for blocked in manager.blocked:
        lines.append("")
        lines.append(f"blocked by DAGNET_BLOCK_PLUGINS: {blocked}")
    if manager.errors:
        lines.append("")
        lines.append(f"load errors ({len(manager.errors)}):")
        for error in manager.errors:
            lines.append(f"- {error.summary()}")
            lines.append(textwrap.indent(error.traceback.rstrip(), "    "))
    return "\n".join(lines), bool(manager.errors)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dagnet`` console script."""
    parser = argparse.ArgumentParser(prog="dagnet", description="dagnet plugin and config tools")
    parser.add_argument("--version", action="version", version=f"dagnet {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("plugins", help="list plugins, what they registered, and load errors "
                                        "(exit status 1 when a plugin failed)")
    commands.add_parser("config", help="show every configuration key and its current value")
    args = parser.parse_args(argv)
    if args.command == "plugins":
        report, failed = _plugins_report()
        print(report)
        return 1 if failed else 0
    print(config.describe())
    return 0


if __name__ == "__main__":
    sys.exit(main())
