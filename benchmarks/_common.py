"""What the benchmark scripts share: machine facts, timing statistics, a plain table.

Standard library only at import, so a script can set environment variables
(BLAS thread counts) before anything here pulls in numpy.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence

__all__ = [
    "machine_info", "load_average", "print_header", "positive", "timed", "Stats",
    "format_table", "print_table", "blas_threads", "comparison_parser",
]


def machine_info() -> list[tuple[str, str]]:
    """Facts that decide the figures: cores, Python, numpy and its BLAS, the source, the load."""
    import numpy as np

    facts = [
        ("cpu count", str(os.cpu_count())),
        ("platform", platform.platform()),
        ("python", f"{platform.python_version()} ({platform.python_implementation()})"),
        ("numpy", np.__version__),
    ]
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        facts.append(("blas", f"{blas.get('name')} {blas.get('version')}"))
    except Exception:  # older numpy has no mode="dicts"; the fact is optional
        pass
    source = _source_revision()
    if source:
        facts.append(("dagnet source", source))
    load = load_average()
    if load:
        facts.append(("load average", f"{load} (1, 5, 15 min; other work on the machine)"))
    return facts


def load_average() -> str | None:
    """The 1, 5 and 15 minute load averages, where the platform has them."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return None


def _source_revision() -> str | None:
    """The checkout's commit, and whether it has local changes, when run from git."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here,
                              capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=here, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    changes = " + local changes" if dirty.returncode == 0 and dirty.stdout.strip() else ""
    return f"git {head.stdout.strip()}{changes}"


def print_header(title: str, extra: Sequence[tuple[str, str]] = ()) -> None:
    print(title)
    print("=" * len(title))
    facts = machine_info() + list(extra)
    width = max(len(name) for name, _ in facts)
    for name, value in facts:
        print(f"{name:<{width}}  {value}")
    print(f"{'command':<{width}}  {' '.join([os.path.basename(sys.executable)] + sys.argv)}")
    print()


def comparison_parser(doc: str, without_mxnet: str) -> argparse.ArgumentParser:
    """The command line of a script comparing dagnet with MXNet: its description and
    epilog from the script's docstring ``doc`` (first paragraph; from the third on),
    ``--mxnet-python`` (without it, ``without_mxnet``) and ``--repeat``."""
    parser = argparse.ArgumentParser(
        description=doc.split("\n\n")[0], epilog=doc.split("\n\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mxnet-python", metavar="PATH",
                        help=f"a python that has mxnet==1.9.1 (e.g. a virtualenv's "
                             f"bin/python); without it {without_mxnet}")
    parser.add_argument("--repeat", type=positive, default=5,
                        help="rounds; median and min over them (default 5)")
    return parser


def positive(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def timed(fn: Callable[[], object]) -> float:
    """Seconds ``fn()`` took, from a freshly collected heap.

    The cyclic collector stays on while timing: a user's program pays for it
    too, and turning it off would hide the cost of the objects a push allocates.
    """
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


class Stats:
    """Median and minimum of repeated samples."""

    def __init__(self, samples: Sequence[float]):
        if not samples:
            raise ValueError("Stats needs at least one sample")
        self.samples = list(samples)
        self.median = statistics.median(self.samples)
        self.min = min(self.samples)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]],
                 align: str | None = None) -> str:
    """A plain-text table; ``align`` has one ``<`` or ``>`` per column (default:
    first column left, the rest right)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    align = align or "<" + ">" * (len(headers) - 1)

    def line(row: list[str]) -> str:
        pairs = zip(row, align, widths, strict=True)
        return "  ".join(f"{c:{a}{w}}" for c, a, w in pairs).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule] + [line(row) for row in cells[1:]])


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]],
                align: str | None = None) -> None:
    print(title)
    print(format_table(headers, rows, align))
    print()


@contextlib.contextmanager
def blas_threads(threads: int) -> Iterator[None]:
    """This process's BLAS thread count for the duration of a ``with`` block (set with
    threadpoolctl: a worker process of another python sets its count by environment)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError as error:
        raise RuntimeError("dagnet's BLAS threads are set with threadpoolctl: "
                           "pip install threadpoolctl") from error
    limits = threadpool_limits(limits=threads, user_api="blas")
    try:
        yield
    finally:
        limits.restore_original_limits()
