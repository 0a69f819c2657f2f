"""The ``dagnet`` command: ``plugins``, ``config``, ``ops``, ``check OP``, ``launch``,
``im2rec`` and ``onnx``."""

from __future__ import annotations

import argparse
import sys
import textwrap

from . import __version__, config, plugins
from ._errors import ConfigError

__all__ = ["main"]


def _plugins_report() -> tuple[str, bool]:
    from .executor import disabled_graph_passes

    switched_off = disabled_graph_passes()
    manager = plugins.manager()
    manager.load_all()
    lines = [f"dagnet {__version__}: plugins from the {plugins.ENTRY_POINT_GROUP!r} entry points"]
    if not config.get("autoload_plugins"):
        lines.append("(autoload is off: DAGNET_DISABLE_PLUGIN_AUTOLOAD is set)")
    for info in sorted(manager.plugins.values(), key=lambda i: i.name):
        lines.append("")
        lines.append(
            f"{info.name}  [{info.provider.distribution or 'no distribution'} "
            f"{info.provider.version or ''}]".replace(" ]", "]")
        )
        lines.append(f"  from: {info.source}")
        if not info.registered:
            lines.append("  registered: nothing")
        for kind, names in sorted(info.registered.items()):
            registry = getattr(manager, kind)
            described = []
            for name in names:
                registration = registry.registration(name)
                if registration.provider != info.provider:
                    described.append(f"{name} (overridden by {registration.provider})")
                elif kind == "backends":
                    backend = registration.value
                    reason = backend.unavailable_reason
                    state = "available" if reason is None else f"unavailable: {reason}"
                    described.append(f"{name} ({backend.device_type}; {state})")
                elif kind == "graph_passes":
                    roles = [f"subgraph backends {', '.join(b)}"
                             for b in [registry.backends_of(name)] if b]
                    roles += ["every bind"] if registry.runs_on_bind(name) else []
                    roles += ["off: disabled_graph_passes"] if name in switched_off else []
                    described.append(f"{name} ({'; '.join(roles)})")
                else:
                    described.append(name)
            shown = described[:40] + ([f"... ({len(names)} in all)"] if len(names) > 40 else [])
            lines.append(f"  {kind}: {', '.join(shown)}")
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


def _ops_report() -> str:
    from .operator import get_op, list_ops

    registry = plugins.ops()
    lines = []
    for name in list_ops():
        op = get_op(name)
        if op.is_backward:
            continue
        summary = (op.description.strip().splitlines() or [""])[0]
        lines.append(
            f"{name:<28} {registry.registration(name).provider.distribution or '?':<18} {summary}"
        )
    lines.append(f"({len(lines)} operators, backward operators not listed)")
    return "\n".join(lines)


def _check(names: list[str], max_examples: int | None) -> int:
    try:
        from .testing.op_suite import check_operator
    except ImportError as error:
        print(
            f"dagnet check needs the test extras ({error}); install them with "
            f"pip install 'dagnet[test]'",
            file=sys.stderr,
        )
        return 2
    failed = 0
    for name in names:
        try:
            check_operator(name, max_examples=max_examples)
        except AssertionError as error:
            failed += 1
            print(f"FAIL {name}: {error}")
        except Exception as error:  # an unknown name or a broken plugin: say so and go on
            failed += 1
            print(f"ERROR {name}: {type(error).__name__}: {error}")
        else:
            print(f"ok   {name}")
    return 1 if failed else 0


def _launch(args: argparse.Namespace) -> int:
    from .launcher import LaunchError, launch

    try:
        return launch(args.training_command, args.num_workers, args.scheduler,
                      args.kvstore_mode, args.timeout, num_servers=args.num_servers)
    except LaunchError as error:
        print(f"dagnet: error: {error}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dagnet`` console script."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["im2rec"]:  # its own parser, imported only when asked for (it loads Pillow)
        from .image.im2rec import main as im2rec_main

        return im2rec_main(argv[1:])
    if argv[:1] == ["onnx"]:  # its own parser too: dagnet onnx export|import ...
        from .onnx.command import main as onnx_main

        return onnx_main(argv[1:])
    parser = argparse.ArgumentParser(prog="dagnet", description="dagnet plugin and config tools")
    parser.add_argument("--version", action="version", version=f"dagnet {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "plugins",
        help="list plugins, what they registered, and load errors "
        "(exit status 1 when a plugin failed)",
    )
    commands.add_parser("config", help="show every configuration key and its current value")
    commands.add_parser("ops", help="list every operator with the distribution that provides it")
    check = commands.add_parser(
        "check",
        help="run the operator conformance suite on operators (every available backend and engine)",
    )
    check.add_argument("names", nargs="+", metavar="OP")
    check.add_argument(
        "--max-examples", type=int, default=None, help="hypothesis examples per backend and engine"
    )
    run = commands.add_parser(
        "launch",
        help="run a training command as N processes of a distributed job (dist_sync or "
        "dist_async KVStore) on a local Dask cluster or an existing one",
    )
    run.add_argument("-n", "--num-workers", type=int, required=True,
                     help="training processes to start")
    run.add_argument("--scheduler", default=None, metavar="ADDRESS",
                     help="join this Dask scheduler (tcp://host:8786) and run the processes on "
                     "its workers; default: a local cluster on 127.0.0.1")
    run.add_argument("-s", "--num-servers", type=int, default=1,
                     help="parameter servers (arrays of 1M elements or more are split over "
                     "them); default 1")
    run.add_argument("--kvstore-mode", choices=["sync", "async"], default="sync",
                     help="the parameter server's mode: sync for dist_sync, async for dist_async")
    run.add_argument("--timeout", type=float, default=5.0,
                     help="seconds without a heartbeat after which a worker counts as lost")
    run.add_argument("training_command", nargs=argparse.REMAINDER, metavar="COMMAND ...")
    commands.add_parser("im2rec", help="make image lists or pack images into RecordIO files "
                        "(dagnet im2rec --help)")
    commands.add_parser("onnx", help="export a saved model to ONNX, or import an ONNX model "
                        "(dagnet onnx export|import --help)")
    args = parser.parse_args(argv)
    try:
        if args.command == "launch":
            return _launch(args)
        if args.command == "ops":
            print(_ops_report())
            return 0
        if args.command == "check":
            return _check(args.names, args.max_examples)
        if args.command == "plugins":
            report, failed = _plugins_report()
            print(report)
            return 1 if failed else 0
        print(config.describe())
    except ConfigError as error:  # a bad DAGNET_* variable: say which, without a traceback
        parser.exit(2, f"dagnet: error: {error}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
